import { errors, type MaximoError } from '../../errors.js';
import type { ObjectMeta, ObjectStructure, StructureNode } from '../../metadata/registry.js';
import type { MetadataRegistry } from '../../metadata/registry.js';
import type { AttributeDef, RelationDef } from '../../metadata/types.js';
import {
  isDateType,
  isNumericType,
  isStorableDate,
  isTextType,
  toStored,
  type StoredValue,
} from '../values.js';
import {
  QueryParseError,
  type AggregateFunction,
  type AttributePath,
  type GroupByClause,
  type ComparisonTerm,
  type OrderByClause,
  type SelectClause,
  type SelectItem,
  type WhereClause,
  type WhereLiteral,
  type WhereTerm,
} from './ast.js';
import type { GroupFilter, GroupRangeClause } from './group-params.js';
import { planGroupRanges, planHaving, type HavingPlan, type RangePlan } from './group-plan.js';
import { parseWhere } from './parse.js';
import { containsPattern, type SearchRequest } from './search.js';
import { timelineBounds, type TimelineRequest } from './timeline.js';

/**
 * Plan stage: resolves every name of the parsed query against the object-structure metadata and turns each
 * `oslc.where` term into a typed predicate. Nothing here touches the database; unknown names and values of the
 * wrong type are refused here, so the compile stage only ever sees names the metadata declares.
 */

/** An attribute of the node's object, or of an object reached from it through 1:1 relations. */
export interface ColumnRef {
  via: readonly RelationDef[];
  /** Table of each relation's object in `via`. */
  viaTables: readonly string[];
  object: ObjectMeta;
  attribute: AttributeDef;
}

export type PredicateOp =
  'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le' | 'like' | 'notLike' | 'isNull' | 'isNotNull' | 'in' | 'notIn';

export type Predicate =
  | { op: 'isNull' | 'isNotNull'; column: ColumnRef }
  | { op: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le'; column: ColumnRef; value: StoredValue }
  | { op: 'like' | 'notLike'; column: ColumnRef; pattern: string; caseInsensitive: boolean }
  | { op: 'in' | 'notIn'; column: ColumnRef; values: StoredValue[] };

export interface Filter {
  combine: 'and' | 'or';
  predicates: readonly Predicate[];
}

export interface OrderPlan {
  attribute: AttributeDef;
  direction: 'asc' | 'desc';
}

export interface SelectedAttribute {
  jsonName: string;
  attribute: AttributeDef;
}

export interface SelectedRelated {
  /** JSON path of the value: `['location', 'description']` for `location.description`, `['myloc']` with an alias. */
  jsonPath: readonly string[];
  column: ColumnRef;
}

export interface NodePlan {
  object: ObjectMeta;
  /** The structure node when the object is part of the object structure (root or child). */
  structureNode?: StructureNode;
  attributes: readonly SelectedAttribute[];
  related: readonly SelectedRelated[];
  children: readonly ChildPlan[];
}

export interface ChildPlan {
  jsonName: string;
  kind: 'child' | 'relation';
  /** Join pairs (attribute of the parent, attribute of the child). */
  on: ReadonlyArray<readonly [string, string]>;
  /** Whether a null join value matches a null (StructureNode.nullSafe). */
  nullSafe?: boolean;
  node: NodePlan;
  filter?: Filter;
  order: readonly OrderPlan[];
}

export interface QueryRequest {
  where?: WhereClause;
  select?: SelectClause;
  orderBy?: OrderByClause;
  /** `opmodeor=1`: the `and`-joined terms are ORed. */
  anyTerm?: boolean;
  /** Filters and orders of child collections (`<child>.where`, `<child>.orderBy`), by child name. */
  childWhere?: ReadonlyMap<string, WhereClause>;
  childOrderBy?: ReadonlyMap<string, OrderByClause>;
  /** `savedQuery=<name>`: a named where clause of the object structure, ANDed with `oslc.where`. */
  savedQuery?: string;
  /** `oslc.searchTerms` with `searchAttributes`. */
  search?: SearchRequest;
  /** `tlrange` with `tlattribute`. */
  timeline?: TimelineRequest;
  /** `gbcols`: the collection answered as groups, with `gbsortby` ordering them. */
  groupBy?: GroupByClause;
  groupSort?: OrderByClause;
  /** `gbfilter`: which groups are answered. */
  groupFilter?: GroupFilter;
  /** `gbrange`: values or intervals of group attributes that form one group each. */
  groupRange?: GroupRangeClause;
}

/** One aggregate of a grouped answer; `attribute` is absent for `count.*`. */
export interface AggregatePlan {
  /** Key in the answer: `count` for `count.*`, else `<fn>_<attr>`. */
  jsonName: string;
  fn: AggregateFunction;
  attribute?: AttributeDef;
}

/** A grouped answer: the group attributes, the aggregates, and the order of the groups by their keys. */
export interface GroupPlan {
  groups: readonly AttributeDef[];
  aggregates: readonly AggregatePlan[];
  /** By answer key: a group attribute's name or an aggregate's `jsonName`. */
  order: ReadonlyArray<{ jsonName: string; direction: 'asc' | 'desc' }>;
  /** `gbrange`: per group attribute (same order as `groups`), its ranges, or undefined. */
  ranges: ReadonlyArray<readonly RangePlan[] | undefined>;
  /** `gbfilter`. */
  having?: HavingPlan;
}

export interface QueryPlan {
  structure: ObjectStructure;
  root: NodePlan;
  /** `oslc.where` (with `opmodeor`). */
  filter: Filter;
  /** Filters ANDed with `filter`: the saved query, the search terms, the time line. */
  extraFilters: readonly Filter[];
  order: readonly OrderPlan[];
  /** `gbcols`: the members are answered as groups. */
  groupBy?: GroupPlan;
}

/** Every filter a plan's members must pass. */
export const planFilters = (plan: QueryPlan): readonly Filter[] => [plan.filter, ...plan.extraFilters];

const MAX_RELATION_DEPTH = 4;

/**
 * Values one where clause may bind. Far above any hand-written query, and far below the 65,535 parameters a
 * PostgreSQL statement can carry, so a long `in` list is refused as a client error instead of failing in SQL.
 */
export const MAX_WHERE_VALUES = 1000;

export const unknownAttribute = (name: string, objectName: string): MaximoError =>
  errors.unknownAttribute(name, objectName);

/** Plans a query; `now` is the instant relative time lines are measured from. */
export function planQuery(
  metadata: MetadataRegistry,
  structure: ObjectStructure,
  request: QueryRequest,
  now: Date = new Date(),
): QueryPlan {
  const rootObject = structure.root.object;
  const extraFilters: Filter[] = [];
  if (request.savedQuery !== undefined)
    extraFilters.push(planSavedQuery(metadata, structure, request.savedQuery));
  if (request.search && request.search.terms.length > 0)
    extraFilters.push(planSearch(rootObject, request.search));
  if (request.timeline) extraFilters.push(planTimeline(rootObject, request.timeline, now));
  return {
    structure,
    root: planNode(metadata, rootObject, structure.root, request.select?.items, request, 0),
    filter: planFilter(metadata, rootObject, request.where, request.anyTerm ?? false),
    extraFilters,
    order: planOrder(rootObject, request.orderBy),
    ...(request.groupBy && { groupBy: planGroupBy(rootObject, request) }),
  };
}

/**
 * `gbcols` and `gbsortby` (docs/compatibility.md, "Group-by"): group attributes of the root object (at least one),
 * aggregates over numeric attributes, and a sort by answer keys.
 */
function planGroupBy(object: ObjectMeta, request: QueryRequest): GroupPlan {
  const clause: GroupByClause = request.groupBy!;
  const sort = request.groupSort;
  const groups: AttributeDef[] = [];
  const aggregates: AggregatePlan[] = [];
  for (const column of clause.columns) {
    if (column.kind === 'attribute') {
      const attribute = readable(object, column.name);
      if (!groups.includes(attribute)) groups.push(attribute);
      continue;
    }
    if (column.name === '*') {
      if (!aggregates.some((aggregate) => aggregate.jsonName === 'count'))
        aggregates.push({ jsonName: 'count', fn: 'count' });
      continue;
    }
    const attribute = readable(object, column.name);
    // Answers are JSON numbers (docs/compatibility.md), so every aggregate but count.* takes a numeric attribute.
    if (!isNumericType(attribute.type)) {
      throw errors.badRequest(
        `The attribute ${attribute.name} is not numeric and cannot be aggregated with ${column.fn}.`,
        {
          attrName: 'gbcols',
          attrValue: `${column.fn}.${attribute.name}`,
          objPath: object.name.toLowerCase(),
        },
      );
    }
    const jsonName = `${column.fn}_${attribute.name}`;
    if (!aggregates.some((aggregate) => aggregate.jsonName === jsonName))
      aggregates.push({ jsonName, fn: column.fn, attribute });
  }
  if (groups.length === 0) {
    throw errors.badRequest('gbcols must name at least one attribute to group by.', { attrName: 'gbcols' });
  }
  const keys = new Set([...groups.map((attribute) => attribute.name), ...aggregates.map((a) => a.jsonName)]);
  const order = (sort?.terms ?? []).map((term) => {
    if (!keys.has(term.name)) {
      throw errors.badRequest(`gbsortby names ${term.name}, which is not a column of gbcols.`, {
        attrName: 'gbsortby',
        attrValue: term.name,
      });
    }
    return { jsonName: term.name, direction: term.direction };
  });
  const ranges = planGroupRanges(object, groups, request.groupRange);
  return {
    groups,
    aggregates,
    order,
    ranges,
    ...(request.groupFilter && { having: planHaving(object, groups, ranges, request.groupFilter) }),
  };
}

function readable(object: ObjectMeta, name: string): AttributeDef {
  const attribute = object.attributes.get(name);
  if (!attribute || attribute.writeOnly) throw unknownAttribute(name, object.name);
  return attribute;
}

/** Plan of a member when no `oslc.select` is given: only its href. */
export const HREF_ONLY: readonly SelectItem[] = [];

function planNode(
  metadata: MetadataRegistry,
  object: ObjectMeta,
  structureNode: StructureNode | undefined,
  items: readonly SelectItem[] | undefined,
  request: QueryRequest,
  depth: number,
): NodePlan {
  const attributes = new Map<string, SelectedAttribute>();
  const related: SelectedRelated[] = [];
  const children: ChildPlan[] = [];
  for (const item of items ?? HREF_ONLY) {
    switch (item.kind) {
      case 'all':
        for (const attribute of object.attributes.values()) {
          if (!attribute.writeOnly) attributes.set(attribute.name, { jsonName: attribute.name, attribute });
        }
        break;
      case 'attribute': {
        // Unknown names in a select are passed over, as the deployed systems do: a select cannot change which rows match.
        const attribute = object.attributes.get(item.name);
        if (attribute && !attribute.writeOnly) {
          const jsonName = item.alias ?? item.name;
          attributes.set(jsonName, { jsonName, attribute });
        }
        break;
      }
      case 'related': {
        const column = resolvePath(metadata, object, [...item.path, item.name], false);
        if (column && !column.attribute.writeOnly) {
          related.push({ jsonPath: item.alias ? [item.alias] : [...item.path, item.name], column });
        }
        break;
      }
      case 'child': {
        const childNode = structureNode?.children.find((child) => child.name === item.name);
        if (!childNode || depth >= MAX_RELATION_DEPTH) break;
        const where = request.childWhere?.get(childNode.name);
        const orderBy = request.childOrderBy?.get(childNode.name);
        children.push({
          jsonName: childNode.name,
          kind: 'child',
          on: childNode.on,
          ...(childNode.nullSafe && { nullSafe: true }),
          node: planNode(metadata, childNode.object, childNode, item.items, request, depth + 1),
          ...(where && { filter: planFilter(metadata, childNode.object, where, false) }),
          order: planOrder(childNode.object, orderBy),
        });
        break;
      }
      case 'relation': {
        const relation = object.relations.get(item.name);
        if (!relation || !relation.many || depth >= MAX_RELATION_DEPTH) break;
        const target = metadata.object(relation.object);
        children.push({
          jsonName: relation.name,
          kind: 'relation',
          on: relation.on,
          node: planNode(metadata, target, undefined, item.items, request, depth + 1),
          order: [],
        });
        break;
      }
      default:
        assertNever(item);
    }
  }
  return {
    object,
    ...(structureNode && { structureNode }),
    attributes: [...attributes.values()],
    related,
    children,
  };
}

/** Resolves `a`, `rel.a`, `rel1.rel2.a` to a column; with `strict`, an unknown name is an error. */
function resolvePath(
  metadata: MetadataRegistry,
  object: ObjectMeta,
  segments: readonly string[],
  strict: boolean,
): ColumnRef | undefined {
  const via: RelationDef[] = [];
  const viaTables: string[] = [];
  let current = object;
  for (const [index, segment] of segments.entries()) {
    if (index === segments.length - 1) {
      const attribute = current.attributes.get(segment);
      if (!attribute) {
        if (strict) throw unknownAttribute(segments.join('.'), object.name);
        return undefined;
      }
      return { via, viaTables, object: current, attribute };
    }
    const relation = current.relations.get(segment);
    if (!relation || relation.many || via.length >= MAX_RELATION_DEPTH) {
      if (strict) throw unknownAttribute(segments.join('.'), object.name);
      return undefined;
    }
    via.push(relation);
    current = metadata.object(relation.object);
    viaTables.push(current.table);
  }
  if (strict) throw unknownAttribute(segments.join('.'), object.name);
  return undefined;
}

export function planFilter(
  metadata: MetadataRegistry,
  object: ObjectMeta,
  where: WhereClause | undefined,
  anyTerm: boolean,
): Filter {
  const values = (where?.terms ?? []).reduce(
    (sum, term) => sum + (term.kind === 'in' ? term.values.length : 1),
    0,
  );
  if (values > MAX_WHERE_VALUES) {
    throw errors.badRequest(`A where clause can compare at most ${MAX_WHERE_VALUES} values.`, {
      attrName: 'oslc.where',
      attrValue: values,
    });
  }
  const predicates = (where?.terms ?? []).map((term) => planTerm(metadata, object, term));
  return { combine: anyTerm ? 'or' : 'and', predicates };
}

/**
 * A saved query is a where clause of the structure's metadata, parsed and planned like a client's; a clause
 * that does not parse is a defect of the metadata, reported as the parse error it is.
 */
function planSavedQuery(metadata: MetadataRegistry, structure: ObjectStructure, name: string): Filter {
  const saved = structure.savedQueries.find((query) => query.name === name);
  if (!saved) throw errors.unknownSavedQuery(name, structure.name);
  let where: WhereClause;
  try {
    where = parseWhere(saved.where);
  } catch (error) {
    if (error instanceof QueryParseError) throw errors.queryNotParsed(error.message);
    throw error;
  }
  return planFilter(metadata, structure.root.object, where, false);
}

/** The attributes searched when the client names none: the keys and the description, where they are text. */
export function defaultSearchAttributes(object: ObjectMeta): string[] {
  return [...object.keys, 'description'].filter((name, index, names) => {
    const attribute = object.attributes.get(name);
    return names.indexOf(name) === index && attribute !== undefined && isTextType(attribute.type);
  });
}

/** Each term must occur, in any case, in one of the attributes: every (term, attribute) pair ORed. */
function planSearch(object: ObjectMeta, search: SearchRequest): Filter {
  const names = search.attributes?.length ? search.attributes : defaultSearchAttributes(object);
  const columns = names.map((name) => {
    const attribute = object.attributes.get(name);
    if (!attribute || attribute.writeOnly) throw unknownAttribute(name, object.name);
    if (!isTextType(attribute.type)) {
      throw errors.badRequest(`The attribute ${name} is not a text attribute and cannot be searched.`, {
        attrName: 'searchAttributes',
        attrValue: name,
      });
    }
    return { via: [], viaTables: [], object, attribute } satisfies ColumnRef;
  });
  if (columns.length === 0) {
    throw errors.badRequest(
      `The object ${object.name} has no text attribute to search; name some in searchAttributes.`,
      {
        attrName: 'searchAttributes',
      },
    );
  }
  const predicates = search.terms.flatMap((term) => {
    if (term.includes('\u0000')) throw wrongLiteral(columns[0]!, term);
    return columns.map((column): Predicate => ({
      op: 'like',
      column,
      pattern: containsPattern(term),
      caseInsensitive: true,
    }));
  });
  return { combine: 'or', predicates };
}

/** The time line as two bounds on a date attribute, both inclusive. */
function planTimeline(object: ObjectMeta, timeline: TimelineRequest, now: Date): Filter {
  const attribute = object.attributes.get(timeline.attribute);
  if (!attribute || attribute.writeOnly) throw unknownAttribute(timeline.attribute, object.name);
  if (!isDateType(attribute.type)) {
    throw errors.badRequest(
      `The attribute ${timeline.attribute} is not a date and cannot carry a time line.`,
      {
        attrName: 'tlattribute',
        attrValue: timeline.attribute,
      },
    );
  }
  const column: ColumnRef = { via: [], viaTables: [], object, attribute };
  const { from, to } = timelineBounds(timeline, now);
  return {
    combine: 'and',
    predicates: [
      { op: 'ge', column, value: from },
      { op: 'le', column, value: to },
    ],
  };
}

function planTerm(metadata: MetadataRegistry, object: ObjectMeta, term: WhereTerm): Predicate {
  const column = resolveWherePath(metadata, object, term.path);
  if (term.kind === 'in') {
    return { op: 'in', column, values: term.values.map((literal) => literalValue(column, literal)) };
  }
  return planComparison(column, term);
}

function resolveWherePath(metadata: MetadataRegistry, object: ObjectMeta, path: AttributePath): ColumnRef {
  const column = resolvePath(metadata, object, path.segments, true)!;
  if (column.attribute.writeOnly) throw unknownAttribute(path.segments.join('.'), object.name);
  return column;
}

/**
 * The operator table of the language (README.md, "Operator table"): what a comparison means depends on its operator and on
 * the form of its string literal: `"*"` tests for null, `%` makes a LIKE, `!="[A,B]"` is NOT IN.
 */
function planComparison(column: ColumnRef, term: ComparisonTerm): Predicate {
  const { operator, value } = term;
  const text = value.kind === 'string' ? value.value : undefined;
  // PostgreSQL text cannot hold NUL, so no stored value can equal or contain such a literal.
  if (text?.includes('\u0000')) throw wrongLiteral(column, text);
  if (text === '*' && (operator === '=' || operator === '!=')) {
    return { op: operator === '=' ? 'isNotNull' : 'isNull', column };
  }
  if (text !== undefined && isTextType(column.attribute.type)) {
    if (operator === '!=' && /^\[.*\]$/s.test(text)) {
      const values = text
        .slice(1, -1)
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part !== '')
        .map((part) => toStoredOrThrow(column, part));
      return { op: 'notIn', column, values };
    }
    if (text.includes('%') && (operator === '=' || operator === '!=')) {
      const upper = column.attribute.type === 'UPPER';
      // `%` (and `_`) are the client's wildcards; a backslash is a character, never LIKE's escape.
      const pattern = text.replace(/\\/g, '\\\\');
      return {
        op: operator === '=' ? 'like' : 'notLike',
        column,
        pattern: upper ? pattern.toUpperCase() : pattern,
        caseInsensitive: !upper,
      };
    }
  }
  const stored = literalValue(column, value);
  const op = ({ '=': 'eq', '!=': 'ne', '>': 'gt', '>=': 'ge', '<': 'lt', '<=': 'le' } as const)[operator];
  return { op, column, value: stored };
}

function literalValue(column: ColumnRef, literal: WhereLiteral): StoredValue {
  const raw = literal.kind === 'number' ? literal.text : literal.value;
  if (typeof raw === 'string' && raw.includes('\u0000')) throw wrongLiteral(column, raw);
  if (literal.kind === 'boolean' && column.attribute.type !== 'YORN') throw wrongLiteral(column, String(raw));
  if (literal.kind === 'number' && isDateType(column.attribute.type)) throw wrongLiteral(column, String(raw));
  return toStoredOrThrow(column, raw);
}

function toStoredOrThrow(column: ColumnRef, raw: unknown): StoredValue {
  const converted = toStored(column.attribute, raw);
  if (!converted.ok) throw wrongLiteral(column, String(raw));
  const value = converted.value;
  // A date PostgreSQL cannot hold, or an integer a JavaScript number cannot hold exactly, can match nothing.
  if (value instanceof Date && !isStorableDate(value)) throw wrongLiteral(column, String(raw));
  if (typeof value === 'number' && INTEGER_TYPES.has(column.attribute.type) && !Number.isSafeInteger(value)) {
    throw wrongLiteral(column, String(raw));
  }
  return value;
}

const INTEGER_TYPES: ReadonlySet<string> = new Set(['INTEGER', 'BIGINT']);

function wrongLiteral(column: ColumnRef, raw: string): MaximoError {
  return errors.queryValueNotValid(raw, column.attribute.name, column.attribute.type, column.object.name);
}

export function planOrder(object: ObjectMeta, orderBy: OrderByClause | undefined): OrderPlan[] {
  return (orderBy?.terms ?? []).map((term) => {
    const attribute = object.attributes.get(term.name);
    if (!attribute || attribute.writeOnly) throw unknownAttribute(term.name, object.name);
    return { attribute, direction: term.direction };
  });
}

/** Refusal for a query over the page-size limit (a hard error, never a silent cut). */
export const pageSizeExceeded = (requested: number, limit: number): MaximoError =>
  errors.badRequest(`The requested page size ${requested} is larger than the maximum page size ${limit}.`, {
    attrName: 'oslc.pageSize',
    attrValue: requested,
  });

function assertNever(value: never): never {
  throw new Error(`Unhandled select item ${JSON.stringify(value)}`);
}
