import { setImmediate } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { RequestOrigin } from '../audit/types.js';
import type { UserProfile } from '../auth/types.js';
import type { DynamicDatabase } from '../db/schema.js';
import type { DomainSnapshot } from '../domains/domain-cache.js';
import { MaximoError } from '../errors.js';
import type { MetadataRegistry, ObjectMeta, StructureNode } from '../metadata/registry.js';
import {
  analyzeTable,
  bindsAsArrays,
  findKeyed,
  knowsColumns,
  insertRows,
  plannedRows,
  type StatusHistory,
} from './batch-repository.js';
import { childrenUnchanged, storedChildren, type StoredChildren } from './batch-unchanged.js';
import { writeUpdates, type PendingUpdate } from './batch-updates.js';
import { BatchDelete } from './batch-delete.js';
import { keyText, ReferenceMemo } from './batch-references.js';
import type { ColumnLimits } from './column-limits.js';
import { findByKeys, type Row } from './repository.js';
import { stampWrite } from './stamps.js';
import { applyDefaults, convertInput, sameValue as sameAsStored, validateRecord } from './validation.js';
import type { StoredValue } from './values.js';
import { giveTurnWhenDue } from '../util/event-loop-turns.js';
import type { ObserverEntry, RecordWrite, WriteRules } from './write-extensions.js';

/**
 * The batch facility of the write path (src/oslc/README.md, "Batched writes"): many records of one object
 * structure, each validated as a single write validates it, but matched by key with one read per batch and added
 * with multi-row inserts. What the batch does not cover goes through the same transaction's per-record writer.
 */

/**
 * The per-record writes of the transaction a batch belongs to, for what the batch does not cover: the write unit
 * (src/oslc/write-unit.ts) provides them, and depends on this module, never the other way round.
 */
export interface RecordWriter {
  insert(node: StructureNode, body: Record<string, unknown>, inherited: Row): Promise<Row>;
  update(
    node: StructureNode,
    uniqueId: number,
    body: Record<string, unknown>,
    merge: boolean,
    checkRowstamp: boolean,
  ): Promise<void>;
  remove(node: StructureNode, uniqueId: number): Promise<void>;
}

/** What a batch shares with the write unit it belongs to: the transaction and everything a write consults. */
export interface BatchUnit {
  db: Kysely<DynamicDatabase>;
  metadata: MetadataRegistry;
  domains: DomainSnapshot;
  limits: ColumnLimits;
  user: UserProfile;
  origin: RequestOrigin | undefined;
  now: Date;
  observers: readonly ObserverEntry[];
  writeRules: ReadonlyMap<string, WriteRules>;
  /** Names of the objects written, for the change bus when the transaction commits. */
  written: Set<string>;
  /** The per-record path of the same transaction. */
  writer: RecordWriter;
  /** The entries of a child collection in a body (as the per-record path reads them). */
  childEntries(body: Record<string, unknown>, name: string): Array<Record<string, unknown>>;
  /** The values a child inherits from its parent row. */
  joinValues(child: StructureNode, parent: Row): Row;
}

/** One record of a batch: the body as sent, its key values (none missing), and whether it is a deletion. */
export interface BatchRecord {
  body: Record<string, unknown>;
  keys: readonly StoredValue[];
  delete: boolean;
}

/** `unchanged`: the record equals its stored row, which is left as it is (no stamps, no observers). */
export type BatchOutcome = 'added' | 'changed' | 'unchanged' | 'deleted';

/** Turns the refusal of the record at `index` of a batch into the error the caller reports. */
export type Refusal = (index: number, error: MaximoError) => MaximoError;

/** Records validated and waiting for their multi-row insert. */
const PENDING_ROWS = 250;

/** Records sent at once while no insert is under way (the database would wait for PENDING_ROWS to be checked). */
const IDLE_PENDING_ROWS = 50;

/** Records checked between two turns of the event loop while an insert is under way (see `turn`). */
const TURN_RECORDS = 25;

/** Rows a batch adds to a table before its statistics are worth renewing, however small the table was. */
const ANALYZE_AFTER_ROWS = 1000;

interface PendingInsert {
  node: StructureNode;
  body: Record<string, unknown>;
  values: Row;
  refuse: (error: MaximoError) => MaximoError;
}

export class BatchWriter {
  private pending: PendingInsert[] = [];
  /** Changes of stored records checked and waiting for their multi-row update. */
  private updates: PendingUpdate[] = [];
  /** Records whose insert has been sent and not yet answered, and the chain of those inserts. */
  private readonly writing = new Set<PendingInsert>();
  private written: Promise<void> = Promise.resolve();
  /**
   * The failure of an insert sent earlier: the next record stops on it rather than querying a transaction the
   * failure may have aborted. (Also what marks the chain's rejection handled: it is awaited at `settle`.)
   */
  private failure: { error: unknown } | undefined;
  private readonly memo: ReferenceMemo;
  /** Per object name: whether the batch covers it (see `covers`). */
  private readonly covered = new Map<string, boolean>();
  /** Per table: the rows the planner knew of at its last statistics, and the rows added since. */
  private readonly growth = new Map<string, { planned: number; added: number }>();
  /** Errors already attributed to their record, passed on as they are. */
  private readonly attributed = new WeakSet<MaximoError>();
  /** Set by `trial`: a refused record is reported and the batch goes on; each record's stored row is shown. */
  private trialOf: ((index: number, stored: Row | undefined) => void) | undefined;
  /** Deletions waiting to be removed together (batch-delete.ts), flushed before any other record. */
  private readonly deletes: BatchDelete;
  /** Set by `keepInserted`: the root rows the multi-row inserts answered since the last `takeInserted`. */
  private inserted: Row[] | undefined;
  private alongsideTask: (() => void) | undefined;

  constructor(private readonly unit: BatchUnit) {
    this.memo = new ReferenceMemo(unit.db, () => [...this.pending, ...this.writing]);
    this.deletes = new BatchDelete(unit);
  }

  /**
   * Makes this a trial batch (a preview's, in a transaction its caller rolls back): a record refused for its data is
   * reported through the `refused` of `sync` and the batch goes on with the next (a failure of the database still
   * stops it); `stored` hears each record's stored row (or none) before it is written.
   */
  trial(stored: (index: number, row: Row | undefined) => void): this {
    this.trialOf = stored;
    return this;
  }

  /**
   * Makes the batch keep the rows its multi-row inserts answer (`returning *`), for a caller that needs the stored
   * rows of the records it added (a deploy's inverse package) without reading them again; see `takeInserted`.
   */
  keepInserted(): this {
    this.inserted = [];
    return this;
  }

  /**
   * The stored rows of the records added by multi-row inserts since the last call (only with `keepInserted`), as
   * the database answered them: those of records that sent no child entries (a child's write may touch its parent).
   */
  takeInserted(): Row[] {
    const rows = this.inserted ?? [];
    if (this.inserted) this.inserted = [];
    return rows;
  }

  /**
   * Runs `task` (work that does not wait for its statements, a deploy's inverse of a chunk) when the batch settles,
   * once every record of it has been checked and its inserts sent: the database writes them meanwhile. Run earlier,
   * it would hold up the checks that keep the inserts coming.
   */
  alongside(task: (() => void) | undefined): void {
    this.alongsideTask = task && (() => ((this.alongsideTask = undefined), task()));
  }

  /**
   * Adds, changes or deletes each record at the root of `node`, matched by its key values, with the outcome writing
   * them one by one in order would have (a later record sees the earlier ones). Additions are batched; changes,
   * deletions, additions whose object has write rules or needs an autokey, and every child collection go through
   * the per-record writer. A refused record stops the batch with `refused(index, error)`. `known`: the stored rows
   * among the records' keys, when the caller has just read them in the same transaction (a deploy's inverse package
   * reads them first): the batch then does not read them again.
   */
  async sync(
    node: StructureNode,
    records: readonly BatchRecord[],
    merge: boolean,
    refused: Refusal,
    known?: readonly Row[],
  ): Promise<BatchOutcome[]> {
    const object = node.object;
    const stored = !this.covers(object)
      ? new Map<string, Row>()
      : known
        ? new Map(known.map((row) => [keyText(object.keys.map((name) => row[name] ?? null)), row]))
        : await this.existingRows(object, records);
    const children = await storedChildren(
      this.unit,
      node,
      records.flatMap((record) => {
        const row = record.delete ? undefined : stored.get(keyText(record.keys));
        return row ? [{ body: record.body, row }] : [];
      }),
    );
    const seen = new Set<string>();
    const outcomes: BatchOutcome[] = [];
    for (const [index, record] of records.entries()) {
      await this.turn(index);
      const refuse = (error: MaximoError) => this.attribute(refused(index, error));
      try {
        const found = { stored, children, seen, index };
        outcomes.push(await this.syncOne(node, record, found, merge, refuse));
      } catch (error) {
        // An insert still under way must end before the caller rolls back: its queries belong to the transaction.
        await this.written.catch(() => undefined);
        if (!(error instanceof MaximoError)) throw error;
        const refusal = this.attributed.has(error) ? error : refuse(error);
        if (!this.trialOf || this.failure) throw refusal;
        outcomes.push('unchanged');
      }
    }
    await this.settle();
    return outcomes;
  }

  /**
   * Checking a record is JavaScript between statements. A long batch leaves the process answering (giveTurnWhenDue);
   * and while an insert is under way, every TURN_RECORDS records give the event loop a turn: the database's answer
   * is read only then, and only then is the next insert sent, so the records are checked while the database writes
   * the ones before them instead of after.
   */
  private async turn(index: number): Promise<void> {
    if (this.writing.size > 0 && index % TURN_RECORDS === 0) await setImmediate();
    else await giveTurnWhenDue();
  }

  private attribute(error: MaximoError): MaximoError {
    this.attributed.add(error);
    return error;
  }

  private async syncOne(
    node: StructureNode,
    record: BatchRecord,
    found: { stored: ReadonlyMap<string, Row>; children: StoredChildren; seen: Set<string>; index: number },
    merge: boolean,
    refuse: PendingInsert['refuse'],
  ): Promise<BatchOutcome> {
    if (this.failure) await this.settle();
    const object = node.object;
    const { stored, children, seen } = found;
    const key = keyText(record.keys);
    let row = stored.get(key);
    // A key sent twice in a batch, or with a null part, is read again now: the earlier record may have added it.
    const readAgain = seen.has(key) || record.keys.some((value) => value === null) || !this.covers(object);
    if (readAgain) {
      await this.settle();
      row = await findByKeys(this.unit.db, object, record.keys);
    }
    seen.add(key);
    this.trialOf?.(found.index, row);
    const uniqueId = row === undefined ? undefined : Number(row[object.uniqueId]);
    if (record.delete) {
      if (uniqueId === undefined) return 'deleted';
      this.send();
      await this.written;
      await this.deletes.queue(node, row!, refuse);
      this.memo.clear();
      return 'deleted';
    }
    await this.deletes.flush();
    if (uniqueId !== undefined) {
      const storedChildren = children.get(uniqueId);
      if (!readAgain && this.equalsStored(node, record.body, row!, merge, storedChildren)) return 'unchanged';
      if (!readAgain && this.updatable(node, record.body, row!, merge, storedChildren)) {
        await this.queueUpdate(node, record.body, row!, merge, refuse);
        return 'changed';
      }
      await this.settle();
      await this.unit.writer.update(node, uniqueId, record.body, merge, false);
      return 'changed';
    }
    const values = convertInput(object, record.body, undefined, childNames(node));
    if (!this.batchable(object, values)) {
      await this.settle();
      await this.unit.writer.insert(node, record.body, {});
      return 'added';
    }
    applyDefaults(object, values);
    const { db, metadata, domains, limits } = this.unit;
    await validateRecord({ db, metadata, domains, limits, lookups: this.memo }, object, values, values, true);
    stampWrite(object, values, undefined, { now: this.unit.now, userid: this.unit.user.userid });
    this.pending.push({ node, body: record.body, values, refuse });
    if (this.pending.length >= (this.writing.size === 0 ? IDLE_PENDING_ROWS : PENDING_ROWS)) this.send();
    return 'added';
  }

  /**
   * Whether writing the record would change nothing: every attribute it sends equals the stored row's, and so does
   * every child it sends (src/oslc/batch-unchanged.ts). Objects with write rules, and records the per-record path
   * would refuse, are left to that path.
   */
  private equalsStored(
    node: StructureNode,
    body: Record<string, unknown>,
    row: Row,
    merge: boolean,
    children: ReadonlyMap<string, Row[]> | undefined,
  ): boolean {
    const object = node.object;
    if (this.unit.writeRules.has(object.name)) return false;
    if (!childrenUnchanged(this.unit, node, body, row, children, merge)) return false;
    let values: Row;
    try {
      values = convertInput(object, body, row, childNames(node));
    } catch {
      return false;
    }
    for (const name in values) if (!sameAsStored(row[name] ?? null, values[name] ?? null)) return false;
    return true;
  }

  /**
   * Whether a change of a stored record goes with the batch's multi-row updates: an object the batch covers, without
   * write rules, whose sent children need no write (src/oslc/batch-unchanged.ts), every column known.
   */
  private updatable(
    node: StructureNode,
    body: Record<string, unknown>,
    row: Row,
    merge: boolean,
    children: ReadonlyMap<string, Row[]> | undefined,
  ): boolean {
    const object = node.object;
    if (this.unit.writeRules.has(object.name) || !this.covers(object)) return false;
    return childrenUnchanged(this.unit, node, body, row, children, merge);
  }

  /** A change checked as the per-record update checks it, stamped, and queued for the next multi-row update. */
  private async queueUpdate(
    node: StructureNode,
    body: Record<string, unknown>,
    before: Row,
    merge: boolean,
    refuse: PendingInsert['refuse'],
  ): Promise<void> {
    const object = node.object;
    const values = convertInput(object, body, before, childNames(node));
    const { db, metadata, domains, limits } = this.unit;
    await validateRecord(
      { db, metadata, domains, limits, lookups: this.memo },
      object,
      values,
      { ...before, ...values },
      false,
    );
    stampWrite(object, values, before, { now: this.unit.now, userid: this.unit.user.userid });
    if (!knowsColumns(limits, object, values)) {
      await this.settle();
      await this.unit.writer.update(node, Number(before[object.uniqueId]), body, merge, false);
      return;
    }
    this.updates.push({ node, body, values, before, refuse });
    if (this.updates.length >= PENDING_ROWS) this.send();
  }

  /** Write rules may read what the writes before them wrote, and autokeys are numbered one by one: per record. */
  private batchable(object: ObjectMeta, values: Row): boolean {
    if (this.unit.writeRules.has(object.name) || !this.covers(object)) return false;
    if (!knowsColumns(this.unit.limits, object, values)) return false;
    for (const attribute of object.attributes.values()) {
      const value = values[attribute.name];
      if (attribute.autokey && (value === undefined || value === null || value === '')) return false;
    }
    return true;
  }

  /** Whether the object and its status history bind as arrays (batch-repository.ts); else it goes record by record. */
  private covers(object: ObjectMeta): boolean {
    let covered = this.covered.get(object.name);
    if (covered === undefined) {
      const historyName = object.def.statusHistory;
      covered =
        bindsAsArrays(this.unit.limits, object) &&
        (!historyName || bindsAsArrays(this.unit.limits, this.unit.metadata.object(historyName)));
      this.covered.set(object.name, covered);
    }
    return covered;
  }

  /** The stored rows among the batch's keys, by key text, in one read. */
  private async existingRows(object: ObjectMeta, records: readonly BatchRecord[]): Promise<Map<string, Row>> {
    const tuples = new Map<string, StoredValue[]>();
    for (const record of records) {
      if (record.keys.every((value) => value !== null)) tuples.set(keyText(record.keys), [...record.keys]);
    }
    const rows =
      tuples.size === 0 ? [] : await findKeyed(this.unit.db, object, this.unit.limits, [...tuples.values()]);
    return new Map(rows.map((row) => [keyText(object.keys.map((name) => row[name] ?? null)), row]));
  }

  /**
   * Sends the pending records' insert without waiting for it: the next records are validated while the database
   * writes these (the transaction's connection runs its queries one after the other, so a read sent meanwhile sees
   * them). A failure surfaces at the next `settle`.
   */
  private send(): void {
    if (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      for (const entry of batch) this.writing.add(entry);
      const inserting = this.insert(batch);
      this.written = this.written.then(() => this.write(batch, inserting));
    }
    if (this.updates.length > 0) {
      const updates = this.updates;
      this.updates = [];
      this.written = this.written.then(() =>
        writeUpdates(this.unit, updates, this.attributed, !!this.trialOf),
      );
    }
    this.written.catch((error: unknown) => (this.failure ??= { error }));
  }

  /** Every record handed to the batch so far is written (or its refusal thrown). */
  private async settle(): Promise<void> {
    this.send();
    this.alongsideTask?.();
    await this.written;
    await this.deletes.flush();
  }

  /**
   * The records' insert (sent by `insert`, their status history rows with it) awaited in the order the batches were
   * sent, then per record what follows its insert on the per-record path: the write observers, its child collections.
   */
  private async write(batch: readonly PendingInsert[], inserting: Promise<Row[]>): Promise<void> {
    try {
      await this.afterInsert(batch, await inserting);
    } finally {
      for (const entry of batch) this.writing.delete(entry);
    }
  }

  /**
   * The multi-row insert of the records (with their status history), handed to the transaction now: it follows the
   * statements already sent as soon as they end, while what follows the insert before it (`afterInsert`) still runs.
   */
  private insert(batch: readonly PendingInsert[]): Promise<Row[]> {
    const object = batch[0]!.node.object;
    const values = batch.map((entry) => entry.values);
    const inserting = insertRows(
      this.unit.db,
      object,
      this.unit.limits,
      values,
      true,
      this.statusHistory(object),
    );
    // Awaited in order by `write`; marked handled meanwhile, as a failure is only seen there.
    inserting.catch(() => undefined);
    return inserting;
  }

  /** What follows the insert of the records, per record as on the per-record path: observers, child collections. */
  private async afterInsert(batch: readonly PendingInsert[], rows: readonly Row[]): Promise<void> {
    const { written } = this.unit;
    const object = batch[0]!.node.object;
    const history = this.statusHistory(object);
    if (history) written.add(history.object.name);
    const byKey = new Map(rows.map((row) => [keyText(object.keys.map((name) => row[name] ?? null)), row]));
    written.add(object.name);
    await this.grown(object, rows.length);
    const inserted = batch.map((entry) => {
      const row = byKey.get(keyText(object.keys.map((name) => entry.values[name] ?? null)));
      if (!row)
        throw new Error(`A batched insert of ${object.name} answered no row for a record it was given`);
      return { entry, row };
    });
    if (this.inserted) {
      for (const { entry, row } of inserted) {
        const children = entry.node.children;
        if (children.every((child) => this.unit.childEntries(entry.body, child.name).length === 0))
          this.inserted.push(row);
      }
    }
    for (const { entry, row } of inserted) {
      try {
        await this.observe(object, row);
        for (const child of entry.node.children) {
          const inherited = { ...this.unit.joinValues(child, row), ...child.values };
          for (const childBody of this.unit.childEntries(entry.body, child.name))
            await this.unit.writer.insert(child, childBody, inherited);
        }
      } catch (error) {
        if (!(error instanceof MaximoError)) throw error;
        const refusal = this.attributed.has(error) ? error : entry.refuse(error);
        // A trial goes on: the refusal was reported, and the transaction is rolled back anyway.
        if (!this.trialOf) throw refusal;
      }
    }
  }

  /**
   * Renews a table's statistics each time the batch has added as many rows as the planner knew of. Plans made while
   * a table was small (a fresh deployment's) read it whole, and the foreign-key checks of the rows that reference it
   * (status history, children) keep their plans for the connection: as the table grows within the transaction, each
   * check would scan it all, and the deploy would slow down quadratically. ANALYZE also invalidates those plans.
   * About log2(added / 1000) runs per table, each of the columns rows are looked up by (keys, unique id) only; see
   * docs/migration.md, "Deploy: speed".
   */
  private async grown(object: ObjectMeta, added: number): Promise<void> {
    const table = object.table;
    let growth = this.growth.get(table);
    if (!growth) {
      growth = { planned: await plannedRows(this.unit.db, table), added: 0 };
      this.growth.set(table, growth);
    }
    growth.added += added;
    if (growth.added < Math.max(ANALYZE_AFTER_ROWS, growth.planned)) return;
    await analyzeTable(this.unit.db, table, [...new Set([...object.keys, object.uniqueId])]);
    growth.planned += growth.added;
    growth.added = 0;
  }

  /** Who and when of the status history rows of added records (every one with a status attribute, as on insert). */
  private statusHistory(object: ObjectMeta): StatusHistory | undefined {
    const historyName = object.def.statusHistory;
    if (!historyName || this.unit.limits.column(object, 'status') === undefined) return undefined;
    const { now, user } = this.unit;
    return { object: this.unit.metadata.object(historyName), now, userid: user.userid };
  }

  private async observe(object: ObjectMeta, row: Row): Promise<void> {
    const write: RecordWrite = {
      object,
      operation: 'insert',
      uniqueId: Number(row[object.uniqueId]),
      before: undefined,
      after: row,
      user: this.unit.user,
      origin: this.unit.origin,
    };
    for (const { observer, takesPart } of this.unit.observers)
      if (takesPart(object, 'insert')) await observer(this.unit.db, write);
  }
}

const childNames = (node: StructureNode): ReadonlySet<string> =>
  new Set(node.children.map((child) => child.name));
