import { errors } from '../../errors.js';
import type { ObjectMeta } from '../../metadata/registry.js';
import type { AttributeDef } from '../../metadata/types.js';
import { isNumericType, toStored, type StoredValue } from '../values.js';
import type { AggregateFunction } from './ast.js';
import type { GroupFilter, GroupFilterOp, GroupRangeClause } from './group-params.js';

/**
 * Plan of `gbfilter` and `gbrange` (docs/compatibility.md, "Group-by"): names resolved against the root object and
 * the `gbcols` group attributes, values converted to the attributes' types.
 */

/** One range of a group attribute: its rows form one group, answered with `key` as the attribute's value. */
export type RangePlan = { key: ReadonlyArray<string | number> } & (
  | { kind: 'values'; values: readonly StoredValue[] }
  | { kind: 'interval'; low: number; high: number; lowInclusive: boolean; highInclusive: boolean }
);

/** What a `gbfilter` term compares: an aggregate over each group, or a group attribute. */
export type HavingTarget = { fn: AggregateFunction; attribute?: AttributeDef } | { group: AttributeDef };

export type HavingPlan =
  | { kind: 'and' | 'or'; terms: readonly HavingPlan[] }
  | { kind: 'compare'; target: HavingTarget; op: GroupFilterOp; value: StoredValue };

const AGGREGATE_KEY = /^(sum|avg|min|max)[._]([a-z_]\w*)$/;

/** The ranges of each group attribute (`undefined` for one without), in the order of `groups`. */
export function planGroupRanges(
  object: ObjectMeta,
  groups: readonly AttributeDef[],
  clause: GroupRangeClause | undefined,
): Array<readonly RangePlan[] | undefined> {
  for (const name of clause?.keys() ?? []) {
    if (!groups.some((attribute) => attribute.name === name)) {
      throw errors.badRequest(`gbrange names ${name}, which is not a group attribute of gbcols.`, {
        attrName: 'gbrange',
        attrValue: name,
      });
    }
  }
  return groups.map((attribute) =>
    clause?.get(attribute.name)?.map((range): RangePlan => {
      if (range.kind === 'interval') {
        if (!isNumericType(attribute.type)) throw notNumeric(object, attribute, 'gbrange');
        return { ...range, key: [range.low, range.high] };
      }
      const values = range.values.map((value) => converted(object, attribute, value, 'gbrange'));
      return {
        kind: 'values',
        values,
        key: values.map((value) => (typeof value === 'number' ? value : String(value))),
      };
    }),
  );
}

/** `gbfilter` planned: aggregates over numeric attributes (any, not only those of gbcols) and un-ranged group attributes. */
export function planHaving(
  object: ObjectMeta,
  groups: readonly AttributeDef[],
  ranges: ReadonlyArray<readonly RangePlan[] | undefined>,
  filter: GroupFilter,
): HavingPlan {
  if (filter.kind !== 'compare') {
    return { kind: filter.kind, terms: filter.terms.map((term) => planHaving(object, groups, ranges, term)) };
  }
  const { key, op, value } = filter;
  if (key === 'count' || key === 'count.*')
    return { kind: 'compare', target: { fn: 'count' }, op, value: number(key, value) };
  const aggregate = AGGREGATE_KEY.exec(key);
  if (aggregate) {
    const attribute = object.attributes.get(aggregate[2]!);
    if (!attribute || attribute.writeOnly) throw errors.unknownAttribute(aggregate[2]!, object.name);
    if (!isNumericType(attribute.type)) throw notNumeric(object, attribute, 'gbfilter');
    return {
      kind: 'compare',
      target: { fn: aggregate[1] as AggregateFunction, attribute },
      op,
      value: number(key, value),
    };
  }
  const index = groups.findIndex((attribute) => attribute.name === key);
  if (index < 0 || ranges[index] !== undefined) {
    throw errors.badRequest(
      `gbfilter names ${key}, which is neither an aggregate nor a group attribute without ranges.`,
      {
        attrName: 'gbfilter',
        attrValue: key,
      },
    );
  }
  const attribute = groups[index]!;
  return {
    kind: 'compare',
    target: { group: attribute },
    op,
    value: converted(object, attribute, value, 'gbfilter'),
  };
}

function number(key: string, value: string | number): number {
  if (typeof value === 'number') return value;
  throw errors.badRequest(`gbfilter compares ${key} with ${value}, which is not a number.`, {
    attrName: 'gbfilter',
    attrValue: value,
  });
}

function converted(
  object: ObjectMeta,
  attribute: AttributeDef,
  value: string | number,
  parameter: string,
): StoredValue {
  const result = toStored(attribute, value);
  if (!result.ok || result.value === null) {
    throw errors.badRequest(`${parameter}: ${String(value)} is not a value of ${attribute.name}.`, {
      attrName: parameter,
      attrValue: String(value),
      objPath: object.name.toLowerCase(),
    });
  }
  return result.value;
}

function notNumeric(object: ObjectMeta, attribute: AttributeDef, parameter: string) {
  return errors.badRequest(
    `The attribute ${attribute.name} is not numeric: ${parameter} cannot give it a numeric range or aggregate.`,
    {
      attrName: parameter,
      attrValue: attribute.name,
      objPath: object.name.toLowerCase(),
    },
  );
}
