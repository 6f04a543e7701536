import type { Kysely } from 'kysely';
import type { RequestOrigin } from '../audit/types.js';
import type { UserProfile } from '../auth/types.js';
import type { ChangeBus } from '../db/change-bus.js';
import type { DynamicDatabase } from '../db/schema.js';
import type { DomainSnapshot } from '../domains/domain-cache.js';
import { errors, type MaximoError } from '../errors.js';
import type { MetadataRegistry, ObjectMeta, StructureNode } from '../metadata/registry.js';
import { issueAutokey } from './autokey-repository.js';
import { BatchWriter, type RecordWriter } from './batch-writer.js';
import {
  childAction,
  childEntries,
  childNames,
  describeKeys,
  findChild,
  hasChildEntries,
  joinPairs,
  joinValues,
} from './child-entries.js';
import type { ColumnLimits } from './column-limits.js';
import { isForeignKeyViolation } from '../db/constraint-errors.js';
import * as repository from './repository.js';
import type { DependentInsert, Row } from './repository.js';
import type { SiteSnapshot } from './site-cache.js';
import { stampWrite, statusHistoryRow, type WriteStamp } from './stamps.js';
import { applyDefaults, convertInput, validateRecord } from './validation.js';
import type { StoredValue } from './values.js';
import type {
  BodyMemberWriter,
  ObserverEntry,
  RecordWrite,
  WriteRuleContext,
  WriteRules,
} from './write-extensions.js';

/**
 * The write path of one transaction, for writes composed elsewhere (child collections, BULK, SYNC): the per-record
 * writes the batch writer also relies on (`RecordWriter`, which it owns), the transaction, and batches.
 */
export interface ResourceWriter extends RecordWriter {
  readonly db: Kysely<DynamicDatabase>;
  /** Many records of one structure in few statements, in this transaction (src/oslc/batch-writer.ts). */
  batch(): BatchWriter;
}

/** How many numbers of an autokey are passed over, when taken by records numbered by hand, before giving up. */
const AUTOKEY_ATTEMPTS = 1000;

/** The records one request writes, in its transaction. */
export class WriteUnit implements ResourceWriter {
  private readonly now = new Date();
  /** Date and memo of the status change this unit makes (`wsmethod:changeStatus`). */
  statusChange: { date?: Date; memo?: string } | undefined;
  /** The objects this unit wrote; the announced ones are notified on the change bus when it commits. */
  private readonly written = new Set<string>();
  /** The written objects whose notification a statement of the unit already carried. */
  private readonly notified = new Set<string>();
  private readonly metadata: MetadataRegistry;
  private readonly domains: DomainSnapshot;
  private readonly user: UserProfile;
  private readonly origin: RequestOrigin | undefined;
  private readonly observers: readonly ObserverEntry[];
  private readonly writeRules: ReadonlyMap<string, WriteRules>;
  private readonly bodyMembers: ReadonlyMap<string, ReadonlyMap<string, BodyMemberWriter>>;
  private readonly limits: ColumnLimits;
  private readonly sites: SiteSnapshot | undefined;
  private readonly bus: ChangeBus;
  private readonly announced: ReadonlySet<string>;

  /** `db`: the request's transaction, or the database itself for a write of one statement (`writeAlone`). */
  constructor(
    readonly db: Kysely<DynamicDatabase>,
    setting: WriteSetting,
  ) {
    ({
      metadata: this.metadata,
      domains: this.domains,
      user: this.user,
      origin: this.origin,
      observers: this.observers,
      writeRules: this.writeRules,
      bodyMembers: this.bodyMembers,
      limits: this.limits,
      sites: this.sites,
      bus: this.bus,
      announced: this.announced,
    } = setting);
  }

  /** The written objects other processes hear of (see `ResourceService.announceWrites`). */
  announcedWrites(): string[] {
    return [...this.written].filter((objectName) => this.announced.has(objectName));
  }

  /** The announced written objects still to notify. */
  unnotified(): string[] {
    return this.announcedWrites().filter((objectName) => !this.notified.has(objectName));
  }

  async insert(node: StructureNode, body: Record<string, unknown>, inherited: Row): Promise<Row> {
    const object = node.object;
    const values = convertInput(object, body, undefined, childNames(node));
    Object.assign(values, inherited);
    await this.autokeys(object, values);
    applyDefaults(object, values);
    await validateRecord(this.context(), object, values, values, true);
    await this.writeRules.get(object.name)?.beforeInsert?.(this.ruleContext(object, values));
    stampWrite(object, values, undefined, this.writeStamp());
    const row = await this.insertRecord(object, values);
    await this.observe(object, 'insert', row, undefined, row);
    for (const child of node.children) {
      const entries = childEntries(body, child.name);
      for (const entry of entries)
        await this.insert(child, entry, { ...joinValues(child, row), ...child.values });
    }
    await this.writeBodyMembers(object, row, body);
    return row;
  }

  async update(
    node: StructureNode,
    uniqueId: number,
    body: Record<string, unknown>,
    merge: boolean,
    checkRowstamp: boolean,
  ): Promise<void> {
    const object = node.object;
    const before = await repository.lockByUniqueId(this.db, object, uniqueId);
    if (!before) throw errors.resourceNotFound(object.name, String(uniqueId));
    const sentStamp = body._rowstamp;
    if (
      checkRowstamp &&
      sentStamp !== undefined &&
      sentStamp !== null &&
      String(sentStamp) !== String(before.rowstamp)
    ) {
      throw errors.updatedByAnotherUser(object.name);
    }
    const changed = convertInput(object, body, before, childNames(node));
    const record: Row = { ...before, ...changed };
    await validateRecord(this.context(), object, changed, record, false);
    await this.writeRules.get(object.name)?.beforeUpdate?.({ ...this.ruleContext(object, changed), before });
    stampWrite(object, changed, before, this.writeStamp());
    await repository.updateRow(this.db, object, uniqueId, changed);
    const after = await repository.findByUniqueId(this.db, object, uniqueId);
    if (after) await this.recordStatus(object, after, before);
    await this.observe(object, 'update', before, before, after);
    for (const child of node.children) {
      if (!hasChildEntries(body, child.name)) continue;
      await this.writeChildren(child, before, childEntries(body, child.name), merge);
    }
    if (after) await this.writeBodyMembers(object, after, body);
  }

  /** The body members a module writes after the record (`ResourceService.addBodyMember`). */
  private async writeBodyMembers(object: ObjectMeta, row: Row, body: Record<string, unknown>): Promise<void> {
    const members = this.bodyMembers.get(object.name);
    if (!members) return;
    for (const [name, writer] of members) {
      if (!hasChildEntries(body, name)) continue;
      await writer({ db: this.db, object, row, entries: childEntries(body, name), user: this.user });
    }
  }

  batch(): BatchWriter {
    return new BatchWriter({
      db: this.db,
      metadata: this.metadata,
      domains: this.domains,
      limits: this.limits,
      user: this.user,
      origin: this.origin,
      now: this.now,
      observers: this.observers,
      writeRules: this.writeRules,
      written: this.written,
      writer: this,
      childEntries,
      joinValues,
    });
  }

  async remove(node: StructureNode, uniqueId: number): Promise<void> {
    const object = node.object;
    const before = await repository.lockByUniqueId(this.db, object, uniqueId);
    if (!before) throw errors.resourceNotFound(object.name, String(uniqueId));
    await this.writeRules.get(object.name)?.beforeDelete?.({ ...this.ruleContext(object, {}), before });
    for (const child of node.children) {
      const rows = await repository.findAll(this.db, child.object.table, joinPairs(child, before));
      for (const row of rows) await this.remove(child, Number(row[child.object.uniqueId]));
    }
    try {
      await repository.deleteRow(this.db, object, uniqueId);
    } catch (error) {
      if (isForeignKeyViolation((error as { code?: unknown }).code)) {
        throw errors.stillReferenced(object.name, 'other');
      }
      throw error;
    }
    await this.observe(object, 'delete', before, before, undefined);
  }

  /**
   * Child collections of an update: with `patchtype: MERGE` the sent children are added or updated (and removed
   * when marked `_action: "Delete"`); without it the sent collection replaces the stored one.
   */
  private async writeChildren(
    child: StructureNode,
    parent: Row,
    entries: ReadonlyArray<Record<string, unknown>>,
    merge: boolean,
  ): Promise<void> {
    const object = child.object;
    const existing = await repository.findAll(this.db, object.table, joinPairs(child, parent));
    const inherited = { ...joinValues(child, parent), ...child.values };
    const kept = new Set<number>();
    for (const entry of entries) {
      const action = childAction(entry, object);
      const found = action === 'add' ? { match: undefined } : findChild(object, existing, entry, inherited);
      const { match } = found;
      if (match && action === 'delete') {
        await this.remove(child, Number(match[object.uniqueId]));
      } else if (match) {
        kept.add(Number(match[object.uniqueId]));
        await this.update(child, Number(match[object.uniqueId]), entry, merge, true);
      } else if (action === 'delete' || action === 'update') {
        // Deleting or changing what is not there is refused, never passed over (docs/compatibility.md, "Writes").
        if (found.missing !== undefined) throw errors.childKeyIncomplete(found.missing, object.name);
        throw errors.childNotMatched(
          found.keys === undefined ? `localref ${String(entry.localref)}` : describeKeys(object, found.keys),
          object.keys.at(-1) ?? '',
          object.name,
        );
      } else {
        const row = await this.insert(child, entry, inherited);
        kept.add(Number(row[object.uniqueId]));
      }
    }
    if (merge) return;
    for (const row of existing) {
      if (!kept.has(Number(row[object.uniqueId]))) await this.remove(child, Number(row[object.uniqueId]));
    }
  }

  private context() {
    // Sites this transaction wrote may differ from the committed ones.
    const sites = this.written.has('SITE') ? undefined : this.sites;
    return { db: this.db, metadata: this.metadata, domains: this.domains, limits: this.limits, sites };
  }

  domainValue(domainId: string, value: unknown, siteid: string | null, orgid: string | null) {
    return this.domains.find(domainId, value, siteid, orgid);
  }

  /** Numbers the autokeyed attributes a create leaves out (docs/compatibility.md, "Autokeys"). */
  private async autokeys(object: ObjectMeta, values: Row): Promise<void> {
    const siteAttribute = object.def.siteAttribute;
    const siteValue = siteAttribute ? values[siteAttribute] : undefined;
    const siteid = typeof siteValue === 'string' ? siteValue : null;
    for (const attribute of object.attributes.values()) {
      if (!attribute.autokey || !isBlank(values[attribute.name])) continue;
      for (let attempt = 0; attempt < AUTOKEY_ATTEMPTS; attempt += 1) {
        const issued = await issueAutokey(this.db, attribute.autokey, siteid);
        if (!issued) break;
        values[attribute.name] = `${issued.prefix}${issued.number}`;
        const keyValues = object.keys.map((key) => values[key] ?? null);
        // A number a client already gave a record by hand is passed over.
        if (!object.keys.includes(attribute.name)) break;
        if (!(await repository.findByKeys(this.db, object, keyValues))) break;
        delete values[attribute.name];
      }
    }
  }

  /** A row of the object's status history when its status was set or changed. */
  private async recordStatus(object: ObjectMeta, after: Row, before: Row | undefined): Promise<void> {
    const historyName = object.def.statusHistory;
    if (!historyName || after.status === undefined || after.status === before?.status) return;
    const history = this.metadata.object(historyName);
    const row = statusHistoryRow(history, after, this.writeStamp(), this.statusChange?.memo ?? null);
    await repository.insertRow(this.db, history, row);
    this.written.add(history.name);
  }

  /**
   * Inserts a new record and the status-history row of its status, refused as a duplicate when its key values are
   * taken: one statement (src/oslc/README.md, "Round trips of a write").
   */
  private async insertRecord(object: ObjectMeta, values: Row): Promise<Row> {
    const keyValues = object.keys.map((key) => values[key] ?? null);
    const history = this.statusHistoryOf(object);
    // The statement notifies what it writes: a create of one statement then needs no other.
    const notifying = [object.name, ...(history ? [history.object.name] : [])].filter(
      (objectName) => this.announced.has(objectName) && !this.notified.has(objectName),
    );
    const row = await repository.insertUnlessKeyTaken(
      this.db,
      object,
      values,
      keyValues,
      history ? [history.insert] : [],
      { channel: this.bus.channelName('object'), payloads: notifying },
      { columns: this.limits.columnsOf(object.table), version: this.limits.version },
    );
    if (!row) throw duplicateKey(object, values);
    if (history) this.written.add(history.object.name);
    for (const objectName of notifying) this.notified.add(objectName);
    return row;
  }

  /**
   * The status-history row of a new record, taken from the inserted row as `recordStatus` takes it from a written
   * one: a new record's status is always recorded (a null one too) when its table has a status column.
   */
  private statusHistoryOf(object: ObjectMeta): { object: ObjectMeta; insert: DependentInsert } | undefined {
    const historyName = object.def.statusHistory;
    if (!historyName || !this.limits.column(object, 'status')) return undefined;
    const history = this.metadata.object(historyName);
    const columns = new Map<string, { from: string; otherwise?: StoredValue } | { value: StoredValue }>();
    for (const attribute of history.attributes.values()) {
      if (!attribute.generated && this.limits.column(object, attribute.name))
        columns.set(attribute.name, { from: attribute.name });
    }
    columns.set(
      'changedate',
      this.limits.column(object, 'statusdate')
        ? { from: 'statusdate', otherwise: this.now }
        : { value: this.now },
    );
    columns.set('changeby', { value: this.user.userid });
    columns.set('memo', { value: this.statusChange?.memo ?? null });
    return { object: history, insert: { table: history.table, columns } };
  }

  /** Who writes and when, for the stamps and status-history rows of this unit's writes. */
  private writeStamp(): WriteStamp {
    return { now: this.now, userid: this.user.userid, statusDate: this.statusChange?.date ?? this.now };
  }

  /** What a write rule of `object` is told of this write: its transaction, the writer and the values. */
  private ruleContext(object: ObjectMeta, values: Row): WriteRuleContext {
    return { db: this.db, object, user: this.user, origin: this.origin, values };
  }

  private async observe(
    object: ObjectMeta,
    operation: RecordWrite['operation'],
    row: Row,
    before: Row | undefined,
    after: Row | undefined,
  ): Promise<void> {
    this.written.add(object.name);
    const write: RecordWrite = {
      object,
      operation,
      uniqueId: Number(row[object.uniqueId]),
      before,
      after,
      user: this.user,
      origin: this.origin,
    };
    for (const { observer, takesPart } of this.observers) {
      if (takesPart(object, operation)) await observer(this.db, write);
    }
  }
}

/** What a write unit works with besides its database: read from memory once per request. */
export interface WriteSetting {
  metadata: MetadataRegistry;
  domains: DomainSnapshot;
  user: UserProfile;
  /** The request that writes (for the audit trail's write observer); none outside a request. */
  origin: RequestOrigin | undefined;
  observers: readonly ObserverEntry[];
  writeRules: ReadonlyMap<string, WriteRules>;
  bodyMembers: ReadonlyMap<string, ReadonlyMap<string, BodyMemberWriter>>;
  limits: ColumnLimits;
  sites: SiteSnapshot | undefined;
  bus: ChangeBus;
  announced: ReadonlySet<string>;
}

/** Whether a new record with these values has an autokeyed attribute left to number (see `WriteUnit.autokeys`). */
export function needsAutokey(object: ObjectMeta, values: Row): boolean {
  for (const attribute of object.attributes.values()) {
    if (attribute.autokey && isBlank(values[attribute.name])) return true;
  }
  return false;
}

const isBlank = (value: StoredValue | undefined): boolean =>
  value === undefined || value === null || value === '';

/** The refusal of a record whose key values another record has. */
function duplicateKey(object: ObjectMeta, values: Row): MaximoError {
  const attributes = object.keys.filter((key) => values[key] !== null && values[key] !== undefined);
  const keyText = attributes
    .map((key) => `${object.attributes.get(key)?.title ?? key}=${String(values[key])}`)
    .join(', ');
  return errors.duplicateKey(keyText, object.name, object.name.toLowerCase());
}
