import type { Kysely } from 'kysely';
import type { RequestOrigin } from '../audit/types.js';
import type { UserProfile } from '../auth/types.js';
import type { DynamicDatabase } from '../db/schema.js';
import { errors, MaximoError } from '../errors.js';
import type { ObjectMeta, StructureNode } from '../metadata/registry.js';
import { deleteMatching, deleteUniqueIds, lockMatching, lockUniqueIds } from './batch-delete-repository.js';
import { bindsAsArrays } from './batch-repository.js';
import type { ColumnLimits } from './column-limits.js';
import type { Row } from './repository.js';
import { inSavepoint } from './transaction-repository.js';
import type { StoredValue } from './values.js';
import type { ObserverEntry, RecordWrite, WriteRules } from './write-extensions.js';

/**
 * Deletions of a batch (src/oslc/README.md, "Batched writes"), set-wise: consecutive deletions of stored records of
 * one structure wait, then are removed together with a fixed number of statements per table of the structure (lock
 * the roots, per child collection lock its rows of all those parents, delete deepest first), whatever the number of
 * records. Write rules and observers see every deleted row as the per-record path shows it to them.
 */

/** What a deletion shares with the batch it belongs to (the batch writer's unit provides it). */
export interface DeletionUnit {
  db: Kysely<DynamicDatabase>;
  limits: ColumnLimits;
  user: UserProfile;
  origin: RequestOrigin | undefined;
  observers: readonly ObserverEntry[];
  writeRules: ReadonlyMap<string, WriteRules>;
  written: Set<string>;
  /** The per-record deletion of the same transaction, for structures the set-wise path does not cover. */
  writer: { remove(node: StructureNode, uniqueId: number): Promise<void> };
}

/** Records deleted together at most: bounds the arrays bound to one statement and the rows held in memory. */
const DELETIONS_PER_FLUSH = 1000;

/** One deleted row, with the refusal of the record it belongs to (a child row's is its root record's). */
interface Owned {
  row: Row;
  refuse: (error: MaximoError) => MaximoError;
}

interface QueuedDeletion {
  node: StructureNode;
  /** The stored row as the batch read it. */
  row: Row;
  uniqueId: number;
  refuse: (error: MaximoError) => MaximoError;
}

export class BatchDelete {
  private queued: QueuedDeletion[] = [];
  /** Per structure node: whether every table below it binds as arrays (else its records go one by one). */
  private readonly covered = new Map<StructureNode, boolean>();

  constructor(private readonly unit: DeletionUnit) {}

  /**
   * Deletes the stored record `row` at the root of `node`, now or with the next `flush`: the caller flushes before
   * anything that could see the difference (another record, the end of the batch).
   */
  async queue(node: StructureNode, row: Row, refuse: QueuedDeletion['refuse']): Promise<void> {
    if (this.queued.length > 0 && this.queued[0]!.node !== node) await this.flush();
    const entry = { node, row, uniqueId: Number(row[node.object.uniqueId]), refuse };
    if (!this.covers(node)) {
      await removeOne(this.unit, entry);
      return;
    }
    this.queued.push(entry);
    if (this.queued.length >= DELETIONS_PER_FLUSH) await this.flush();
  }

  /**
   * Deletes the waiting records. A database error (a row still referenced) undoes the set-wise attempt and the
   * records are deleted one by one, so that the refusal names the record as the per-record path names it.
   */
  async flush(): Promise<void> {
    if (this.queued.length === 0) return;
    const batch = this.queued;
    this.queued = [];
    try {
      await inSavepoint(this.unit.db, () => this.removeAll(batch));
    } catch (error) {
      if (error instanceof MaximoError) throw error;
      for (const entry of batch) await removeOne(this.unit, entry);
    }
  }

  /**
   * The records' child collections, then the records. Only a `beforeDelete` rule needs the records locked and read
   * before anything is deleted; otherwise the rows the batch read give the join values, and the delete answers the
   * rows as they were for the observers (one statement fewer per flush), or only their keys when no observer takes
   * part: the rows the batch read are then what the missing check needs.
   */
  private async removeAll(batch: readonly QueuedDeletion[]): Promise<void> {
    const node = batch[0]!.node;
    const object = node.object;
    const { db, limits } = this.unit;
    const ruled = this.unit.writeRules.get(object.name)?.beforeDelete !== undefined;
    const roots = ruled ? await this.lockRoots(object, batch) : batch;
    const removed = new Set(roots.map(({ row }) => rowText(object, row)));
    await this.beforeDelete(object, roots);
    await this.removeChildren(node, roots, removed);
    const deleted = await deleteUniqueIds(
      db,
      object,
      limits,
      batch.map((entry) => entry.uniqueId),
      this.observes(object) ? 'rows' : 'keys',
    );
    const byId = new Map(deleted.map((row) => [Number(row[object.uniqueId]), row]));
    const gone = batch.map((entry) => {
      const row = byId.get(entry.uniqueId);
      if (!row) throw entry.refuse(errors.resourceNotFound(object.name, String(entry.uniqueId)));
      return { row, refuse: entry.refuse };
    });
    await this.observe(object, gone);
  }

  /** The records locked for the rest of the transaction, as they are now. */
  private async lockRoots(object: ObjectMeta, batch: readonly QueuedDeletion[]): Promise<Owned[]> {
    const { db, limits } = this.unit;
    const uniqueIds = batch.map((entry) => entry.uniqueId);
    const rows = await lockUniqueIds(db, object, limits, uniqueIds);
    const byId = new Map(rows.map((row) => [Number(row[object.uniqueId]), row]));
    return batch.map((entry) => {
      const row = byId.get(entry.uniqueId);
      if (!row) throw entry.refuse(errors.resourceNotFound(object.name, String(entry.uniqueId)));
      return { row, refuse: entry.refuse };
    });
  }

  /**
   * The rows of each child collection of these parents, deepest first, one statement per table (two when the rows
   * are needed before they go: rules, children of their own), each child's observers run while its parent is still
   * there, as on the per-record path.
   */
  private async removeChildren(
    node: StructureNode,
    parents: readonly Owned[],
    removed: Set<string>,
  ): Promise<void> {
    const { db, limits } = this.unit;
    for (const child of node.children) {
      const object = child.object;
      const owners = ownersOf(child, parents);
      const columns = child.on.map(([, childAttribute]) => childAttribute);
      const tuples = [...owners.values()].map(({ tuple }) => tuple);
      const owned = (row: Row): Owned => ({
        row,
        refuse:
          owners.get(tupleText(columns.map((column) => row[column] ?? null)))?.refuse ?? parents[0]!.refuse,
      });
      if (this.deletesUnread(child, removed)) {
        const answer = this.observes(object) ? 'rows' : 'nothing';
        const rows = await deleteMatching(db, object, limits, columns, tuples, answer, child.nullSafe);
        await this.observe(object, rows.map(owned));
        continue;
      }
      // A row already deleted with this batch (a child that is also a record of it) is deleted once.
      const rows = (await lockMatching(db, object, limits, columns, tuples, child.nullSafe)).filter(
        (row) => !removed.has(rowText(object, row)),
      );
      if (rows.length === 0) continue;
      for (const row of rows) removed.add(rowText(object, row));
      await this.beforeDelete(object, rows.map(owned));
      await this.removeChildren(child, rows.map(owned), removed);
      await deleteUniqueIds(
        db,
        object,
        limits,
        rows.map((row) => Number(row[object.uniqueId])),
        'nothing',
      );
      await this.observe(object, rows.map(owned));
    }
  }

  /**
   * Whether a child collection can be deleted without reading it first: no rule, no children of its own, and a table
   * nothing else the batch deletes is in (whose rows it must not delete twice).
   */
  private deletesUnread(child: StructureNode, removed: ReadonlySet<string>): boolean {
    if (child.children.length > 0 || this.unit.writeRules.get(child.object.name)?.beforeDelete) return false;
    const prefix = `${child.object.table}\u0000`;
    for (const text of removed) if (text.startsWith(prefix)) return false;
    return true;
  }

  /** The object's `beforeDelete` rule, per row, as the per-record path calls it. */
  private async beforeDelete(object: ObjectMeta, rows: readonly Owned[]): Promise<void> {
    const rule = this.unit.writeRules.get(object.name)?.beforeDelete;
    if (!rule) return;
    const { db, user, origin } = this.unit;
    for (const { row, refuse } of rows) {
      await attributed(refuse, () => rule({ db, object, user, origin, values: {}, before: row }));
    }
  }

  /** Whether any observer takes part in deletions of `object` (then a delete must answer the rows it removed). */
  private observes(object: ObjectMeta): boolean {
    return this.unit.observers.some(({ takesPart }) => takesPart(object, 'delete'));
  }

  private async observe(object: ObjectMeta, rows: readonly Owned[]): Promise<void> {
    this.unit.written.add(object.name);
    const observers = this.unit.observers.filter(({ takesPart }) => takesPart(object, 'delete'));
    if (observers.length === 0) return;
    for (const { row, refuse } of rows) {
      const write: RecordWrite = {
        object,
        operation: 'delete',
        uniqueId: Number(row[object.uniqueId]),
        before: row,
        after: undefined,
        user: this.unit.user,
        origin: this.unit.origin,
      };
      for (const { observer } of observers) await attributed(refuse, () => observer(this.unit.db, write));
    }
  }

  /** Whether every object of the structure below `node` binds its columns as arrays (batch-repository.ts). */
  private covers(node: StructureNode): boolean {
    let covered = this.covered.get(node);
    if (covered === undefined) {
      covered =
        bindsAsArrays(this.unit.limits, node.object) && node.children.every((child) => this.covers(child));
      this.covered.set(node, covered);
    }
    return covered;
  }
}

/** The parents' join values for a child collection, each with the refusal of the first parent that has them. */
function ownersOf(
  child: StructureNode,
  parents: readonly Owned[],
): Map<string, { tuple: StoredValue[]; refuse: Owned['refuse'] }> {
  const owners = new Map<string, { tuple: StoredValue[]; refuse: Owned['refuse'] }>();
  for (const parent of parents) {
    const tuple = child.on.map(([parentAttribute]) => parent.row[parentAttribute] ?? null);
    const text = tupleText(tuple);
    if (!owners.has(text)) owners.set(text, { tuple, refuse: parent.refuse });
  }
  return owners;
}

/** The per-record deletion of one record, its refusal named. */
async function removeOne(unit: DeletionUnit, entry: QueuedDeletion): Promise<void> {
  await attributed(entry.refuse, () => unit.writer.remove(entry.node, entry.uniqueId));
}

async function attributed(refuse: Owned['refuse'], work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (error instanceof MaximoError) throw refuse(error);
    throw error;
  }
}

const plain = (value: StoredValue): string | number | boolean | null =>
  value instanceof Date ? value.toISOString() : value;

/** Join values as text: equal for a parent's values and its children's (numbers and dates compared as text). */
const tupleText = (values: readonly StoredValue[]): string =>
  JSON.stringify(values.map((value) => (value === null ? null : String(plain(value)))));

const rowText = (object: ObjectMeta, row: Row): string =>
  `${object.table}\u0000${String(row[object.uniqueId])}`;
