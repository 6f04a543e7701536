import { errors } from '../errors.js';
import { readFlag } from '../http/query-string.js';
import { BoundedCache } from '../util/bounded-cache.js';
import {
  type OrderByClause,
  parseGroupBy,
  parseGroupFilter,
  parseGroupRange,
  parseOrderBy,
  parseSearchAttributes,
  parseSearchTerms,
  parseSelect,
  parseTimeline,
  parseWhere,
  QueryParseError,
  type QueryRequest,
  type SelectClause,
  type WhereClause,
} from './query/index.js';

/** Parameters of a collection or resource GET, read from the query string (docs/compatibility.md). */
export interface CollectionParams {
  query: QueryRequest;
  /** Explicit `lean`, when sent. */
  lean: boolean | undefined;
  pageSize: number | undefined;
  pageNumber: number;
  collectionCount: boolean;
  countOnly: boolean;
  distinct: string | undefined;
  relative: boolean;
  collectionRefs: boolean;
  dropNulls: boolean;
  internalValues: boolean;
  /** `stablepaging=1`: fix the page set at this request. */
  stablePaging: boolean;
  /** `stableId=<id>` of a later page of a stable page set. */
  stableId: string | undefined;
  /**
   * The texts `query` was read from, as one string: equal keys give equal plans, so a plan may be reused. Absent
   * when the plan depends on more than the texts (a time line is relative to the moment of the request).
   */
  planKey: string | undefined;
}

const parseCaches = new WeakMap<(text: string) => unknown, BoundedCache<string, unknown>>();

/** Freezes a parsed tree, so that sharing it between requests is safe: nothing downstream may change it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * Runs a parser and turns its refusal into the BMXAA8744E error object. Clients repeat the same clauses page after
 * page, so the (frozen, immutable) trees of recent texts are kept.
 */
export function parsed<T>(parse: (text: string) => T, text: string): T {
  let cache = parseCaches.get(parse);
  if (!cache) {
    cache = new BoundedCache<string, unknown>(PARSED_TEXTS_KEPT);
    parseCaches.set(parse, cache);
  }
  try {
    return cache.getOrCompute(text, () => deepFreeze(parse(text))) as T;
  } catch (error) {
    if (error instanceof QueryParseError) throw errors.queryNotParsed(error.message);
    throw error;
  }
}

function positiveInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,9}$/.test(value.trim()) || Number(value) < 1) {
    throw errors.badRequest(`The parameter ${name} must be a whole number greater than 0.`, {
      attrName: name,
      attrValue: value,
    });
  }
  return Number(value);
}

const PARSED_TEXTS_KEPT = 512;

const CHILD_WHERE = /^(.+)\.where$/;
const CHILD_ORDER = /^(.+)\.orderBy$/;

export function readCollectionParams(params: Readonly<Record<string, string>>): CollectionParams {
  const where = params['oslc.where'];
  const select = params['oslc.select'];
  const orderBy = params['oslc.orderBy'];
  const childWhere = new Map<string, WhereClause>();
  const childOrderBy = new Map<string, OrderByClause>();
  const childTexts: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    // Most parameters are not child filters: the suffix test spares them the expressions.
    if (name.startsWith('oslc.') || !(name.endsWith('.where') || name.endsWith('.orderBy'))) continue;
    if (value.trim() === '') continue;
    const whereMatch = CHILD_WHERE.exec(name);
    if (whereMatch) childWhere.set(lastSegment(whereMatch[1]!), parsed(parseWhere, value));
    const orderMatch = CHILD_ORDER.exec(name);
    if (orderMatch) childOrderBy.set(lastSegment(orderMatch[1]!), parsed(parseOrderBy, value));
    if (whereMatch || orderMatch) childTexts.push(name, value);
  }
  const groupFilterText = nonEmpty(params.gbfilter) ? params.gbfilter : params.gbfilters;
  const query: QueryRequest = {
    ...(where !== undefined && where.trim() !== '' && { where: parsed(parseWhere, where) }),
    ...(select !== undefined &&
      select.trim() !== '' && { select: parsed(parseSelect, select) as SelectClause }),
    ...(orderBy !== undefined && orderBy.trim() !== '' && { orderBy: parsed(parseOrderBy, orderBy) }),
    anyTerm: readFlag(params.opmodeor) === true,
    childWhere,
    childOrderBy,
    // The parameter name is case-sensitive: the deployed systems ignore `savedquery`, and so does this service.
    ...(nonEmpty(params.savedQuery) && { savedQuery: params.savedQuery.trim() }),
    ...(nonEmpty(params['oslc.searchTerms']) && {
      search: {
        terms: parseSearchTerms(params['oslc.searchTerms']),
        ...(nonEmpty(params.searchAttributes) && {
          attributes: parseSearchAttributes(params.searchAttributes),
        }),
      },
    }),
    ...(nonEmpty(params.tlrange) && { timeline: parseTimeline(params.tlrange, params.tlattribute) }),
    ...(nonEmpty(params.gbcols) && { groupBy: parsed(parseGroupBy, params.gbcols) }),
    ...(nonEmpty(params.gbcols) &&
      nonEmpty(params.gbsortby) && { groupSort: parsed(parseOrderBy, params.gbsortby) }),
    // The guide's table spells `gbfilters`, its examples and the IBM Java client `gbfilter`: both are read.
    ...(nonEmpty(params.gbcols) &&
      nonEmpty(groupFilterText) && { groupFilter: parsed(parseGroupFilter, groupFilterText) }),
    ...(nonEmpty(params.gbcols) &&
      nonEmpty(params.gbrange) && { groupRange: parsed(parseGroupRange, params.gbrange) }),
  };
  // Relation properties in groups are not served: ignoring them would answer other groups than asked for.
  if (nonEmpty(params.gbcols) && nonEmpty(params.gbrelprop)) throw errors.groupByNotServed('gbrelprop');
  return {
    query,
    lean: readFlag(params.lean),
    pageSize: positiveInteger('oslc.pageSize', params['oslc.pageSize']),
    pageNumber: positiveInteger('pageno', params.pageno) ?? 1,
    collectionCount: readFlag(params.collectioncount) === true,
    countOnly: readFlag(params.count) === true,
    distinct: params.distinct?.trim() ? params.distinct.trim().toLowerCase() : undefined,
    relative: readFlag(params.relativeuri) === true,
    collectionRefs: readFlag(params.ignorecollectionref) !== true,
    dropNulls: readFlag(params._dropnulls) !== false,
    internalValues: readFlag(params.internalvalues) === true,
    stablePaging: readFlag(params.stablepaging) === true,
    stableId: nonEmpty(params.stableId) ? params.stableId.trim() : undefined,
    planKey: query.timeline
      ? undefined
      : JSON.stringify([
          where,
          select,
          orderBy,
          query.anyTerm,
          query.savedQuery,
          params['oslc.searchTerms'],
          params.searchAttributes,
          childTexts,
          params.gbcols,
          params.gbsortby,
          groupFilterText,
          params.gbrange,
        ]),
  };
}

/** Empty parameters count as absent, as clients send them (docs/compatibility.md). */
function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/** `assetmeter.where` and `mxasset.assetmeter.where` both name the child `assetmeter`. */
function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1).toLowerCase();
}
