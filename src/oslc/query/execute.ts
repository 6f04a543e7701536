import type { CompiledQuery, Kysely } from 'kysely';
import { BoundedCache } from '../../util/bounded-cache.js';
import type { DynamicDatabase } from '../../db/schema.js';
import type { ObjectMeta } from '../../metadata/registry.js';
import type { StoredValue } from '../values.js';
import {
  compileChildren,
  compileCount,
  compileDistinct,
  compilePage,
  compileGroupBy,
  compileStablePage,
  aggregateAlias,
  groupAlias,
  rangeAlias,
  relatedAlias,
  type PageWindow,
} from './compile.js';
import { planFilters, type Filter, type GroupPlan, type NodePlan, type QueryPlan } from './plan.js';

/**
 * Execute stage: runs the compiled queries and assembles members: one query for the page, one per child
 * collection for the whole page (never one per member).
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

type RecordWithChildren = MemberRecord & { children: Map<string, MemberRecord[]> };

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
    children: node.children.length === 0 ? NO_CHILDREN : new Map(),
  };
}

const tupleKey = (values: readonly unknown[]): string => JSON.stringify(values);

async function loadChildren(
  db: Kysely<DynamicDatabase>,
  // toRecord gives every record of a node with children a map of its own.
  records: readonly MemberRecord[],
): Promise<void> {
  const node = records[0]?.node;
  if (!node || node.children.length === 0) return;
  const withChildren = records as readonly RecordWithChildren[];
  for (const child of node.children) {
    const parentKeys = new Map<string, StoredValue[]>();
    for (const record of records) {
      const values = child.on.map(([parent]) => record.values[parent] ?? null);
      if (values.some((value) => value === null)) continue;
      parentKeys.set(tupleKey(values), values);
    }
    for (const record of withChildren) record.children.set(child.jsonName, []);
    if (parentKeys.size === 0) continue;
    const rows = await compileChildren(
      db,
      child.node,
      child.on,
      [...parentKeys.values()],
      child.filter,
      child.order,
    ).execute();
    const childRecords = rows.map((row) => toRecord(child.node, row));
    const byParent = new Map<string, MemberRecord[]>();
    for (const record of childRecords) {
      const key = tupleKey(child.on.map(([, column]) => record.values[column] ?? null));
      const list = byParent.get(key);
      if (list) list.push(record);
      else byParent.set(key, [record]);
    }
    for (const record of withChildren) {
      const key = tupleKey(child.on.map(([parent]) => record.values[parent] ?? null));
      record.children.set(child.jsonName, byParent.get(key) ?? []);
    }
    await loadChildren(db, childRecords);
  }
}

/**
 * The compiled SQL of the pages of reused plans. Building and compiling a Kysely query costs about as much CPU as
 * PostgreSQL spends answering it; a client paging through one query sends the same plan again and again.
 */
export class CompiledPages {
  private readonly byPlan = new WeakMap<QueryPlan, BoundedCache<string, CompiledQuery>>();

  constructor(private readonly db: Kysely<DynamicDatabase>) {}

  /** The page of `plan` with the plan's own filters and order. */
  compiled(plan: QueryPlan, window: PageWindow): CompiledQuery {
    let pages = this.byPlan.get(plan);
    if (!pages) {
      pages = new BoundedCache<string, CompiledQuery>(WINDOWS_KEPT_PER_PLAN);
      this.byPlan.set(plan, pages);
    }
    return pages.getOrCompute(`${window.limit}:${window.offset}`, () =>
      compilePage(
        this.db,
        plan.structure.root.object,
        plan.root,
        planFilters(plan),
        plan.order,
        window,
      ).compile(),
    );
  }
}

const WINDOWS_KEPT_PER_PLAN = 64;

/**
 * One page of members: of the plan alone through `pages` (compiled once), or with filters beyond the plan's own
 * (a lookup's) compiled for this request.
 */
export async function executePage(
  db: Kysely<DynamicDatabase>,
  plan: QueryPlan,
  extraFilters: readonly Filter[],
  window: PageWindow,
  pages?: CompiledPages,
): Promise<PageResult> {
  const query =
    pages && extraFilters.length === 0
      ? pages.compiled(plan, window)
      : compilePage(
          db,
          plan.structure.root.object,
          plan.root,
          [...planFilters(plan), ...extraFilters],
          plan.order,
          window,
        ).compile();
  const { rows } = (await db.executeQuery(query)) as { rows: Row[] };
  const hasMore = rows.length > window.limit;
  const members = rows.slice(0, window.limit).map((row) => toRecord(plan.root, row));
  await loadChildren(db, members);
  return { members, hasMore };
}

/** A page of a stable page set; whether more follow is known from the set's size, not from the rows. */
export async function executeStablePage(
  db: Kysely<DynamicDatabase>,
  plan: QueryPlan,
  stableId: string,
  window: PageWindow,
): Promise<MemberRecord[]> {
  const rows = await compileStablePage(db, plan.structure.root.object, plan.root, stableId, window).execute();
  const members = rows.map((row) => toRecord(plan.root, row));
  await loadChildren(db, members);
  return members;
}

export async function executeCount(
  db: Kysely<DynamicDatabase>,
  object: ObjectMeta,
  filters: readonly Filter[],
): Promise<number> {
  const row = await compileCount(db, object, filters).executeTakeFirst();
  return Number(row?.count ?? 0);
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
