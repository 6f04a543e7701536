/*
 * The query engine's one entry point: parse (text to syntax), plan (syntax checked against the metadata),
 * compile and execute (plan to SQL and rows), and the stable page sets. Nothing outside this folder imports its
 * stages directly (src/oslc/query/README.md).
 */
export { apiMetaJson } from './apimeta.js';
export { QueryParseError } from './ast.js';
export type { OrderByClause, SelectClause, SelectItem, WhereClause } from './ast.js';
export { compileGroupBy, compileStableMembers } from './compile.js';
export type { PageWindow } from './compile.js';
export {
  CompiledPages,
  executeCount,
  executeDistinct,
  executeGroupBy,
  executeMember,
  executePage,
  executeStablePage,
} from './execute.js';
export type { GroupRecord, MemberRecord } from './execute.js';
export { parseGroupFilter, parseGroupRange } from './group-params.js';
export type { RangePlan } from './group-plan.js';
export { parseGroupBy, parseOrderBy, parseSelect, parseWhere } from './parse.js';
export { pageSizeExceeded, planFilter, planFilters, planQuery, unknownAttribute } from './plan.js';
export type {
  ColumnRef,
  Filter,
  GroupPlan,
  NodePlan,
  Predicate,
  QueryPlan,
  QueryRequest,
  SelectedAttribute,
} from './plan.js';
export { parseSearchAttributes, parseSearchTerms } from './search.js';
export { STABLE_ID, createStableSet, newStableId, touchStableSet } from './stable-pages.js';
export type { StableSetOwner } from './stable-pages.js';
export { parseTimeline } from './timeline.js';
