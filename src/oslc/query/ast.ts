/**
 * Typed syntax trees of the OSLC query parameters (`oslc.where`, `oslc.select`, `oslc.orderBy`), produced by
 * `parse.ts`. They hold names exactly as written (lower-cased) and values as literals; what a name means is
 * decided later, by `plan.ts`, against the object-structure metadata.
 */

/** 1-based line and column of a token in the parameter value, for BMXAA8744E messages. */
export interface Position {
  line: number;
  column: number;
}

// ---- oslc.where -------------------------------------------------------------------------------------------

export type ComparisonOperator = '=' | '!=' | '>' | '>=' | '<' | '<=';

export type WhereLiteral =
  /** A double-quoted string, quotes removed and escapes resolved. Dates, `*`, `%` patterns and `[A,B]` lists arrive as strings. */
  | { kind: 'string'; value: string; position: Position }
  /** An unquoted number; `text` keeps the digits as written (numeric columns compare exactly). */
  | { kind: 'number'; value: number; text: string; position: Position }
  /** `true`/`false` unquoted (`1`/`0` arrive as numbers and are read as booleans for YORN attributes). */
  | { kind: 'boolean'; value: boolean; position: Position };

/** `a`, `location.status`, `rel1.rel2.attr`: lower-cased segments. */
export interface AttributePath {
  segments: readonly string[];
  position: Position;
}

export interface ComparisonTerm {
  kind: 'comparison';
  path: AttributePath;
  operator: ComparisonOperator;
  value: WhereLiteral;
}

export interface InTerm {
  kind: 'in';
  path: AttributePath;
  values: readonly WhereLiteral[];
}

export type WhereTerm = ComparisonTerm | InTerm;

/** Terms joined by `and` (the only conjunction the language has; `opmodeor=1` reinterprets them as OR). */
export interface WhereClause {
  terms: readonly WhereTerm[];
}

// ---- oslc.select ------------------------------------------------------------------------------------------

export type SelectItem =
  /** `*`: every persistent attribute of the object. */
  | { kind: 'all'; position: Position }
  /** `assetnum`, or `location--mylocation` (alias). */
  | { kind: 'attribute'; name: string; alias?: string; position: Position }
  /** `location.description`: an attribute reached through 1:1 relations (dot notation). `path` excludes the last name. */
  | { kind: 'related'; path: readonly string[]; name: string; alias?: string; position: Position }
  /** `alndomain{value,description}`: a child object of the object structure. */
  | { kind: 'child'; name: string; items: readonly SelectItem[]; position: Position }
  /** `rel.openwo{wonum}`: a 1:n relation of the object, not part of the object structure. */
  | { kind: 'relation'; name: string; items: readonly SelectItem[]; position: Position };

export interface SelectClause {
  items: readonly SelectItem[];
}

// ---- oslc.orderBy -----------------------------------------------------------------------------------------

export interface OrderTerm {
  direction: 'asc' | 'desc';
  name: string;
  position: Position;
}

export interface OrderByClause {
  terms: readonly OrderTerm[];
}

// ---- gbcols (group by) -------------------------------------------------------------------------------------

export type AggregateFunction = 'count' | 'sum' | 'avg' | 'min' | 'max';

export type GroupColumn =
  /** `status`: a group attribute. */
  | { kind: 'attribute'; name: string; position: Position }
  /** `count.*`, `sum.totalcost`: an aggregate over each group; `name` is `*` only for `count`. */
  | { kind: 'aggregate'; fn: AggregateFunction; name: string; position: Position };

export interface GroupByClause {
  columns: readonly GroupColumn[];
}

// ---- errors -----------------------------------------------------------------------------------------------

/**
 * A parse failure, worded like the real parser's: `Encountered " <IDENTIFIER> "or "" at line 1, column 20.
 * Was expecting: <BOOLEAN_OP> ...`.
 */
export class QueryParseError extends Error {
  constructor(
    readonly parameter: 'oslc.where' | 'oslc.select' | 'oslc.orderBy' | 'gbcols',
    /** Token class, for example `<IDENTIFIER>`, `<STRING>`, `<EOF>`. */
    readonly tokenKind: string,
    readonly tokenText: string,
    readonly position: Position,
    readonly expected: readonly string[],
  ) {
    super(
      `Encountered " ${tokenKind} "${tokenText} "" at line ${position.line}, column ${position.column}. Was expecting: ${expected.join(' ... ')} ...`,
    );
    this.name = 'QueryParseError';
  }
}
