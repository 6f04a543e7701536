import type { GroupPlan, GroupRecord, RangePlan } from './query/index.js';
import { toJson, type StoredValue } from './values.js';

/**
 * Response of a grouped query (`gbcols`, docs/compatibility.md "Group-by"): a bare JSON array with one object per
 * group, holding the group attributes' values, the aggregates (`count`, `<fn>_<attr>`) and `collectionref`, the
 * collection of the group's members: the request's own filters with one more term per group attribute.
 */
export function groupsJson(
  groups: readonly GroupRecord[],
  plan: GroupPlan,
  collection: string,
  query: Readonly<Record<string, string>>,
): Array<Record<string, unknown>> {
  const kept = ['savedQuery', 'oslc.searchTerms', 'searchAttributes', 'lean'].filter(
    (name) => query[name] !== undefined && query[name] !== '',
  );
  const where = query['oslc.where']?.trim() ?? '';
  return groups.map((group) => {
    const json: Record<string, unknown> = {};
    const ranges = plan.groups.map((_, index) => {
      const position = group.ranges[index];
      return position === null || position === undefined ? undefined : plan.ranges[index]?.[position];
    });
    plan.groups.forEach((attribute, index) => {
      const range = ranges[index];
      json[attribute.name] = range ? [...range.key] : toJson(group.values[index] ?? null);
    });
    plan.aggregates.forEach((aggregate, index) => {
      json[aggregate.jsonName] = group.aggregates[index] ?? null;
    });
    const terms = plan.groups.map((attribute, index) => {
      const range = ranges[index];
      if (range) return rangeTerm(attribute.name, range);
      return whereTerm(attribute.name, attribute.type === 'YORN', group.values[index] ?? null);
    });
    const parameters = new URLSearchParams([
      ['oslc.where', [...(where === '' ? [] : [where]), ...terms].join(' and ')],
      ...kept.map((name): [string, string] => [name, query[name]!]),
    ]);
    json.collectionref = `${collection}?${parameters.toString()}`;
    return json;
  });
}

/** The `oslc.where` term that selects one group value (`status="APPR"`, `wopriority=2`, `parent!="*"` for none). */
function whereTerm(name: string, yorn: boolean, value: StoredValue): string {
  if (value === null) return `${name}!="*"`;
  if (typeof value === 'number') return `${name}=${String(value)}`;
  if (typeof value === 'boolean' || yorn) return `${name}=${value === true ? 'true' : 'false'}`;
  const text = String(toJson(value));
  return `${name}="${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The `oslc.where` term of a `gbrange` group (`status in ["APPR","WAPPR"]`, `wopriority>=1 and wopriority<3`). */
function rangeTerm(name: string, range: RangePlan): string {
  if (range.kind === 'interval') {
    return `${name}${range.lowInclusive ? '>=' : '>'}${range.low} and ${name}${range.highInclusive ? '<=' : '<'}${range.high}`;
  }
  const values = range.values.map((value) =>
    typeof value === 'number'
      ? String(value)
      : `"${String(toJson(value)).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`,
  );
  return `${name} in [${values.join(',')}]`;
}
