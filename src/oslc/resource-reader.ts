import type { Kysely } from 'kysely';
import type { UserProfile } from '../auth/types.js';
import type { DynamicDatabase } from '../db/schema.js';
import type { DomainCache, DomainSnapshot } from '../domains/domain-cache.js';
import { errors } from '../errors.js';
import type { MetadataRegistry, ObjectMeta, ObjectStructure } from '../metadata/registry.js';
import { BoundedCache } from '../util/bounded-cache.js';
import type { CacheStatistics } from '../util/cache-statistics.js';
import { resolveChildPath, type ChildStep, type ChildTarget } from './child-path.js';
import type { ColumnLimits, CurrentColumnLimits } from './column-limits.js';
import {
  CompiledPages,
  compileStableMembers,
  createStableSet,
  executeCount,
  executeDistinct,
  executeGroupBy,
  executeMember,
  executePage,
  executeStablePage,
  type Filter,
  type GroupRecord,
  type MemberRecord,
  newStableId,
  type PageWindow,
  planFilters,
  type Predicate,
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
import { decodeRestId } from './rest-id.js';
import { isTextType, toStored, type StoredValue } from './values.js';
import type { ReadTransform } from './write-extensions.js';

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
  /**
   * The texts the query was read from (CollectionParams.planKey), when `select` is the query's own or the whole
   * resource: the plan and its compiled read are then kept for the next read of the same texts.
   */
  planKey?: string;
}

export interface OneResource {
  member: MemberRecord;
  domains: DomainSnapshot;
}

/** Query plans kept for reuse: a few hundred distinct queries cover the clients of one deployment. */
const PLANS_KEPT = 512;

/**
 * The reading side of the resource service: query plans and their pages (plain and stable), counts, groups and
 * distinct values, one member at its own address, and the resolution of rest ids and child addresses. Every member
 * read passes through the read transforms registered for its object.
 */
export class ResourceReader {
  private readonly plans = new BoundedCache<string, QueryPlan>(PLANS_KEPT);
  private plansVersion: number;
  private readonly compiledPages: CompiledPages;

  constructor(
    private readonly db: Kysely<DynamicDatabase>,
    private readonly metadata: MetadataRegistry,
    private readonly domains: DomainCache,
    private readonly readTransforms: ReadonlyMap<string, ReadonlyMap<string, ReadTransform>>,
    private readonly columnLimits: CurrentColumnLimits,
  ) {
    this.plansVersion = metadata.version;
    this.compiledPages = new CompiledPages(db);
  }

  /** Hits and misses of the query plan cache (the metrics read them). */
  get planCacheStatistics(): CacheStatistics {
    return this.plans.statistics;
  }

  /** Hits and misses of the compiled page statements, kept by the shape of their query. */
  get pageStatementStatistics(): CacheStatistics {
    return this.compiledPages.statistics;
  }

  /**
   * The plan of a query. With `key` (the texts the request was read from, see CollectionParams.planKey) the plan is
   * kept and reused, together with its compiled pages, until the metadata changes.
   */
  plan(structure: ObjectStructure, request: QueryRequest, key?: string): QueryPlan {
    if (this.plansVersion !== this.metadata.version) {
      // The change bus told this process (src/metadata): plans and the statements compiled from them are stale.
      this.plans.clear();
      this.compiledPages.clear();
      this.plansVersion = this.metadata.version;
    }
    if (key === undefined) return planQuery(this.metadata, structure, request);
    return this.plans.getOrCompute(`${structure.name}\u0000${key}`, () =>
      planQuery(this.metadata, structure, request),
    );
  }

  async page(query: PageQuery): Promise<PageOfMembers> {
    const extraFilters = query.extraFilters ?? [];
    const reading = executePage(this.db, query.plan, extraFilters, query.window, this.compiledPages);
    // Without a count (most pages) one query runs; the domain values are in memory once loaded. With one, both
    // statements are kept by shape and run side by side, each on a connection of the pool.
    const counting = query.withCount
      ? executeCount(this.db, query.plan, extraFilters, this.compiledPages)
      : undefined;
    const [page, totalCount, domains] = counting
      ? await Promise.all([reading, counting, this.domains.snapshot()])
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
    return executeCount(this.db, plan, extraFilters, this.compiledPages);
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

  private presentOne(member: MemberRecord, reader: UserProfile | null): MemberRecord {
    return this.readTransforms.size === 0 ? member : this.presentRecord(member, reader);
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
    const limits = await this.columnLimits.current();
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
    const key = read.planKey === undefined ? undefined : `member\u0000${read.planKey}`;
    const plan = this.plan(read.structure, query, key);
    const [member, domains] = await Promise.all([
      executeMember(this.db, plan, read.filters, this.compiledPages),
      this.domains.snapshot(),
    ]);
    return member && { member: this.presentOne(member, read.reader ?? null), domains };
  }

  /** A resource of a structure by unique id, as a GET reads it; not found when it does not exist. */
  async readResource(
    structure: ObjectStructure,
    uniqueId: number,
    read: Pick<OneResourceQuery, 'query' | 'select' | 'reader' | 'planKey'>,
  ): Promise<OneResource> {
    const found = await this.readOne({ ...read, structure, filters: [this.byUniqueId(structure, uniqueId)] });
    if (!found) throw errors.resourceNotFound(structure.name, String(uniqueId));
    return found;
  }

  /**
   * A resource at its address (`id`: a rest id or a unique id, as `resolveId` reads it), as a GET reads it, in one
   * statement: the member is selected by its key values (or unique id) in the statement that reads it.
   */
  async readAt(
    structure: ObjectStructure,
    id: string,
    read: Pick<OneResourceQuery, 'query' | 'select' | 'reader' | 'planKey'>,
  ): Promise<OneResource> {
    const filter = await this.addressFilter(structure, id);
    const found = filter && (await this.readOne({ ...read, structure, filters: [filter] }));
    if (!found) throw errors.resourceNotFound(structure.name, id);
    return found;
  }

  /**
   * The filter selecting the resource a rest id or unique id names, with the values `resolveId` looks it up by; or
   * undefined when the id can name no record.
   */
  private async addressFilter(structure: ObjectStructure, id: string): Promise<Filter | undefined> {
    const object = structure.root.object;
    const limits = await this.columnLimits.current();
    if (/^\d{1,15}$/.test(id)) {
      const uniqueId = Number(id);
      return limits.fits(object, object.uniqueId, uniqueId)
        ? this.byUniqueId(structure, uniqueId)
        : undefined;
    }
    const parts = decodeRestId(id, object.keys.length);
    if (
      !parts?.every((part, index) => part === null || keyPartFits(limits, object, object.keys[index]!, part))
    )
      return undefined;
    const predicates = object.keys.map((key, index): Predicate => {
      const attribute = object.attributes.get(key)!;
      const column = { via: [], viaTables: [], object, attribute };
      const part = parts[index] ?? null;
      if (part === null) return { op: 'isNull', column };
      // Text is compared as sent, as `resolveId` compares it (an UPPER key is not upper-cased into a match).
      const converted = toStored(attribute, part);
      const value = isTextType(attribute.type) || !converted.ok ? part : converted.value;
      return { op: 'eq', column, value };
    });
    return { combine: 'and', predicates };
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
}

/** Whether a rest-id key part can be a value of its attribute (a word for a numeric key names no record). */
function keyPartFits(limits: ColumnLimits, object: ObjectMeta, key: string, part: string): boolean {
  const attribute = object.attributes.get(key);
  if (!attribute) return true;
  const converted = toStored(attribute, part);
  return converted.ok && (typeof converted.value !== 'number' || limits.fits(object, key, converted.value));
}
