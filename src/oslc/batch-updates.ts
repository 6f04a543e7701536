import type { Kysely } from 'kysely';
import type { RequestOrigin } from '../audit/types.js';
import type { UserProfile } from '../auth/types.js';
import type { DynamicDatabase } from '../db/schema.js';
import { MaximoError } from '../errors.js';
import type { MetadataRegistry, ObjectMeta, StructureNode } from '../metadata/registry.js';
import { insertRows, updateRows } from './batch-repository.js';
import type { ColumnLimits } from './column-limits.js';
import type { Row } from './repository.js';
import { statusHistoryRow } from './stamps.js';
import type { ObserverEntry, RecordWrite } from './write-extensions.js';

/*
 * The multi-row updates of the batch writer (src/oslc/README.md, "Batched writes"): changes of stored records,
 * checked and stamped one by one as the per-record update checks them, written a statement per group of records
 * that set the same columns, then per record what follows an update on the per-record path: the status history
 * row when the status changed (batched too) and the write observers.
 */

/** What the updates share with the batch's write unit (src/oslc/batch-writer.ts, `BatchUnit`). */
export interface UpdateUnit {
  db: Kysely<DynamicDatabase>;
  metadata: MetadataRegistry;
  limits: ColumnLimits;
  user: UserProfile;
  origin: RequestOrigin | undefined;
  now: Date;
  observers: readonly ObserverEntry[];
  written: Set<string>;
}

/** A change of a stored record, checked and stamped, waiting for its multi-row update. */
export interface PendingUpdate {
  node: StructureNode;
  body: Record<string, unknown>;
  /** The columns it sets (stamps included). */
  values: Row;
  /** The stored row before the change. */
  before: Row;
  refuse: (error: MaximoError) => MaximoError;
}

/**
 * Writes the pending changes: grouped by the columns they set, one statement per group. A refusal after the
 * statement (an observer's) is attributed to its record; in a trial it was reported and the writes go on.
 */
export async function writeUpdates(
  unit: UpdateUnit,
  updates: readonly PendingUpdate[],
  attributed: WeakSet<MaximoError>,
  trial: boolean,
): Promise<void> {
  const groups = new Map<string, PendingUpdate[]>();
  for (const update of updates) {
    const shape = `${update.node.object.name}\u0000${Object.keys(update.values).sort().join(',')}`;
    groups.set(shape, [...(groups.get(shape) ?? []), update]);
  }
  for (const group of groups.values()) {
    const object = group[0]!.node.object;
    const columns = Object.keys(group[0]!.values).sort();
    const rows = await updateRows(
      unit.db,
      object,
      unit.limits,
      columns,
      group.map((update) => ({ uniqueId: Number(update.before[object.uniqueId]), values: update.values })),
    );
    unit.written.add(object.name);
    const byId = new Map(rows.map((row) => [Number(row[object.uniqueId]), row]));
    const changed = group.map((update) => {
      const after = byId.get(Number(update.before[object.uniqueId]));
      if (!after)
        throw new Error(`A batched update of ${object.name} answered no row for a record it was given`);
      return { update, after };
    });
    await recordStatuses(unit, object, changed);
    for (const { update, after } of changed) {
      try {
        await observe(unit, object, update.before, after);
      } catch (error) {
        if (!(error instanceof MaximoError)) throw error;
        const refusal = attributed.has(error) ? error : update.refuse(error);
        if (!trial) throw refusal;
      }
    }
  }
}

/** The status history rows of the changed records whose status changed (as the per-record update writes them). */
async function recordStatuses(
  unit: UpdateUnit,
  object: ObjectMeta,
  changed: ReadonlyArray<{ update: PendingUpdate; after: Row }>,
): Promise<void> {
  const historyName = object.def.statusHistory;
  if (!historyName) return;
  const history = unit.metadata.object(historyName);
  const stamp = { now: unit.now, userid: unit.user.userid };
  const entries = changed
    .filter(({ update, after }) => after.status !== undefined && after.status !== update.before.status)
    .map(({ after }) => statusHistoryRow(history, after, stamp, null));
  if (entries.length === 0) return;
  await insertRows(unit.db, history, unit.limits, entries, false);
  unit.written.add(history.name);
}

async function observe(unit: UpdateUnit, object: ObjectMeta, before: Row, after: Row): Promise<void> {
  const write: RecordWrite = {
    object,
    operation: 'update',
    uniqueId: Number(after[object.uniqueId]),
    before,
    after,
    user: unit.user,
    origin: unit.origin,
  };
  for (const { observer, takesPart } of unit.observers)
    if (takesPart(object, 'update')) await observer(unit.db, write);
}
