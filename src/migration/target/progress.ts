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
 * row, so that update never waits for the deploy; it only applies while the package is DEPLOY_INPROGRESS.
 */
export class DeployProgress {
  /** Packages this process is deploying, as read when their deploy began, with the progress since. */
  private readonly deploying = new Map<number, PackageRow>();
  private observer: ((dmpackageid: number) => Promise<void>) | undefined;

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
      try {
        await repository.updateProgress(
          this.context.db,
          dmpackageid,
          PACKAGE_STATUS.deployInProgress,
          progressstatus,
        );
      } catch {
        // Progress is a courtesy to readers: a busy or lost connection must not fail the deploy.
      }
    }
    await this.observer?.(dmpackageid);
  }
}
