/**
 * Query parameter names as the deployed systems read them: in any case (`addSchema=1`, `ADDSCHEMA=1` and
 * `addschema=1` are one parameter), except `savedQuery`, whose name is case-sensitive there (`savedquery` is
 * ignored) (docs/compatibility.md, "Query parameter names"). The query-string parser renames every name it knows
 * to the spelling the service reads, so that no route has to look a parameter up in several spellings.
 */

/**
 * The parameters read from free-form query strings (the OSLC routes read theirs from a map, which names none).
 * Parameters that a route's own schema names are added as the routes register (`ParameterNames.addSchema`).
 */
const FREE_FORM_PARAMETERS = [
  'lean',
  'oslc.select',
  'oslc.where',
  'oslc.orderBy',
  'oslc.pageSize',
  'oslc.searchTerms',
  'searchAttributes',
  'pageno',
  'collectioncount',
  'count',
  'distinct',
  'relativeuri',
  'inlinedoc',
  'ignorecollectionref',
  '_dropnulls',
  'internalvalues',
  'stablepaging',
  'stableId',
  'opmodeor',
  'tlrange',
  'tlattribute',
  'gbcols',
  'gbsortby',
  'gbfilter',
  'gbfilters',
  'gbrange',
  'addschema',
  'action',
  'apikey',
  'csrf',
  'includeaction',
  'includeactions',
  'os',
  'module',
];

/** Names read exactly as spelled, as the deployed systems read them. */
const CASE_SENSITIVE = new Set(['savedQuery']);

/** Child filters and sorts: `<child>.where`, `<child>.orderBy` (docs/compatibility.md). */
const CHILD_WHERE = '.where';
const CHILD_ORDER_BY = '.orderBy';

export class ParameterNames {
  /** The known names by their own spelling and by their lower-case form. */
  private readonly spellings = new Map<string, string>();

  constructor(names: readonly string[] = FREE_FORM_PARAMETERS) {
    for (const name of names) this.add(name);
  }

  add(name: string): void {
    if (CASE_SENSITIVE.has(name)) return;
    const lower = name.toLowerCase();
    if (this.spellings.has(lower)) return;
    this.spellings.set(lower, name);
    this.spellings.set(name, name);
  }

  /** The names of a route's query-string schema (a TypeBox object), when it names any. */
  addSchema(schema: unknown): void {
    const properties = (schema as { properties?: unknown } | undefined)?.properties;
    if (typeof properties !== 'object' || properties === null) return;
    for (const name of Object.keys(properties)) this.add(name);
  }

  /** The spelling the service reads; a name it does not know stays as sent. */
  spelled(name: string): string {
    // Most clients spell names as the service does: one lookup, no lower-casing.
    const exact = this.spellings.get(name);
    if (exact !== undefined) return exact;
    const lower = name.toLowerCase();
    const known = this.spellings.get(lower);
    if (known !== undefined) return known;
    if (lower.endsWith(CHILD_WHERE)) return `${name.slice(0, -CHILD_WHERE.length)}${CHILD_WHERE}`;
    if (lower.endsWith('.orderby')) return `${name.slice(0, -CHILD_ORDER_BY.length)}${CHILD_ORDER_BY}`;
    return name;
  }
}
