import type { CompiledQuery } from 'kysely';
import type { StoredValue } from '../values.js';
import type { ColumnRef, Filter, NodePlan, OrderPlan, Predicate, QueryPlan } from './plan.js';

/*
 * Shapes of queries: what decides the SQL text of a page apart from the values it binds. Two requests that differ
 * only in the values of their `oslc.where` (status="OPERATING", status="BROKEN") have one shape, and so one compiled
 * statement, which each binds with its own values (src/oslc/query/README.md, "Compiled statements").
 */

/** Where a value of the filters goes among the parameters of a kept statement (compiled with it in its place). */
export class ParameterSlot {
  constructor(readonly index: number) {}
}

/** A statement compiled with slots in place of the filter values, and where each value goes. */
export interface SlottedSql {
  compiled: CompiledQuery;
  /** Per parameter, the index of the filter value it binds, or -1 for a parameter of the statement itself. */
  slots: readonly number[];
}

/** The filters with each bound value replaced by a slot, and the values in slot order. */
export interface SlottedFilters {
  filters: Filter[];
  values: unknown[];
}

function onShape(on: ReadonlyArray<readonly [string, string]>): string {
  return `[${on.map(([from, to]) => `${from}=${to}`).join(',')}]`;
}

function columnShape(column: ColumnRef): string {
  const via = column.via
    .map((relation, index) => `${relation.name}@${column.viaTables[index]}${onShape(relation.on)}`)
    .join('.');
  // The type decides how a value is bound (BIGINT is cast, compile.ts).
  return `${via}/${column.attribute.name}:${column.attribute.type}`;
}

function predicateShape(predicate: Predicate): string {
  const column = columnShape(predicate.column);
  switch (predicate.op) {
    case 'like':
    case 'notLike':
      return `${predicate.op}${predicate.caseInsensitive ? 'i' : ''} ${column}`;
    case 'in':
    case 'notIn':
      // An empty list is a constant, not a parameter (compile.ts): its length is part of the SQL.
      return `${predicate.op}${predicate.values.length} ${column}`;
    default:
      return `${predicate.op} ${column}`;
  }
}

/** The shape of filters: combinations, columns and operators, the number of values of lists; never the values. */
export function filtersShape(filters: readonly Filter[]): string {
  let shape = '';
  for (const filter of filters) {
    shape += `(${filter.combine}`;
    for (const predicate of filter.predicates) shape += `,${predicateShape(predicate)}`;
    shape += ')';
  }
  return shape;
}

function slotPredicate(predicate: Predicate, values: unknown[]): Predicate {
  const slot = (value: unknown) => {
    values.push(value);
    // The slot travels where a value goes; compile.ts hands values to Kysely without looking at them.
    return new ParameterSlot(values.length - 1) as unknown as StoredValue;
  };
  switch (predicate.op) {
    case 'like':
    case 'notLike':
      return { ...predicate, pattern: slot(predicate.pattern) as unknown as string };
    case 'in':
    case 'notIn':
      return { ...predicate, values: predicate.values.map(slot) };
    case 'isNull':
    case 'isNotNull':
      return predicate;
    default:
      return { ...predicate, value: slot(predicate.value) };
  }
}

export function slotFilters(filters: readonly Filter[]): SlottedFilters {
  const values: unknown[] = [];
  const slotted = filters.map((filter) => ({
    combine: filter.combine,
    predicates: filter.predicates.map((predicate) => slotPredicate(predicate, values)),
  }));
  return { filters: slotted, values };
}

/** The bound values of filters, in the order `slotFilters` gives them slots. */
export function filterValues(filters: readonly Filter[]): unknown[] {
  return slotFilters(filters).values;
}

function orderShape(order: readonly OrderPlan[]): string {
  return order.map((term) => `${term.attribute.name} ${term.direction}`).join(',');
}

/**
 * The shape of what a node reads: its object, attributes, dot-notation values and child collections. A child
 * collection's own filter keeps its values in the shape (they are bound, but a kept statement binds only the
 * root's): child filters are rare, and the key stays exact.
 */
export function nodeShape(node: NodePlan): string {
  const attributes = node.attributes.map(({ jsonName, attribute }) => `${jsonName}=${attribute.name}`);
  const related = node.related.map(({ jsonPath, column }) => `${jsonPath.join('.')}=${columnShape(column)}`);
  const children = node.children.map((child) => {
    const filter = child.filter
      ? `${filtersShape([child.filter])}${JSON.stringify(filterValues([child.filter]))}`
      : '';
    return `${child.jsonName}:${child.kind}${onShape(child.on)}${child.nullSafe ? '?' : ''}${filter}<${orderShape(child.order)}>{${nodeShape(child.node)}}`;
  });
  // The keys and the unique id are always read (compile.ts, fetchedAttributes).
  const object = `${node.object.name}@${node.object.table}(${node.object.keys.join(',')};${node.object.uniqueId})`;
  return `${object}|${attributes.join(',')}|${related.join(',')}|${children.join(',')}`;
}

/** The shape of a plan's page, without its window: object, selection, filters and order. */
export function planShape(plan: QueryPlan, filters: readonly Filter[]): string {
  const object = plan.structure.root.object;
  return `${object.name}@${object.table}\u0000${nodeShape(plan.root)}\u0000${filtersShape(filters)}\u0000${orderShape(plan.order)}`;
}

/** The slots of a statement compiled with `slotFilters`' filters. */
export function slotsOf(compiled: CompiledQuery): SlottedSql {
  const slots = compiled.parameters.map((parameter) =>
    parameter instanceof ParameterSlot ? parameter.index : -1,
  );
  return { compiled, slots };
}

/** The kept statement with `values` bound in their slots. */
export function bindSlots(read: SlottedSql, values: readonly unknown[]): CompiledQuery {
  const { compiled, slots } = read;
  const parameters = compiled.parameters.map((parameter, index) => {
    const slot = slots[index]!;
    return slot < 0 ? parameter : values[slot];
  });
  return { ...compiled, parameters };
}
