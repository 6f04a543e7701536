import type { MigrationContext } from '../context.js';
import { PACKAGE_STATUS } from '../packages.js';
import * as repository from '../repository.js';
import type { PackageRow } from '../repository.js';

/** How each deploy that started writing ended (the deploy counter of the metrics). */
export type DeployResultObserver = (result: 'deployed' | 'failed') => void;

/**
 * The progress of deploys, while their transactions are open (docs/migration.md, "Progress"): kept in memory for
 * this process (on PGlite the transaction holds the only connection, so no other reader reaches the database
 * meanwhile), and on PostgreSQL also written to the package row by a short update of its own on another pooled
 * connection, for readers in every process. The deploy locks the package with an advisory lock rather than its
 * row, so that update never waits for the deploy; it only applies while the package is still in the status its
 * operation began with (DEPLOY_INPROGRESS, or BACKOUT_INPROGRESS for a back-out).
 */
export class DeployProgress {
  /** Packages this process is deploying, as read when their deploy began, with the progress since. */
  private readonly deploying = new Map<number, PackageRow>();
  private observer: ((dmpackageid: number) => Promise<void>) | undefined;
  /**
   * Per package, the write of its progress under way on another connection, and the latest text still to be written
   * after it: a deploy goes on while its progress is written (docs/migration.md, "Progress"), and a write that falls
   * behind is replaced by the newest text, never queued.
   */
  private readonly writes = new Map<number, { running: Promise<void>; next: string | undefined }>();

  constructor(private readonly context: Pick<MigrationContext, 'db' | 'storage'>) {}

  /** Calls `observer` each time a deploy's progress moved on, before the deploy goes on (tests read it then). */
  observe(observer: (dmpackageid: number) => Promise<void>): void {
    this.observer = observer;
  }

  began(started: PackageRow): void {
    this.deploying.set(started.dmpackageid, started);
  }

  ended(dmpackageid: number): void {
    this.deploying.delete(dmpackageid);
    const write = this.writes.get(dmpackageid);
    if (write) write.next = undefined;
  }

  /** `ended`, once the progress write still under way (if any) has ended: nothing is written after this. */
  async finished(dmpackageid: number): Promise<void> {
    this.ended(dmpackageid);
    await this.writes.get(dmpackageid)?.running;
  }

  /** The package row of a deploy this process is running, with its progress; none when it runs none. */
  current(dmpackageid: number): PackageRow | undefined {
    return this.deploying.get(dmpackageid);
  }

  async report(dmpackageid: number, progressstatus: string): Promise<void> {
    const row = this.deploying.get(dmpackageid);
    if (row) this.deploying.set(dmpackageid, { ...row, progressstatus });
    const { storage } = this.context;
    if (storage.kind === 'postgres' && (storage.poolUsage?.().max ?? 1) > 1) {
      const written = this.write(dmpackageid, progressstatus);
      // An observer (a test) reads the row itself before the deploy goes on.
      if (this.observer) await written;
    }
    await this.observer?.(dmpackageid);
  }

  /** Writes the text to the package row, or leaves it for the write under way to take up when that ends. */
  private write(dmpackageid: number, progressstatus: string): Promise<void> {
    const pending = this.writes.get(dmpackageid);
    if (pending) {
      pending.next = progressstatus;
      return pending.running;
    }
    const status = this.deploying.get(dmpackageid)?.status ?? PACKAGE_STATUS.deployInProgress;
    const state: { running: Promise<void>; next: string | undefined } = {
      running: Promise.resolve(),
      next: progressstatus,
    };
    state.running = (async () => {
      while (state.next !== undefined) {
        const text = state.next;
        state.next = undefined;
        try {
          await repository.updateProgress(this.context.db, dmpackageid, status, text);
        } catch {
          // Progress is a courtesy to readers: a busy or lost connection must not fail the deploy.
        }
      }
      this.writes.delete(dmpackageid);
    })();
    this.writes.set(dmpackageid, state);
    return state.running;
  }
}
