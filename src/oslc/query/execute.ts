import type { CompiledQuery, Kysely } from 'kysely';
import { BoundedCache } from '../../util/bounded-cache.js';
import type { CacheStatistics } from '../../util/cache-statistics.js';
import { forgetPrepared, preparedStatement, runKept } from '../../db/prepared-statements.js';
import type { DynamicDatabase } from '../../db/schema.js';
import type { ObjectMeta } from '../../metadata/registry.js';
import type { StoredValue } from '../values.js';
import { parseDate, parseTimestamp } from '../../db/timestamps.js';
import type { MaxType } from '../../metadata/types.js';
import {
  childrenAlias,
  compileCount,
  compileDistinct,
  compilePage,
  compileGroupBy,
  compileStablePage,
  aggregateAlias,
  fetchedAttributes,
  groupAlias,
  rangeAlias,
  relatedAlias,
  type PageWindow,
} from './compile.js';
import {
  bindSlots,
  filterValues,
  filtersShape,
  planShape,
  slotFilters,
  slotsOf,
  type SlottedSql,
} from './page-shapes.js';
import { planFilters, type Filter, type GroupPlan, type NodePlan, type QueryPlan } from './plan.js';

/**
 * Execute stage: runs the compiled queries and assembles members: one statement for a page (or one member) with
 * every child collection it selects, which the database sends as JSON arrays (compile.ts, `childCollection`).
 */

export interface MemberRecord {
  node: NodePlan;
  /** Fetched attribute values by attribute name, plus `rowstamp`. */
  values: Readonly<Record<string, StoredValue>>;
  /** Values of the node's dot-notation selections, in `node.related` order. */
  related: readonly StoredValue[];
  /** Child collections and 1:n relations by JSON name. */
  children: ReadonlyMap<string, readonly MemberRecord[]>;
}

export interface PageResult {
  members: MemberRecord[];
  hasMore: boolean;
}

type Row = Record<string, unknown>;

/** Shared by the members of nodes without children or dot-notation values: most members of most pages. */
const NO_CHILDREN: ReadonlyMap<string, readonly MemberRecord[]> = new Map();
const NO_RELATED: readonly StoredValue[] = [];

function toRecord(node: NodePlan, row: Row): MemberRecord {
  return {
    node,
    values: row as Record<string, StoredValue>,
    related:
      node.related.length === 0
        ? NO_RELATED
        : node.related.map((_, index) => (row[relatedAlias(index)] ?? null) as StoredValue),
    children: node.children.length === 0 ? NO_CHILDREN : childrenOf(node, row),
  };
}

/** The child collections of a row, as the database sent them: one JSON array of rows per child. */
function childrenOf(node: NodePlan, row: Row): Map<string, MemberRecord[]> {
  const children = new Map<string, MemberRecord[]>();
  node.children.forEach((child, index) => {
    const rows = (row[childrenAlias(index)] ?? []) as Row[];
    children.set(
      child.jsonName,
      rows.map((json) => toRecord(child.node, storedRow(child.node, json))),
    );
  });
  return children;
}

/** A JSON value back into the stored value the driver reads from the column (src/db/database.ts, parsers). */
type FromJson = (value: unknown) => StoredValue;

const asIs: FromJson = (value) => (value ?? null) as StoredValue;
/** `NaN` and infinities are the only numbers JSON carries as text. */
const asNumber: FromJson = (value) => (typeof value === 'string' ? Number(value) : asIs(value));
const asTimestamp: FromJson = (value) => (typeof value === 'string' ? parseTimestamp(value) : asIs(value));
const asDate: FromJson = (value) => (typeof value === 'string' ? parseDate(value) : asIs(value));

const FROM_JSON: { readonly [Type in MaxType]: FromJson } = {
  ALN: asIs,
  UPPER: asIs,
  LOWER: asIs,
  INTEGER: asNumber,
  BIGINT: asNumber,
  DECIMAL: asNumber,
  AMOUNT: asNumber,
  YORN: asIs,
  DATE: asDate,
  DATETIME: asTimestamp,
};

/** How each column a node reads comes back from JSON, worked out once per plan node. */
const columnsByNode = new WeakMap<NodePlan, ReadonlyArray<readonly [string, FromJson]>>();

function jsonColumns(node: NodePlan): ReadonlyArray<readonly [string, FromJson]> {
  let columns = columnsByNode.get(node);
  if (!columns) {
    const type = (name: string) => node.object.attributes.get(name)?.type;
    columns = [
      ...fetchedAttributes(node).map((name): [string, FromJson] => [name, FROM_JSON[type(name) ?? 'ALN']]),
      ['rowstamp', asNumber],
      ...node.related.map((related, index): [string, FromJson] => [
        relatedAlias(index),
        FROM_JSON[related.column.attribute.type],
      ]),
      ...node.children.map((_, index): [string, FromJson] => [childrenAlias(index), asIs]),
    ];
    columnsByNode.set(node, columns);
  }
  return columns;
}

/**
 * A child row as the database wrote it in JSON, with the values the driver would have read from its columns:
 * dates as Date, numbers as numbers, so that a member reads and is written the same whichever way it was read.
 */
function storedRow(node: NodePlan, json: Row): Row {
  const row: Row = {};
  for (const [name, fromJson] of jsonColumns(node)) row[name] = fromJson(json[name]);
  return row;
}

/** Statements of page shapes kept: a few hundred distinct queries cover the clients of one deployment. */
const PAGE_STATEMENTS_KEPT = 1024;

/** The shape of a plan's own page (and of its filters alone) and the values it binds, worked out once per plan. */
interface PlanShape {
  shape: string;
  filters: string;
  values: readonly unknown[];
}

/**
 * The compiled SQL of pages by the shape of their query (page-shapes.ts), with the values bound afresh by each
 * request, and of the reads of one member of reused plans. Building and compiling a Kysely query costs about as much
 * CPU as PostgreSQL spends answering it; a client paging through one query sends the same shape again and again,
 * clients of one screen send it with other values, and a client reading members one by one the same selection.
 * Kept statements are dropped when the metadata changes (`clear`, from the reader that hears it).
 */
export class CompiledPages {
  private readonly pages = new BoundedCache<string, SlottedSql>(PAGE_STATEMENTS_KEPT);
  private readonly shapes = new WeakMap<QueryPlan, PlanShape>();
  private readonly membersByPlan = new WeakMap<QueryPlan, BoundedCache<string, SlottedSql>>();
  /**
   * The statements of a plan alone (no filters beyond its own), bound with its own values, by window (or `count`):
   * a kept plan's next page is then found without building and hashing its shape's long key.
   */
  private boundByPlan = new WeakMap<QueryPlan, BoundedCache<string, CompiledQuery>>();

  constructor(private readonly db: Kysely<DynamicDatabase>) {}

  /** Hits and misses of the page statements (by shape). */
  get statistics(): CacheStatistics {
    return this.pages.statistics;
  }

  /** Forgets every kept statement: the metadata they were compiled from changed. */
  clear(): void {
    this.pages.clear();
    this.boundByPlan = new WeakMap();
    forgetPrepared();
  }

  /** `plan`'s own statement under `key`, bound with the plan's values: built by `bind` once, counted as a hit after. */
  private boundOf(plan: QueryPlan, key: string, bind: () => CompiledQuery): CompiledQuery {
    let bound = this.boundByPlan.get(plan);
    if (!bound) {
      bound = new BoundedCache<string, CompiledQuery>(WINDOWS_KEPT_PER_PLAN);
      this.boundByPlan.set(plan, bound);
    }
    const query = bound.get(key);
    if (query === undefined) {
      const made = bind();
      bound.set(key, made);
      return made;
    }
    this.pages.statistics.hits += 1;
    return query;
  }

  /** The shape of `plan`'s own page and filters, and their values. */
  private planShapeOf(plan: QueryPlan): PlanShape {
    let own = this.shapes.get(plan);
    if (!own) {
      const filters = planFilters(plan);
      own = {
        shape: planShape(plan, filters),
        filters: filtersShape(filters),
        values: filterValues(filters),
      };
      this.shapes.set(plan, own);
    }
    return own;
  }

  /** The page of `plan` with the plan's own filters and order, and `extraFilters` (a lookup's) after them. */
  compiled(plan: QueryPlan, window: PageWindow, extraFilters: readonly Filter[] = []): CompiledQuery {
    if (extraFilters.length === 0) {
      return this.boundOf(plan, `${window.limit}:${window.offset}`, () =>
        this.bound(plan, window, extraFilters),
      );
    }
    return this.bound(plan, window, extraFilters);
  }

  /** `compiled`, through the statements kept by shape. */
  private bound(plan: QueryPlan, window: PageWindow, extraFilters: readonly Filter[]): CompiledQuery {
    const own = this.planShapeOf(plan);
    const extra = extraFilters.length === 0 ? '' : filtersShape(extraFilters);
    const key = `${own.shape}\u0000${extra}\u0000${window.limit}:${window.offset}`;
    const read = this.pages.getOrCompute(key, () => {
      const slotted = slotFilters([...planFilters(plan), ...extraFilters]);
      const object = plan.structure.root.object;
      const query = compilePage(this.db, object, plan.root, slotted.filters, plan.order, window);
      return kept(query.compile());
    });
    return bindSlots(read, boundValues(own, extraFilters));
  }

  /**
   * The count of `plan`'s members with `extraFilters`: kept by the object and the shape of the filters alone (the
   * selection and order do not change a count), with the values bound afresh, like a page.
   */
  count(plan: QueryPlan, extraFilters: readonly Filter[] = []): CompiledQuery {
    if (extraFilters.length === 0)
      return this.boundOf(plan, 'count', () => this.boundCount(plan, extraFilters));
    return this.boundCount(plan, extraFilters);
  }

  /** `count`, through the statements kept by shape. */
  private boundCount(plan: QueryPlan, extraFilters: readonly Filter[]): CompiledQuery {
    const own = this.planShapeOf(plan);
    const object = plan.structure.root.object;
    const extra = extraFilters.length === 0 ? '' : filtersShape(extraFilters);
    const key = `count\u0000${object.name}@${object.table}\u0000${own.filters}\u0000${extra}`;
    const read = this.pages.getOrCompute(key, () => {
      const slotted = slotFilters([...planFilters(plan), ...extraFilters]);
      return kept(compileCount(this.db, object, slotted.filters).compile());
    });
    return bindSlots(read, boundValues(own, extraFilters));
  }

  /**
   * The read of one member of `plan` selected by `filters` (none of the plan's own): compiled once per shape of
   * the filters (which columns, compared how) with placeholders for their values, which each read binds afresh.
   * Undefined when the filters are not of a shape kept (anything but columns of the member equal to a value or null).
   */
  member(plan: QueryPlan, filters: readonly Filter[]): CompiledQuery | undefined {
    const shape = memberFilterShape(filters);
    if (shape === undefined) return undefined;
    let reads = this.membersByPlan.get(plan);
    if (!reads) {
      reads = new BoundedCache<string, SlottedSql>(WINDOWS_KEPT_PER_PLAN);
      this.membersByPlan.set(plan, reads);
    }
    const slotted = slotFilters(filters);
    const read = reads.getOrCompute(shape, () => {
      const object = plan.structure.root.object;
      const all = [...planFilters(plan), ...slotted.filters];
      return kept(compilePage(this.db, object, plan.root, all, plan.order, ONE_MEMBER).compile());
    });
    return bindSlots(read, slotted.values);
  }
}

/** The values a kept statement of `own` with `extraFilters` binds, in slot order. */
function boundValues(own: PlanShape, extraFilters: readonly Filter[]): readonly unknown[] {
  return extraFilters.length === 0 ? own.values : [...own.values, ...filterValues(extraFilters)];
}

/** A statement kept for its shape, which PostgreSQL is asked to keep prepared too (src/db/prepared-statements.ts). */
function kept(compiled: CompiledQuery): SlottedSql {
  preparedStatement(compiled.sql);
  return slotsOf(compiled);
}

/** The window of a read of one member. */
export const ONE_MEMBER: PageWindow = { limit: 1, offset: 0 };

/** The shape of filters that name one member (its unique id or key values), or undefined for any other. */
function memberFilterShape(filters: readonly Filter[]): string | undefined {
  for (const filter of filters) {
    for (const predicate of filter.predicates) {
      if ((predicate.op !== 'eq' && predicate.op !== 'isNull') || predicate.column.via.length > 0)
        return undefined;
    }
  }
  return filtersShape(filters);
}

const WINDOWS_KEPT_PER_PLAN = 64;

/** One page of members of the plan, with filters beyond the plan's own (a lookup's), through `pages`. */
export async function executePage(
  db: Kysely<DynamicDatabase>,
  plan: QueryPlan,
  extraFilters: readonly Filter[],
  window: PageWindow,
  pages: CompiledPages,
): Promise<PageResult> {
  const rows = await runKept<Row>(db, pages.compiled(plan, window, extraFilters));
  const hasMore = rows.length > window.limit;
  const count = hasMore ? window.limit : rows.length;
  const members = new Array<MemberRecord>(count);
  for (let index = 0; index < count; index++) members[index] = toRecord(plan.root, rows[index]!);
  return { members, hasMore };
}

/**
 * One member selected by `filters` (beyond the plan's own, which a member at its own address ignores): one statement
 * with its child collections, compiled once per shape through `pages`.
 */
export async function executeMember(
  db: Kysely<DynamicDatabase>,
  plan: QueryPlan,
  filters: readonly Filter[],
  pages: CompiledPages,
): Promise<MemberRecord | undefined> {
  const kept = pages.member(plan, filters);
  const rows = kept
    ? await runKept<Row>(db, kept)
    : await compilePage(
        db,
        plan.structure.root.object,
        plan.root,
        [...planFilters(plan), ...filters],
        plan.order,
        ONE_MEMBER,
      ).execute();
  return rows[0] && toRecord(plan.root, rows[0]);
}

/** A page of a stable page set; whether more follow is known from the set's size, not from the rows. */
export async function executeStablePage(
  db: Kysely<DynamicDatabase>,
  plan: QueryPlan,
  stableId: string,
  window: PageWindow,
): Promise<MemberRecord[]> {
  const rows = await compileStablePage(db, plan.structure.root.object, plan.root, stableId, window).execute();
  return rows.map((row) => toRecord(plan.root, row));
}

/** The number of members of `plan` with `extraFilters`: through `pages`, one statement kept per filter shape. */
export async function executeCount(
  db: Kysely<DynamicDatabase>,
  plan: QueryPlan,
  extraFilters: readonly Filter[],
  pages: CompiledPages,
): Promise<number> {
  const rows = await runKept<Row>(db, pages.count(plan, extraFilters));
  return Number(rows[0]?.count ?? 0);
}

export async function executeDistinct(
  db: Kysely<DynamicDatabase>,
  object: ObjectMeta,
  attribute: string,
  filters: readonly Filter[],
): Promise<StoredValue[]> {
  const rows = await compileDistinct(db, object, attribute, filters).execute();
  return rows.map((row) => row.value as StoredValue);
}

/** One group of a grouped answer: the group attributes' values and the aggregates, in the plan's order. */
export interface GroupRecord {
  values: readonly StoredValue[];
  /** Per group attribute with ranges (`gbrange`), the index of the range the group is, else null. */
  ranges: readonly (number | null)[];
  aggregates: readonly (number | null)[];
}

export async function executeGroupBy(
  db: Kysely<DynamicDatabase>,
  object: ObjectMeta,
  group: GroupPlan,
  filters: readonly Filter[],
): Promise<GroupRecord[]> {
  const rows = await compileGroupBy(db, object, group, filters).execute();
  return rows.map((row) => ({
    values: group.groups.map((_, index) => (row[groupAlias(index)] ?? null) as StoredValue),
    ranges: group.groups.map((_, index) => {
      const range = group.ranges[index] ? row[rangeAlias(index)] : null;
      return range === null || range === undefined ? null : Number(range);
    }),
    aggregates: group.aggregates.map((_, index) => {
      const value = row[aggregateAlias(index)];
      return value === null || value === undefined ? null : Number(value);
    }),
  }));
}
