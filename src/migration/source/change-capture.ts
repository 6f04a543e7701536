import { EVERYTHING_CHANGED } from '../../db/change-bus.js';
import { typedView } from '../../db/schema.js';
import type { StoredValue } from '../../oslc/values.js';
import type { ObservedWrites, WriteObserver } from '../../oslc/write-extensions.js';
import type { MigrationContext } from '../context.js';
import { childDriftAttributes, childRowsOf, driftAttributes, recordHash } from '../drift.js';
import { jsonValue } from '../packages.js';
import * as repository from '../repository.js';
import type { Db } from '../repository.js';
import { rootRowsOf, trackingMapOf, type TrackingMap } from './tracking.js';

/** Objects whose writes change which records are tracked. */
export const DEFINITION_OBJECTS: ReadonlySet<string> = new Set(['DMPACKAGEDEF', 'DMPKGDEFCONTENT']);

/**
 * CHANGE tracking: the write observer that records each write of a record an active CHANGE definition covers, with
 * the cache of what they cover (dropped when the change bus says a definition changed).
 */
export class ChangeCapture {
  /** Object name → where it sits in the structures active CHANGE definitions cover (root or child). */
  private tracking: TrackingMap | undefined;

  constructor(private readonly context: Pick<MigrationContext, 'storage' | 'resources'>) {}

  /** Listens for changes of definitions (the tracking cache). */
  async start(): Promise<void> {
    await this.context.storage.bus.listen('object', (objectName) => {
      if (DEFINITION_OBJECTS.has(objectName) || objectName === EVERYTHING_CHANGED) this.tracking = undefined;
    });
  }

  /**
   * The writes CHANGE tracking may record: of an object some active definition covers, or of any while the
   * definitions are not known (the write path runs the observer only for these).
   */
  readonly writes: ObservedWrites = (object) => !this.tracking || this.tracking.has(object.name);

  /**
   * The write observer: one row per write of a covered record, in the writer's transaction. A write of a child
   * collection's row marks its root record as written; each row keeps the root's drift hash before the write
   * (docs/migration.md, "Drift guard").
   */
  readonly observer: WriteObserver = async (transaction, write) => {
    const places = (await this.trackingMap(typedView(transaction), write.object.name)).get(write.object.name);
    if (!places) return;
    const row = write.after ?? write.before;
    if (!row) return;
    for (const { pkgdefname, structure, path } of places) {
      const root = structure.root.object;
      const names = driftAttributes(root);
      const record = (
        operation: string,
        rootRow: Readonly<Record<string, StoredValue>>,
        before: string | null,
      ) =>
        repository.recordChange(
          typedView(transaction),
          pkgdefname,
          structure.name,
          operation,
          JSON.stringify(root.keys.map((key) => jsonValue(rootRow[key] ?? null))),
          before,
        );
      const children = childDriftAttributes(structure);
      if (path.length === 1) {
        // The root is written before its children: they are still as they were.
        const before = write.before
          ? recordHash(
              structure,
              names,
              children,
              write.before,
              await childRowsOf(transaction, structure, children, write.before),
            )
          : null;
        await record(write.operation === 'delete' ? 'delete' : 'write', row, before);
        continue;
      }
      for (const rootRow of await rootRowsOf(transaction, path, row)) {
        const rows = await childRowsOf(transaction, structure, children, rootRow);
        if (path.length === 2) {
          // The record as it was before this child's write: the row put back as it was, or taken out if new.
          const uniqueId = write.object.uniqueId;
          const name = path[1]!.name;
          const others = (rows.get(name) ?? []).filter(
            (child) => String(child[uniqueId]) !== String(write.uniqueId),
          );
          rows.set(name, write.before ? [...others, write.before] : others);
        }
        await record('write', rootRow, recordHash(structure, names, children, rootRow, rows));
      }
    }
  };

  /**
   * Object → where active CHANGE definitions cover it. Read through the writer's transaction (on the embedded
   * database it holds the only connection), and kept until the change bus says a definition changed; not kept when
   * the transaction itself writes definitions, as it may yet roll back.
   */
  private async trackingMap(transaction: Db, objectName: string): Promise<TrackingMap> {
    if (this.tracking) return this.tracking;
    const rows = await repository.activeChangeDefinitions(transaction);
    const map = trackingMapOf(
      rows.flatMap((row) => {
        const structure = this.context.resources.findObjectStructure(row.objectstructure);
        return structure ? [{ pkgdefname: row.pkgdefname, structure }] : [];
      }),
    );
    if (!DEFINITION_OBJECTS.has(objectName)) this.tracking = map;
    return map;
  }
}
