import type { Kysely } from 'kysely';
import type { UserProfile } from '../auth/types.js';
import type { Storage } from '../db/database.js';
import type { DynamicDatabase } from '../db/schema.js';
import type { DomainCache, DomainSnapshot } from '../domains/domain-cache.js';
import { errors, MaximoError } from '../errors.js';
import type { MetadataRegistry, ObjectMeta, ObjectStructure, StructureNode } from '../metadata/registry.js';
import { BoundedCache } from '../util/bounded-cache.js';
import type { CacheStatistics } from '../util/cache-statistics.js';
import { resolveChildPath, type ChildStep, type ChildTarget } from './child-path.js';
import {
  CompiledPages,
  compileStableMembers,
  createStableSet,
  executeCount,
  executeDistinct,
  executeGroupBy,
  executePage,
  executeStablePage,
  type Filter,
  type GroupRecord,
  type MemberRecord,
  newStableId,
  type PageWindow,
  planFilters,
  planQuery,
  type QueryPlan,
  type QueryRequest,
  type SelectClause,
  STABLE_ID,
  type StableSetOwner,
  touchStableSet,
  unknownAttribute,
} from './query/index.js';
import * as repository from './repository.js';
import type { DependentInsert, Row } from './repository.js';
import { ColumnLimits } from './column-limits.js';
import { decodeChildAnchor, decodeRestId } from './rest-id.js';
import { claimTransactionId, recordTransactionResource } from './transaction-repository.js';
import { issueAutokey } from './autokey-repository.js';
import { applyDefaults, attributeName, convertInput, validateRecord } from './validation.js';
import { stampWrite, statusHistoryRow, type WriteStamp } from './stamps.js';
import { toStored, type StoredValue } from './values.js';
import type {
  ObservedWrites,
  ReadTransform,
  RecordWrite,
  ObserverEntry,
  WriteObserver,
  WriteRules,
} from './write-extensions.js';
import { dynamicView } from '../db/schema.js';
import { BatchWriter } from './batch-writer.js';
import type { ChangeBus } from '../db/change-bus.js';
import { SiteCache, type SiteSnapshot } from './site-cache.js';

export interface PageQuery {
  plan: QueryPlan;
  window: PageWindow;
  /** Filters beyond the plan's own (saved queries, lookups, time lines). */
  extraFilters?: readonly Filter[];
  withCount: boolean;
  /** Who reads, for read transforms (see `addReadTransform`). */
  reader?: UserProfile | null;
}

export interface PageOfMembers {
  members: MemberRecord[];
  hasMore: boolean;
  totalCount?: number;
  domains: DomainSnapshot;
}

export interface StablePageQuery {
  plan: QueryPlan;
  stableId: string;
  owner: StableSetOwner;
  window: PageWindow;
  /** Seconds a set may stay unused before it expires. */
  idleSeconds: number;
  reader?: UserProfile | null;
}

/** A read of one resource at its own address: none of the collection's filters apply to it. */
export interface OneResourceQuery {
  structure: ObjectStructure;
  /** The request's query; its `select` decides what is read (see `select`), its filters are ignored. */
  query: QueryRequest;
  /** What to read when not the query's own selection. */
  select: SelectClause;
  /** What selects the one member: its unique id, and for a child member its parent's scope. */
  filters: readonly Filter[];
  /** Who reads, for read transforms (see `addReadTransform`). */
  reader?: UserProfile | null;
}

export interface OneResource {
  member: MemberRecord;
  domains: DomainSnapshot;
}

/** What a write request may add to its writes: `transactionid` and `If-Match` (docs/compatibility.md, "Writes"). */
export interface WriteOptions {
  /** The `transactionid` header: a second request with the same id is refused and writes nothing. */
  transactionId?: string;
  /** The `If-Match` header: the addressed record must still carry one of these ETags (`*`: any). */
  ifMatch?: string;
}

/** The write path of one transaction, for writes composed elsewhere (child collections, BULK, SYNC). */
export interface ResourceWriter {
  readonly db: Kysely<DynamicDatabase>;
  insert(node: StructureNode, body: Record<string, unknown>, inherited: Row): Promise<Row>;
  update(
    node: StructureNode,
    uniqueId: number,
    body: Record<string, unknown>,
    merge: boolean,
    checkRowstamp: boolean,
  ): Promise<void>;
  remove(node: StructureNode, uniqueId: number): Promise<void>;
  /** Many records of one structure in few statements, in this transaction (src/oslc/batch-writer.ts). */
  batch(): BatchWriter;
}

/** Query plans kept for reuse: a few hundred distinct queries cover the clients of one deployment. */
const PLANS_KEPT = 512;

const PG_UNIQUE_VIOLATION = '23505';
const PG_FOREIGN_KEY_VIOLATION = '23503';
const PG_DATA_EXCEPTION_CLASS = '22';

/**
 * Reads and writes object-structure resources. Every write of every object goes through `create`, `update` and
 * `remove` here: one transaction per request, validation before each row, observers inside the transaction, and one
 * change notification per written object when it commits.
 */
export class ResourceService {
  private readonly observers: ObserverEntry[] = [];
  private readonly writeRules = new Map<string, WriteRules>();
  private readonly readTransforms = new Map<string, Map<string, ReadTransform>>();
  private readonly db: Kysely<DynamicDatabase>;
  private readonly plans = new BoundedCache<string, QueryPlan>(PLANS_KEPT);
  /** Hits and misses of the query plan cache (the metrics read them). */
  get planCacheStatistics(): CacheStatistics {
    return this.plans.statistics;
  }
  private plansVersion: number;
  private readonly compiledPages: CompiledPages;
  private limits: Promise<ColumnLimits> | undefined;
  private limitsVersion = -1;
  private readonly sites: SiteCache;
  /** Objects whose writes are notified on the change bus (see `announceWrites`); the sites are cached here. */
  private readonly announced = new Set<string>(['SITE']);

  constructor(
    private readonly storage: Storage,
    private readonly metadata: MetadataRegistry,
    private readonly domains: DomainCache,
  ) {
    this.db = dynamicView(storage.db);
    this.plansVersion = metadata.version;
    this.compiledPages = new CompiledPages(this.db);
    this.sites = new SiteCache(this.db);
  }

  /** Starts following other processes' writes of what the write path keeps in memory (the sites). */
  async listen(): Promise<void> {
    await this.sites.listen(this.storage.bus);
  }

  /**
   * Registers an observer of writes; `takesPart` says which writes it may act on (by default all). A create that no
   * observer takes part in may be one statement without a transaction (see `insertsInOneStatement`).
   */
  addWriteObserver(observer: WriteObserver, takesPart: ObservedWrites = () => true): void {
    this.observers.push({ observer, takesPart });
  }

  /**
   * Registers objects a module keeps data of in memory and drops when the change bus says they were written: their
   * writes are notified when they commit. Writes of other objects are not: no process would act on them, and a
   * commit that notifies holds PostgreSQL's notification lock until it is flushed, so such commits run one at a
   * time (src/db/README.md).
   */
  announceWrites(objectNames: Iterable<string>): void {
    for (const objectName of objectNames) this.announced.add(objectName.toUpperCase());
  }

  /** Registers the write rules of an object (by name, upper case); one set per object. */
  addWriteRules(objectName: string, rules: WriteRules): void {
    this.writeRules.set(objectName.toUpperCase(), rules);
  }

  /** Registers how an attribute's stored value is presented on every read of its object. */
  addReadTransform(objectName: string, attribute: string, transform: ReadTransform): void {
    const name = objectName.toUpperCase();
    const transforms = this.readTransforms.get(name) ?? new Map<string, ReadTransform>();
    transforms.set(attribute, transform);
    this.readTransforms.set(name, transforms);
  }

  /**
   * The plan of a query. With `key` (the texts the request was read from, see CollectionParams.planKey) the plan is
   * kept and reused, together with its compiled pages, until the metadata changes.
   */
  plan(structure: ObjectStructure, request: QueryRequest, key?: string): QueryPlan {
    if (key === undefined) return planQuery(this.metadata, structure, request);
    if (this.plansVersion !== this.metadata.version) {
      this.plans.clear();
      this.plansVersion = this.metadata.version;
    }
    return this.plans.getOrCompute(`${structure.name}\u0000${key}`, () =>
      planQuery(this.metadata, structure, request),
    );
  }

  async page(query: PageQuery): Promise<PageOfMembers> {
    const extraFilters = query.extraFilters ?? [];
    const filters = [...planFilters(query.plan), ...extraFilters];
    const object = query.plan.structure.root.object;
    const reading = executePage(this.db, query.plan, extraFilters, query.window, this.compiledPages);
    // Without a count (most pages) one query runs; the domain values are in memory once loaded.
    const [page, totalCount, domains] = query.withCount
      ? await Promise.all([reading, executeCount(this.db, object, filters), this.domains.snapshot()])
      : [await reading, undefined, await this.domains.snapshot()];
    const members = this.present(page.members, query.reader ?? null);
    return { ...page, members, ...(totalCount !== undefined && { totalCount }), domains };
  }

  /** The groups of a plan with `gbcols` (docs/compatibility.md, "Group-by"). */
  async groups(plan: QueryPlan, extraFilters: readonly Filter[] = []): Promise<GroupRecord[]> {
    if (!plan.groupBy) return [];
    return executeGroupBy(this.db, plan.structure.root.object, plan.groupBy, [
      ...planFilters(plan),
      ...extraFilters,
    ]);
  }

  async count(plan: QueryPlan, extraFilters: readonly Filter[] = []): Promise<number> {
    return executeCount(this.db, plan.structure.root.object, [...planFilters(plan), ...extraFilters]);
  }

  async distinct(
    plan: QueryPlan,
    attribute: string,
    extraFilters: readonly Filter[] = [],
  ): Promise<StoredValue[]> {
    const object = plan.structure.root.object;
    // A transformed attribute's stored values are not what readers see (sealed keys): never listed raw.
    if (
      !object.attributes.has(attribute) ||
      object.attributes.get(attribute)?.writeOnly ||
      this.readTransforms.get(object.name)?.has(attribute)
    ) {
      throw unknownAttribute(attribute, object.name);
    }
    return executeDistinct(this.db, object, attribute, [...planFilters(plan), ...extraFilters]);
  }

  /**
   * Starts stable paging: the members of the plan, in page order, fixed now for all later pages. Answers the
   * new set's stable id.
   */
  async createStableSet(
    plan: QueryPlan,
    owner: StableSetOwner,
    idleSeconds: number,
    extraFilters: readonly Filter[] = [],
  ): Promise<string> {
    const stableId = newStableId();
    const object = plan.structure.root.object;
    await createStableSet(this.db, stableId, owner, idleSeconds, async (transaction) => {
      const result = await compileStableMembers(
        transaction,
        object,
        [...planFilters(plan), ...extraFilters],
        plan.order,
        stableId,
      ).executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0);
    });
    return stableId;
  }

  /** A page of a stable page set, read with the plan's selection; an unknown or expired set is an error. */
  async stablePage(query: StablePageQuery): Promise<PageOfMembers & { totalCount: number }> {
    const { plan, stableId, window } = query;
    const total = STABLE_ID.test(stableId)
      ? await touchStableSet(this.db, stableId, query.owner, query.idleSeconds)
      : undefined;
    if (total === undefined) throw errors.stablePageSetGone(stableId);
    // Past the end there is nothing to read (and positions past the set need not fit the position column).
    const [members, domains] = await Promise.all([
      window.offset < total ? executeStablePage(this.db, plan, stableId, window) : Promise.resolve([]),
      this.domains.snapshot(),
    ]);
    return {
      members: this.present(members, query.reader ?? null),
      hasMore: window.offset + window.limit < total,
      totalCount: total,
      domains,
    };
  }

  private present(members: MemberRecord[], reader: UserProfile | null): MemberRecord[] {
    if (this.readTransforms.size === 0) return members;
    return members.map((member) => this.presentRecord(member, reader));
  }

  private presentRecord(record: MemberRecord, reader: UserProfile | null): MemberRecord {
    const transforms = this.readTransforms.get(record.node.object.name);
    // Most members have nothing to present: they are passed through as read, without copies.
    if (!transforms && record.children.size === 0) return record;
    let values = record.values;
    if (transforms) {
      const changed: Record<string, StoredValue> = { ...values };
      for (const [attribute, transform] of transforms) {
        if (attribute in changed) changed[attribute] = transform(changed[attribute] ?? null, reader);
      }
      values = changed;
    }
    const children = new Map(
      [...record.children].map(([name, rows]) => [name, rows.map((row) => this.presentRecord(row, reader))]),
    );
    return { ...record, values, children };
  }

  /** The unique id of a resource addressed by rest id (`_QTEwMDMvQkVERk9SRA--`) or numeric unique id (`9`). */
  async resolveId(
    structure: ObjectStructure,
    id: string,
    db: Kysely<DynamicDatabase> = this.db,
  ): Promise<number> {
    const object = structure.root.object;
    // An id or key beyond what its column holds names no record; the database would refuse to compare it.
    const limits = await this.columnLimits();
    if (/^\d{1,15}$/.test(id)) {
      const uniqueId = Number(id);
      const row =
        limits.fits(object, object.uniqueId, uniqueId) &&
        (await repository.findByUniqueId(db, object, uniqueId));
      if (row) return Number(row[object.uniqueId]);
    } else {
      const parts = decodeRestId(id, object.keys.length);
      const fits = parts?.every(
        (part, index) => part === null || keyPartFits(limits, object, object.keys[index]!, part),
      );
      const row = parts && fits && (await repository.findByKeys(db, object, parts));
      if (row) return Number(row[object.uniqueId]);
    }
    throw errors.resourceNotFound(structure.name, id);
  }

  /** The child collection or child member a child address names below the resource `uniqueId` (`id` as sent). */
  async resolveChild(
    structure: ObjectStructure,
    id: string,
    uniqueId: number,
    steps: readonly ChildStep[],
    db: Kysely<DynamicDatabase> = this.db,
  ): Promise<ChildTarget> {
    return resolveChildPath(db, structure, id, uniqueId, steps);
  }

  /** An object structure by name or alias (BULK elements name their member by href). */
  findObjectStructure(name: string): ObjectStructure | undefined {
    return this.metadata.findObjectStructure(name);
  }

  /** One member read as its own address answers it, or nothing when the filters select none. */
  async readOne(read: OneResourceQuery): Promise<OneResource | undefined> {
    const query: QueryRequest = {
      ...read.query,
      select: read.select,
      where: undefined,
      savedQuery: undefined,
      search: undefined,
      timeline: undefined,
    };
    const page = await this.page({
      plan: this.plan(read.structure, query),
      window: { limit: 1, offset: 0 },
      extraFilters: read.filters,
      withCount: false,
      reader: read.reader,
    });
    const member = page.members[0];
    return member && { member, domains: page.domains };
  }

  /** A resource of a structure by unique id, as a GET reads it; not found when it does not exist. */
  async readResource(
    structure: ObjectStructure,
    uniqueId: number,
    read: Pick<OneResourceQuery, 'query' | 'select' | 'reader'>,
  ): Promise<OneResource> {
    const found = await this.readOne({ ...read, structure, filters: [this.byUniqueId(structure, uniqueId)] });
    if (!found) throw errors.resourceNotFound(structure.name, String(uniqueId));
    return found;
  }

  /** Plan filter that selects one member by unique id (single-resource reads reuse the collection path). */
  byUniqueId(structure: ObjectStructure, uniqueId: number): Filter {
    const object = structure.root.object;
    const attribute = object.attributes.get(object.uniqueId)!;
    return {
      combine: 'and',
      predicates: [{ op: 'eq', column: { via: [], viaTables: [], object, attribute }, value: uniqueId }],
    };
  }

  async create(
    structure: ObjectStructure,
    body: Record<string, unknown>,
    user: UserProfile,
    options: WriteOptions = {},
  ): Promise<number> {
    return (await this.createRecord(structure, body, user, options)).uniqueId;
  }

  /**
   * A create that answers the root record's row as its insert returned it too: what the answer's `Location` and
   * `ETag` name, without reading it again (src/oslc/README.md, "Round trips of a write").
   */
  async createRecord(
    structure: ObjectStructure,
    body: Record<string, unknown>,
    user: UserProfile,
    options: WriteOptions = {},
  ): Promise<{ uniqueId: number; row: Row }> {
    const work = async (write: WriteUnit) => {
      const row = await write.insert(structure.root, body, {});
      return { uniqueId: Number(row[structure.root.object.uniqueId]), row };
    };
    if (options.transactionId === undefined && this.insertsInOneStatement(structure.root, body))
      return this.writeAlone(user, work);
    return this.write(
      user,
      work,
      transactionOf(options, (created) => ({ structure, uniqueId: created.uniqueId })),
    );
  }

  /**
   * Whether creating this record writes one statement and nothing else: no write rule of its object, no observer
   * taking part in its inserts, no child entries and no autokey to issue (src/oslc/README.md, "Round trips of a
   * write"). Reading (validation) may still take statements of their own.
   */
  private insertsInOneStatement(node: StructureNode, body: Record<string, unknown>): boolean {
    const object = node.object;
    if (this.writeRules.get(object.name)?.beforeInsert) return false;
    if (this.observers.some(({ takesPart }) => takesPart(object, 'insert'))) return false;
    if (node.children.some((child) => hasChildEntries(body, child.name))) return false;
    return !needsAutokey(object, convertInput(object, body, undefined, childNames(node)));
  }

  /**
   * `wsmethod:changeStatus` (docs/compatibility.md, "Actions"): the status moves to a value of the status domain
   * that the current one may move to; `statusdate` takes `date` (or now) and a status-history row records it
   * with the memo. One write through the same path as an update.
   */
  async changeStatus(
    structure: ObjectStructure,
    id: string,
    change: StatusChange,
    user: UserProfile,
  ): Promise<number> {
    const object = structure.root.object;
    const attribute = object.attributes.get('status');
    if (!attribute?.domainId || !object.def.statusHistory) {
      throw errors.unknownAction('wsmethod:changeStatus', structure.name);
    }
    return this.write(user, async (write) => {
      const uniqueId = await this.resolveId(structure, id, write.db);
      const before = await repository.lockByUniqueId(write.db, object, uniqueId);
      if (!before) throw errors.resourceNotFound(structure.name, id);
      const objPath = object.name.toLowerCase();
      const siteid = typeof before.siteid === 'string' ? before.siteid : null;
      const orgid = typeof before.orgid === 'string' ? before.orgid : null;
      const target = write.domainValue(attribute.domainId!, change.status, siteid, orgid);
      if (!target) throw errors.notInValueList(attribute.title, change.status, 'status', objPath);
      const current = write.domainValue(attribute.domainId!, before.status, siteid, orgid);
      const transitions = attribute.lookup?.kind === 'domain' ? attribute.lookup.transitions : undefined;
      const from = current?.maxvalue ?? String(before.status);
      const to = target.maxvalue ?? change.status;
      if (transitions && !(transitions[from] ?? []).includes(to)) {
        throw errors.statusTransitionRefused(String(before.status), change.status, objPath);
      }
      write.statusChange = { date: change.date, memo: change.memo };
      await write.update(structure.root, uniqueId, { status: change.status }, true, false);
      return uniqueId;
    });
  }

  /** A record as a create would start it (`action=new`): the values sent and the defaults, nothing written. */
  async newRecord(structure: ObjectStructure, body: Record<string, unknown>): Promise<Row> {
    const object = structure.root.object;
    const values = convertInput(object, body, undefined, childNames(structure.root));
    applyDefaults(object, values);
    const siteAttribute = object.def.siteAttribute;
    const orgAttribute = object.def.orgAttribute;
    if (siteAttribute && orgAttribute && typeof values[siteAttribute] === 'string') {
      const site = await repository.findByKeys(this.db, this.metadata.object('SITE'), [
        values[siteAttribute],
      ]);
      if (!site) throw errors.invalidSite(String(values[siteAttribute]), object.name.toLowerCase());
      values[orgAttribute] = site.orgid ?? null;
    }
    return values;
  }

  async update(
    structure: ObjectStructure,
    id: string,
    body: Record<string, unknown>,
    user: UserProfile,
    options: { merge: boolean } & WriteOptions,
  ): Promise<number> {
    return this.write(
      user,
      async (write) => {
        const uniqueId = await this.resolveId(structure, id, write.db);
        await checkIfMatch(write.db, structure.root.object, uniqueId, options.ifMatch);
        await write.update(structure.root, uniqueId, body, options.merge, true);
        return uniqueId;
      },
      transactionOf(options, (uniqueId) => ({ structure, uniqueId })),
    );
  }

  async remove(
    structure: ObjectStructure,
    id: string,
    user: UserProfile,
    options: WriteOptions = {},
  ): Promise<void> {
    await this.write<number>(
      user,
      async (write) => {
        const uniqueId = await this.resolveId(structure, id, write.db);
        await checkIfMatch(write.db, structure.root.object, uniqueId, options.ifMatch);
        await write.remove(structure.root, uniqueId);
        return uniqueId;
      },
      transactionOf(options, (uniqueId) => ({ structure, uniqueId })),
    );
  }

  /**
   * The columns' limits, read from the catalog on the first write and again after the metadata changed: the schema
   * changes while running only when database configuration is applied (docs/dbconfig.md), which raises the version.
   */
  private columnLimits(): Promise<ColumnLimits> {
    if (this.limitsVersion !== this.metadata.version) {
      this.limits = undefined;
      this.limitsVersion = this.metadata.version;
    }
    if (!this.limits) {
      const loading = ColumnLimits.load(this.db);
      this.limits = loading;
      loading.catch(() => {
        if (this.limits === loading) this.limits = undefined;
      });
    }
    return this.limits;
  }

  /**
   * SYNC: the record the body's key values name is updated (merged with `merge`), or created when there is none.
   * A body without every key value creates (the service may number the missing key).
   */
  async sync(
    structure: ObjectStructure,
    body: Record<string, unknown>,
    user: UserProfile,
    options: { merge: boolean; mayUpdate?: boolean } & WriteOptions,
  ): Promise<{ uniqueId: number; created: boolean }> {
    return this.write(
      user,
      async (write) => {
        const object = structure.root.object;
        const keys = keyValuesOf(object, body, {});
        const existing =
          keys.missing === undefined ? await repository.findByKeys(write.db, object, keys.values) : undefined;
        let result: { uniqueId: number; created: boolean };
        if (existing) {
          if (options.mayUpdate === false) throw errors.notAuthorized(structure.name);
          const uniqueId = Number(existing[object.uniqueId]);
          await checkIfMatch(write.db, object, uniqueId, options.ifMatch);
          await write.update(structure.root, uniqueId, body, options.merge, true);
          result = { uniqueId, created: false };
        } else {
          const row = await write.insert(structure.root, body, {});
          result = { uniqueId: Number(row[object.uniqueId]), created: true };
        }
        return result;
      },
      transactionOf(options, (result) => ({ structure, uniqueId: result.uniqueId })),
    );
  }

  /**
   * Runs writes composed elsewhere (child collections, BULK elements) in one transaction of the write path, with
   * its validation, observers and change notifications.
   */
  async writeWith<T>(
    user: UserProfile,
    options: WriteOptions,
    work: (writer: ResourceWriter) => Promise<T>,
    /** The resource a `transactionid` is recorded with. */
    describe: (value: T) => { structure: ObjectStructure; uniqueId: number },
  ): Promise<T> {
    return this.write(user, work, transactionOf(options, describe));
  }

  /** What every write unit reads from memory, read before its transaction. */
  private async writeSetting(user: UserProfile): Promise<WriteSetting> {
    // Read before the transaction: on the embedded engine a transaction holds the only connection.
    return {
      metadata: this.metadata,
      domains: await this.domains.snapshot(),
      user,
      observers: this.observers,
      writeRules: this.writeRules,
      limits: await this.columnLimits(),
      sites: await this.sites.snapshot(),
      bus: this.storage.bus,
      announced: this.announced,
    };
  }

  /**
   * A write of one statement (see `insertsInOneStatement`) outside any transaction: the statement is one on its
   * own, and carries its change notifications.
   */
  private async writeAlone<T>(user: UserProfile, work: (write: WriteUnit) => Promise<T>): Promise<T> {
    const unit = new WriteUnit(this.db, await this.writeSetting(user));
    try {
      const value = await work(unit);
      await this.storage.bus.notifyAll(this.db, 'object', unit.unnotified());
      for (const objectName of unit.announcedWrites()) this.storage.bus.deliverLocally('object', objectName);
      return value;
    } catch (error) {
      throw translateDatabaseError(error);
    }
  }

  private async write<T>(
    user: UserProfile,
    work: (write: WriteUnit) => Promise<T>,
    transactionId?: TransactionRecord<T>,
  ): Promise<T> {
    const setting = await this.writeSetting(user);
    let announcedWrites: () => string[] = () => [];
    try {
      const result = await this.db.transaction().execute(async (transaction) => {
        const unit = new WriteUnit(transaction, setting);
        announcedWrites = () => unit.announcedWrites();
        // Claimed before anything is written: a repeated request waits here for the first and writes nothing.
        const earlier = transactionId && (await claimTransactionId(transaction, transactionId.id));
        if (transactionId && earlier !== undefined)
          throw errors.duplicateTransaction(transactionId.id, earlier);
        const value = await work(unit);
        if (transactionId) {
          const { structure, uniqueId } = transactionId.resource(value);
          await recordTransactionResource(transaction, transactionId.id, `${structure.name}/${uniqueId}`);
        }
        await this.storage.bus.notifyAll(transaction, 'object', unit.unnotified());
        return value;
      });
      for (const objectName of announcedWrites()) this.storage.bus.deliverLocally('object', objectName);
      return result;
    } catch (error) {
      throw translateDatabaseError(error);
    }
  }
}

/** Whether a rest-id key part can be a value of its attribute (a word for a numeric key names no record). */
function keyPartFits(limits: ColumnLimits, object: ObjectMeta, key: string, part: string): boolean {
  const attribute = object.attributes.get(key);
  if (!attribute) return true;
  const converted = toStored(attribute, part);
  return converted.ok && (typeof converted.value !== 'number' || limits.fits(object, key, converted.value));
}

/** Refuses a write whose `If-Match` names none of the record's current ETag (its rowstamp). */
export async function checkIfMatch(
  db: Kysely<DynamicDatabase>,
  object: ObjectMeta,
  uniqueId: number,
  ifMatch: string | undefined,
): Promise<void> {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const row = await repository.lockByUniqueId(db, object, uniqueId);
  if (!row) throw errors.resourceNotFound(object.name, String(uniqueId));
  if (!etagMatches(ifMatch, row.rowstamp ?? null)) throw errors.preconditionFailed(object.name);
}

/** The ETag of a record: its rowstamp, which every write renews (docs/compatibility.md, "Writes"). */
export const etagOf = (rowstamp: StoredValue | undefined): string => `"${String(rowstamp ?? '')}"`;

/** Whether an `If-Match` list (`"12", W/"13"`, unquoted values accepted) names the rowstamp's ETag. */
export function etagMatches(ifMatch: string, rowstamp: StoredValue): boolean {
  const wanted = String(rowstamp ?? '');
  return ifMatch.split(',').some((part) => {
    const tag = part.trim().replace(/^W\//, '');
    return tag === '*' || tag.replace(/^"(.*)"$/, '$1') === wanted;
  });
}

/** A `transactionid` to claim, and the resource to record with it once written. */
interface TransactionRecord<T> {
  id: string;
  resource: (value: T) => { structure: ObjectStructure; uniqueId: number };
}

function transactionOf<T>(
  options: WriteOptions,
  resource: TransactionRecord<T>['resource'],
): TransactionRecord<T> | undefined {
  return options.transactionId === undefined ? undefined : { id: options.transactionId, resource };
}

/** A database error as the refusal a client gets (a MaximoError), or the error itself when it is none of them. */
export function translateDatabaseError(error: unknown): unknown {
  if (error instanceof MaximoError) return error;
  const code = (error as { code?: unknown }).code;
  if (code === PG_UNIQUE_VIOLATION) return errors.duplicateKey('the key values sent', '', '');
  if (code === PG_FOREIGN_KEY_VIOLATION) return errors.stillReferenced('record', 'other');
  // Class 22 (data exception): a value the client sent that validation let through but the column cannot hold,
  // such as a number beyond the column's precision. Bad input, not a server failure; the database text stays out.
  if (typeof code === 'string' && code.startsWith(PG_DATA_EXCEPTION_CLASS)) {
    return errors.badRequest('A value in the request is out of the range its attribute can hold.');
  }
  return error;
}

/** What `wsmethod:changeStatus` asks for: the new status, when it took effect (default now), and why. */
export interface StatusChange {
  status: string;
  date?: Date;
  memo?: string;
}

/** How many numbers of an autokey are passed over, when taken by records numbered by hand, before giving up. */
const AUTOKEY_ATTEMPTS = 1000;

/** The records one request writes, in its transaction. */
class WriteUnit implements ResourceWriter {
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
  private readonly observers: readonly ObserverEntry[];
  private readonly writeRules: ReadonlyMap<string, WriteRules>;
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
      observers: this.observers,
      writeRules: this.writeRules,
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
    await this.writeRules.get(object.name)?.beforeInsert?.({ db: this.db, object, user: this.user, values });
    stampWrite(object, values, undefined, this.writeStamp());
    const row = await this.insertRecord(object, values);
    await this.observe(object, 'insert', row, undefined, row);
    for (const child of node.children) {
      const entries = childEntries(body, child.name);
      for (const entry of entries)
        await this.insert(child, entry, { ...joinValues(child, row), ...child.values });
    }
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
    await this.writeRules
      .get(object.name)
      ?.beforeUpdate?.({ db: this.db, object, user: this.user, values: changed, before });
    stampWrite(object, changed, before, this.writeStamp());
    await repository.updateRow(this.db, object, uniqueId, changed);
    const after = await repository.findByUniqueId(this.db, object, uniqueId);
    if (after) await this.recordStatus(object, after, before);
    await this.observe(object, 'update', before, before, after);
    for (const child of node.children) {
      if (!hasChildEntries(body, child.name)) continue;
      await this.writeChildren(child, before, childEntries(body, child.name), merge);
    }
  }

  batch(): BatchWriter {
    return new BatchWriter({
      db: this.db,
      metadata: this.metadata,
      domains: this.domains,
      limits: this.limits,
      user: this.user,
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
    await this.writeRules
      .get(object.name)
      ?.beforeDelete?.({ db: this.db, object, user: this.user, values: {}, before });
    for (const child of node.children) {
      const rows = await repository.findAll(this.db, child.object.table, joinPairs(child, before));
      for (const row of rows) await this.remove(child, Number(row[child.object.uniqueId]));
    }
    try {
      await repository.deleteRow(this.db, object, uniqueId);
    } catch (error) {
      if ((error as { code?: unknown }).code === PG_FOREIGN_KEY_VIOLATION) {
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
    };
    for (const { observer, takesPart } of this.observers) {
      if (takesPart(object, operation)) await observer(this.db, write);
    }
  }
}

/** What a write unit works with besides its database: read from memory once per request. */
interface WriteSetting {
  metadata: MetadataRegistry;
  domains: DomainSnapshot;
  user: UserProfile;
  observers: readonly ObserverEntry[];
  writeRules: ReadonlyMap<string, WriteRules>;
  limits: ColumnLimits;
  sites: SiteSnapshot | undefined;
  bus: ChangeBus;
  announced: ReadonlySet<string>;
}

/** Whether a new record with these values has an autokeyed attribute left to number (see `WriteUnit.autokeys`). */
function needsAutokey(object: ObjectMeta, values: Row): boolean {
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

const childNames = (node: StructureNode): ReadonlySet<string> =>
  new Set(node.children.map((child) => child.name));

function hasChildEntries(body: Record<string, unknown>, name: string): boolean {
  return Object.keys(body).some((key) => attributeName(key) === name);
}

function childEntries(body: Record<string, unknown>, name: string): Array<Record<string, unknown>> {
  const key = Object.keys(body).find((candidate) => attributeName(candidate) === name);
  const value = key === undefined ? undefined : body[key];
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw errors.badRequest(`Each entry of the child collection ${name} must be a JSON object.`, {
        attrName: name,
      });
    }
    return entry as Record<string, unknown>;
  });
}

function joinValues(child: StructureNode, parent: Row): Row {
  return Object.fromEntries(
    child.on.map(([parentAttribute, childAttribute]) => [childAttribute, parent[parentAttribute] ?? null]),
  );
}

function joinPairs(child: StructureNode, parent: Row): Array<readonly [string, StoredValue]> {
  return child.on.map(
    ([parentAttribute, childAttribute]) => [childAttribute, parent[parentAttribute] ?? null] as const,
  );
}

/** `_action` of a child entry: Add, Update (Change), AddChange (the default), Delete; anything else is refused. */
function childAction(
  entry: Record<string, unknown>,
  object: ObjectMeta,
): 'add' | 'update' | 'addchange' | 'delete' {
  const sent = Object.entries(entry).find(([name]) => name.toLowerCase() === '_action')?.[1];
  if (sent === undefined || sent === null || sent === '') return 'addchange';
  const action = typeof sent === 'string' ? sent.toLowerCase() : '';
  if (action === 'add' || action === 'delete' || action === 'addchange') return action;
  if (action === 'update' || action === 'change') return 'update';
  throw errors.badRequest(
    `The _action ${String(sent)} is not one of Add, Update, Change, AddChange and Delete.`,
    {
      attrName: '_action',
      attrValue: String(sent),
      objPath: object.name.toLowerCase(),
    },
  );
}

/**
 * The key values a body names: inherited from the parent first, then sent; a key attribute that is not sent is
 * null when it may be null (a domain value without site or organization), else `missing` names it.
 */
export function keyValuesOf(
  object: ObjectMeta,
  body: Record<string, unknown>,
  inherited: Row,
): { values: StoredValue[]; missing?: string } {
  const values: StoredValue[] = [];
  let missing: string | undefined;
  for (const key of object.keys) {
    if (key in inherited) {
      values.push(inherited[key] ?? null);
      continue;
    }
    const attribute = object.attributes.get(key);
    const sent = Object.entries(body).find(([name]) => attributeName(name) === key)?.[1];
    if (sent === undefined || sent === null || sent === '' || !attribute) {
      if (attribute?.required) missing ??= key;
      values.push(null);
      continue;
    }
    const converted = toStored(attribute, sent);
    if (!converted.ok) {
      throw errors.wrongType(
        attribute.title,
        String(sent),
        converted.expected,
        key,
        object.name.toLowerCase(),
      );
    }
    values.push(converted.value);
  }
  return missing === undefined ? { values } : { values, missing };
}

function describeKeys(object: ObjectMeta, values: readonly StoredValue[]): string {
  return object.keys
    .map((key, index) => `${key}=${values[index] === null ? 'null' : String(values[index])}`)
    .join(', ');
}

const sameKey = (stored: StoredValue | undefined, sent: StoredValue | undefined): boolean =>
  (stored ?? null) === null || (sent ?? null) === null
    ? (stored ?? null) === (sent ?? null)
    : String(stored instanceof Date ? stored.toISOString() : stored) ===
      String(sent instanceof Date ? sent.toISOString() : sent);

/**
 * The stored child a sent entry addresses: by its `localref` unique id, by its anchored `href`
 * (`http://childkey#...`), else by its key values.
 */
function findChild(
  object: ObjectMeta,
  existing: readonly Row[],
  entry: Record<string, unknown>,
  inherited: Row,
): { match: Row | undefined; missing?: string; keys?: StoredValue[] } {
  const localref = typeof entry.localref === 'string' ? /\/\d+-(\d+)$/.exec(entry.localref) : null;
  if (localref) return { match: existing.find((row) => String(row[object.uniqueId]) === localref[1]) };
  const anchor =
    typeof entry.href === 'string' ? decodeChildAnchor(entry.href, object.keys.length + 2) : undefined;
  if (anchor) {
    const keys = anchor.slice(2);
    return {
      match: existing.find((row) => object.keys.every((key, index) => sameKey(row[key], keys[index]))),
      keys,
    };
  }
  const { values, missing } = keyValuesOf(object, entry, inherited);
  if (missing !== undefined) return { match: undefined, missing };
  return {
    match: existing.find((row) => object.keys.every((key, index) => sameKey(row[key], values[index]))),
    keys: values,
  };
}
