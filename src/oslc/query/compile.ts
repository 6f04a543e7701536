import {
  sql,
  type AliasedExpression,
  type Expression,
  type ExpressionBuilder,
  type InsertQueryBuilder,
  type InsertResult,
  type RawBuilder,
  type Kysely,
  type SelectQueryBuilder,
  type SqlBool,
} from 'kysely';
import type { DynamicDatabase } from '../../db/schema.js';
import type { ObjectMeta } from '../../metadata/registry.js';
import type { StoredValue } from '../values.js';
import type { AggregateFunction } from './ast.js';
import type { GroupFilterOp } from './group-params.js';
import type { HavingPlan, RangePlan } from './group-plan.js';
import type {
  ChildPlan,
  ColumnRef,
  Filter,
  GroupPlan,
  NodePlan,
  OrderPlan,
  Predicate,
  PredicateOp,
} from './plan.js';

/**
 * Compile stage: turns a plan into Kysely queries. Table and column names come only from the metadata the plan
 * resolved; every value is a bound parameter.
 */

type Db = Kysely<DynamicDatabase>;
type Eb = ExpressionBuilder<DynamicDatabase, string>;
export type MemberQuery = SelectQueryBuilder<DynamicDatabase, string, Record<string, unknown>>;

/** Alias of the table a node is read from. */
export const NODE_ALIAS = 't0';

/** Column alias of the n-th related (dot-notation) value of a node. */
export const relatedAlias = (index: number): string => `__related${index}`;

/** Column alias of the n-th child collection of a node: its rows as a JSON array (see childCollection). */
export const childrenAlias = (index: number): string => `__children${index}`;

/** Column alias of the n-th order term of a child row, which orders the rows of its JSON array. */
const orderAlias = (index: number): string => `__order${index}`;

/** Alias of the table of a node `depth` child collections below the root (the root is NODE_ALIAS). */
const aliasAt = (depth: number): string => `t${depth}`;

/** Attributes every member needs whatever the select: its keys (href), unique id and rowstamp. */
export function fetchedAttributes(node: NodePlan): string[] {
  const names = new Set<string>([...node.object.keys, node.object.uniqueId]);
  for (const selected of node.attributes) names.add(selected.attribute.name);
  for (const child of node.children) for (const [parent] of child.on) names.add(parent);
  return [...names];
}

/** A value of the node row, or of a row reached through 1:1 relations (a correlated scalar subquery). */
function columnExpression(db: Db, ownerAlias: string, column: ColumnRef): Expression<unknown> {
  if (column.via.length === 0) return sql.ref(`${ownerAlias}.${column.attribute.name}`);
  const aliases = column.via.map((_, index) => `${ownerAlias}_r${index + 1}`);
  const [first, ...rest] = column.via;
  let query = db.selectFrom(`${column.viaTables[0]} as ${aliases[0]}`) as unknown as MemberQuery;
  rest.forEach((relation, index) => {
    const left = aliases[index]!;
    const right = aliases[index + 1]!;
    query = query.innerJoin(`${column.viaTables[index + 1]} as ${right}`, (join) =>
      relation.on.reduce((acc, [from, to]) => acc.onRef(`${right}.${to}`, '=', `${left}.${from}`), join),
    ) as unknown as MemberQuery;
  });
  for (const [from, to] of first!.on)
    query = query.whereRef(`${aliases[0]}.${to}`, '=', `${ownerAlias}.${from}`);
  return query
    .select(sql.ref(`${aliases[aliases.length - 1]}.${column.attribute.name}`).as('value'))
    .limit(1);
}

/**
 * The predicate of an operator: a handler sees only the fields its operator carries. (An intersection rather than
 * `Extract`: operators that share a shape share one member of `Predicate`, which `Extract` of one operator misses.)
 */
type PredicateOf<Op extends PredicateOp> = Predicate & { op: Op };
type Comparison<Op extends PredicateOp> = (
  eb: Eb,
  left: Expression<unknown>,
  predicate: PredicateOf<Op>,
) => Expression<SqlBool>;

/**
 * A value as a bound parameter. BIGINT values are typed explicitly: some BIGINT attributes are 32-bit columns
 * (the unique ids), and PostgreSQL would type the parameter as the column and refuse a larger value instead of
 * comparing it.
 */
function bound(column: ColumnRef, value: StoredValue): StoredValue | Expression<unknown> {
  return column.attribute.type === 'BIGINT' ? sql`cast(${value} as bigint)` : value;
}

type CompareOp = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';

const compare =
  (operator: '=' | '<>' | '>' | '>=' | '<' | '<='): Comparison<CompareOp> =>
  (eb, left, predicate) =>
    eb(left, operator, bound(predicate.column, predicate.value));

const like =
  (negated: boolean): Comparison<'like' | 'notLike'> =>
  (eb, left, predicate) => {
    const operator = predicate.caseInsensitive
      ? negated
        ? 'not ilike'
        : 'ilike'
      : negated
        ? 'not like'
        : 'like';
    return eb(left, operator, predicate.pattern);
  };

const list =
  (negated: boolean): Comparison<'in' | 'notIn'> =>
  (eb, left, predicate) => {
    if (predicate.values.length === 0) return sql<SqlBool>`${sql.lit(negated)}`;
    return eb(
      left,
      negated ? 'not in' : 'in',
      predicate.values.map((value) => bound(predicate.column, value)),
    );
  };

/**
 * The operator table: one SQL form per predicate operator, checked exhaustive by the compiler; each handler is
 * typed with its operator's predicate, so none checks at run time what the type already says.
 */
const OPERATORS: { readonly [Op in PredicateOp]: Comparison<Op> } = {
  eq: compare('='),
  ne: compare('<>'),
  gt: compare('>'),
  ge: compare('>='),
  lt: compare('<'),
  le: compare('<='),
  like: like(false),
  notLike: like(true),
  isNull: (eb, left) => eb(left, 'is', null),
  isNotNull: (eb, left) => eb(left, 'is not', null),
  in: list(false),
  notIn: list(true),
};

/** One predicate through its operator's handler (the operator picks the handler and types the predicate). */
function comparison<Op extends PredicateOp>(
  eb: Eb,
  left: Expression<unknown>,
  op: Op,
  predicate: PredicateOf<Op>,
): Expression<SqlBool> {
  const handler: Comparison<Op> = OPERATORS[op];
  return handler(eb, left, predicate);
}

export function filterExpression(
  db: Db,
  eb: Eb,
  alias: string,
  filter: Filter,
): Expression<SqlBool> | undefined {
  if (filter.predicates.length === 0) return undefined;
  const parts = filter.predicates.map((predicate) =>
    comparison(eb, columnExpression(db, alias, predicate.column), predicate.op, predicate),
  );
  return filter.combine === 'or' ? eb.or(parts) : eb.and(parts);
}

function selectNode(db: Db, query: MemberQuery, node: NodePlan, depth = 0): MemberQuery {
  const alias = aliasAt(depth);
  let selected = query.select(fetchedAttributes(node).map((name) => sql.ref(`${alias}.${name}`).as(name)));
  selected = selected.select(sql.ref(`${alias}.rowstamp`).as('rowstamp'));
  node.related.forEach((related, index) => {
    selected = selected.select(
      // A subquery is parenthesized by the compiler; a plain column needs none.
      sql`${columnExpression(db, alias, related.column)}`.as(relatedAlias(index)),
    );
  });
  node.children.forEach((child, index) => {
    selected = selected.select(childCollection(db, child, depth + 1).as(childrenAlias(index)));
  });
  return selected;
}

/**
 * The rows of a child collection (or a 1:n relation) of the row at `depth - 1`, as one JSON array in its order,
 * read in the statement of the parent: a correlated subquery, so that a member and its child collections, however
 * deep, are one statement and one round trip. The child's `.where` and its values stay bound parameters; an empty
 * collection is `[]`, as is the collection of a parent whose join values are null (`=` matches no null), unless the
 * child is null-safe (a null matches a null).
 */
function childCollection(db: Db, child: ChildPlan, depth: number): RawBuilder<unknown> {
  const alias = aliasAt(depth);
  const parent = aliasAt(depth - 1);
  let rows = db.selectFrom(`${child.node.object.table} as ${alias}`) as unknown as MemberQuery;
  const equals = child.nullSafe ? 'is not distinct from' : '=';
  for (const [parentColumn, childColumn] of child.on)
    rows = rows.whereRef(`${alias}.${childColumn}`, equals, `${parent}.${parentColumn}`);
  if (child.filter) rows = withFilters(db, rows, [child.filter], alias);
  rows = selectNode(db, rows, child.node, depth);
  const terms = orderTerms(child.node.object, child.order, alias);
  rows = rows.select(terms.map(([column], index) => sql.ref(column).as(orderAlias(index))));
  const set = `c${depth}`;
  const ordering = sql.join(
    terms.map(([, direction], index) => sql`${sql.ref(`${set}.${orderAlias(index)}`)} ${sql.raw(direction)}`),
  );
  return sql`(select coalesce(json_agg(row_to_json(${sql.ref(set)}) order by ${ordering}), json_build_array()) from (${rows}) as ${sql.ref(set)})`;
}

/** The page order: the requested attributes, then the unique id. */
function orderTerms(
  object: ObjectMeta,
  order: readonly OrderPlan[],
  alias = NODE_ALIAS,
): Array<[string, 'asc' | 'desc']> {
  // The unique id breaks ties, so that pages are stable and walking them visits every row once.
  return [
    ...order.map((term): [string, 'asc' | 'desc'] => [`${alias}.${term.attribute.name}`, term.direction]),
    [`${alias}.${object.uniqueId}`, 'asc'],
  ];
}

function applyOrder(query: MemberQuery, object: ObjectMeta, order: readonly OrderPlan[]): MemberQuery {
  let ordered = query;
  for (const [column, direction] of orderTerms(object, order))
    ordered = ordered.orderBy(sql.ref(column), direction);
  return ordered;
}

export interface PageWindow {
  limit: number;
  offset: number;
}

/** The members of one page of the root collection (one row more than the page, to tell if another follows). */
export function compilePage(
  db: Db,
  object: ObjectMeta,
  node: NodePlan,
  filters: readonly Filter[],
  order: readonly OrderPlan[],
  window: PageWindow,
): MemberQuery {
  let query = db.selectFrom(`${object.table} as ${NODE_ALIAS}`) as unknown as MemberQuery;
  query = withFilters(db, query, filters);
  query = selectNode(db, query, node);
  return applyOrder(query, object, order)
    .limit(window.limit + 1)
    .offset(window.offset);
}

export function compileCount(db: Db, object: ObjectMeta, filters: readonly Filter[]): MemberQuery {
  const query = db.selectFrom(`${object.table} as ${NODE_ALIAS}`) as unknown as MemberQuery;
  return withFilters(db, query, filters).select(sql<number>`count(*)::integer`.as('count'));
}

/** Distinct values of one attribute over the filtered collection, in ascending order. */
export function compileDistinct(
  db: Db,
  object: ObjectMeta,
  attribute: string,
  filters: readonly Filter[],
): MemberQuery {
  const query = db.selectFrom(`${object.table} as ${NODE_ALIAS}`) as unknown as MemberQuery;
  return withFilters(db, query, filters)
    .select(sql.ref(`${NODE_ALIAS}.${attribute}`).as('value'))
    .distinct()
    .where(sql.ref(`${NODE_ALIAS}.${attribute}`), 'is not', null)
    .orderBy('value');
}

function withFilters(
  db: Db,
  query: MemberQuery,
  filters: readonly Filter[],
  alias = NODE_ALIAS,
): MemberQuery {
  let filtered = query;
  for (const filter of filters) {
    if (filter.predicates.length === 0) continue;
    filtered = filtered.where((eb) => filterExpression(db, eb, alias, filter) ?? sql<SqlBool>`true`);
  }
  return filtered;
}

// ---- stable paging ------------------------------------------------------------------------------------------

/** Members of stable page sets (migration 0003-stable-pages): one row per member, numbered in page order. */
export const STABLE_MEMBER_TABLE = 'oslc_stable_member';
const STABLE_ALIAS = 's';

export type StableMembersInsert = InsertQueryBuilder<DynamicDatabase, string, InsertResult>;

/**
 * Fixes the members of a stable page set in one statement: the unique id of every row that passes the filters,
 * numbered 1, 2, ... in page order, written by the database without a round trip through the service.
 */
export function compileStableMembers(
  db: Db,
  object: ObjectMeta,
  filters: readonly Filter[],
  order: readonly OrderPlan[],
  stableId: string,
): StableMembersInsert {
  const ordering = sql.join(
    orderTerms(object, order).map(([column, direction]) => sql`${sql.ref(column)} ${sql.raw(direction)}`),
  );
  let members = db.selectFrom(`${object.table} as ${NODE_ALIAS}`) as unknown as MemberQuery;
  members = withFilters(db, members, filters).select([
    sql<string>`cast(${stableId} as varchar)`.as('stableid'),
    sql<number>`row_number() over (order by ${ordering})`.as('position'),
    sql.ref(`${NODE_ALIAS}.${object.uniqueId}`).as('uniqueid'),
  ]);
  return db.insertInto(STABLE_MEMBER_TABLE).columns(['stableid', 'position', 'uniqueid']).expression(members);
}

/**
 * One page of a stable page set: the members at positions after `offset`, read in their fixed order. Rows
 * deleted since the set was made are simply missing from their page.
 */
export function compileStablePage(
  db: Db,
  object: ObjectMeta,
  node: NodePlan,
  stableId: string,
  window: PageWindow,
): MemberQuery {
  let query = db
    .selectFrom(`${object.table} as ${NODE_ALIAS}`)
    .innerJoin(`${STABLE_MEMBER_TABLE} as ${STABLE_ALIAS}`, (join) =>
      join.onRef(`${STABLE_ALIAS}.uniqueid`, '=', `${NODE_ALIAS}.${object.uniqueId}`),
    ) as unknown as MemberQuery;
  query = query
    .where(sql.ref(`${STABLE_ALIAS}.stableid`), '=', stableId)
    .where(sql.ref(`${STABLE_ALIAS}.position`), '>', window.offset)
    .where(sql.ref(`${STABLE_ALIAS}.position`), '<=', window.offset + window.limit);
  return selectNode(db, query, node).orderBy(sql.ref(`${STABLE_ALIAS}.position`), 'asc');
}

// ---- group by -----------------------------------------------------------------------------------------------

/** Column alias of the n-th group attribute and of the n-th aggregate of a grouped answer. */
export const groupAlias = (index: number): string => `__group${index}`;
export const aggregateAlias = (index: number): string => `__aggregate${index}`;

/** One SQL form per aggregate function; checked exhaustive by the compiler like the operator table. */
const AGGREGATE_SQL: {
  readonly [Fn in AggregateFunction]: (column: Expression<unknown>) => Expression<unknown>;
} = {
  count: () => sql`count(*)::integer`,
  sum: (column) => sql`sum(${column})`,
  avg: (column) => sql`avg(${column})`,
  min: (column) => sql`min(${column})`,
  max: (column) => sql`max(${column})`,
};

/** Column alias of the range index of the n-th group attribute (`gbrange`): null for a value in no range. */
export const rangeAlias = (index: number): string => `__range${index}`;

const HAVING_OPS: Readonly<Record<GroupFilterOp, string>> = {
  '=': '=',
  '!=': '<>',
  '>': '>',
  '>=': '>=',
  '<': '<',
  '<=': '<=',
};

function rangeCondition(column: Expression<unknown>, range: RangePlan): Expression<SqlBool> {
  if (range.kind === 'values') return sql<SqlBool>`${column} in (${sql.join(range.values)})`;
  const low = sql.raw(range.lowInclusive ? '>=' : '>');
  const high = sql.raw(range.highInclusive ? '<=' : '<');
  return sql<SqlBool>`(${column} ${low} ${range.low} and ${column} ${high} ${range.high})`;
}

function havingSql(having: HavingPlan): Expression<SqlBool> {
  if (having.kind !== 'compare') {
    return sql<SqlBool>`(${sql.join(having.terms.map(havingSql), sql.raw(having.kind === 'and' ? ' and ' : ' or '))})`;
  }
  const target = having.target;
  const left =
    'group' in target
      ? sql.ref(`${NODE_ALIAS}.${target.group.name}`)
      : AGGREGATE_SQL[target.fn](
          target.attribute ? sql.ref(`${NODE_ALIAS}.${target.attribute.name}`) : sql`*`,
        );
  return sql<SqlBool>`${left} ${sql.raw(HAVING_OPS[having.op])} ${having.value}`;
}

/**
 * The groups of the filtered collection (`gbcols`): one row per distinct combination of the group attributes with
 * its aggregates, ordered by `gbsortby` and then by the group attributes, so the answer has a fixed order. A group
 * attribute with ranges (`gbrange`) is selected as two columns: the index of the range its value falls in, and the
 * value when it falls in none; both are grouped by their position in the select list, as the expressions carry
 * bound values the database would not match with a second copy. `gbfilter` is the HAVING clause.
 */
export function compileGroupBy(
  db: Db,
  object: ObjectMeta,
  group: GroupPlan,
  filters: readonly Filter[],
): MemberQuery {
  let query = db.selectFrom(`${object.table} as ${NODE_ALIAS}`) as unknown as MemberQuery;
  query = withFilters(db, query, filters);
  const selected: Array<AliasedExpression<unknown, string>> = [];
  const grouped: Array<Expression<unknown>> = [];
  group.groups.forEach((attribute, index) => {
    const column = sql.ref(`${NODE_ALIAS}.${attribute.name}`);
    const ranges = group.ranges[index];
    if (!ranges) {
      selected.push(column.as(groupAlias(index)));
      grouped.push(column);
      return;
    }
    const conditions = ranges.map((range) => rangeCondition(column, range));
    const which = sql.join(
      conditions.map((condition, position) => sql`when ${condition} then ${sql.lit(position)}`),
      sql` `,
    );
    selected.push(
      sql`case when ${sql.join(conditions, sql` or `)} then null else ${column} end`.as(groupAlias(index)),
    );
    grouped.push(sql.lit(selected.length));
    selected.push(sql`case ${which} end`.as(rangeAlias(index)));
    grouped.push(sql.lit(selected.length));
  });
  query = query.select(selected);
  group.aggregates.forEach((aggregate, index) => {
    const column = aggregate.attribute ? sql.ref(`${NODE_ALIAS}.${aggregate.attribute.name}`) : sql`*`;
    query = query.select(sql`${AGGREGATE_SQL[aggregate.fn](column)}`.as(aggregateAlias(index)));
  });
  query = query.groupBy(grouped as never);
  if (group.having) query = query.having(havingSql(group.having));
  for (const term of group.order) {
    const groupIndex = group.groups.findIndex((attribute) => attribute.name === term.jsonName);
    const alias =
      groupIndex >= 0
        ? groupAlias(groupIndex)
        : aggregateAlias(group.aggregates.findIndex((aggregate) => aggregate.jsonName === term.jsonName));
    query = query.orderBy(sql.ref(alias), term.direction);
  }
  group.groups.forEach((_, index) => {
    if (group.ranges[index]) query = query.orderBy(sql.ref(rangeAlias(index)), 'asc');
    query = query.orderBy(sql.ref(groupAlias(index)), 'asc');
  });
  return query;
}
