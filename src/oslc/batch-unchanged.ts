import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import type { StructureNode } from '../metadata/registry.js';
import { bindsAsArrays, findMatching } from './batch-repository.js';
import { childAction, findChild, hasChildEntries } from './child-entries.js';
import type { ColumnLimits } from './column-limits.js';
import type { Row } from './repository.js';
import { convertInput, sameValue } from './validation.js';
import type { StoredValue } from './values.js';

/*
 * Whether a batched record would change nothing (src/oslc/README.md, "Batched writes"): its root attributes equal
 * the stored row's and so do the child entries it sends, so the record is left as it is: no write, no stamp, no
 * `_rowstamp` moved, no observer. A redeploy of the data a target already holds changes nothing and says so.
 */

/** What the comparison consults of the batch's write unit. */
export interface UnchangedUnit {
  db: Kysely<DynamicDatabase>;
  limits: ColumnLimits;
  writeRules: ReadonlyMap<string, unknown>;
  childEntries(body: Record<string, unknown>, name: string): Array<Record<string, unknown>>;
  joinValues(child: StructureNode, parent: Row): Row;
}

/** Per parent (by its unique id), per child collection: the stored rows; a collection not read is absent. */
export type StoredChildren = Map<number, Map<string, Row[]>>;

/**
 * The stored child rows of the batch's stored parents that send a collection, one read per child collection for
 * the whole batch. A collection whose table does not bind as arrays is not read: its records are written.
 */
export async function storedChildren(
  unit: UnchangedUnit,
  node: StructureNode,
  parents: ReadonlyArray<{ body: Record<string, unknown>; row: Row }>,
): Promise<StoredChildren> {
  const found: StoredChildren = new Map();
  const uniqueId = node.object.uniqueId;
  for (const child of node.children) {
    const sending = parents.filter(({ body }) => hasChildEntries(body, child.name));
    if (sending.length === 0 || !bindsAsArrays(unit.limits, child.object)) continue;
    const columns = child.on.map(([, childAttribute]) => childAttribute);
    const tuples = new Map<string, { id: number; tuple: StoredValue[] }>();
    for (const { row } of sending) {
      const joined = unit.joinValues(child, row);
      const tuple = columns.map((column) => joined[column] ?? null);
      if (tuple.some((value) => value === null)) continue;
      tuples.set(tupleText(tuple), { id: Number(row[uniqueId]), tuple });
      found.set(Number(row[uniqueId]), found.get(Number(row[uniqueId])) ?? new Map());
      found.get(Number(row[uniqueId]))!.set(child.name, []);
    }
    if (tuples.size === 0) continue;
    const tupleList = [...tuples.values()].map(({ tuple }) => tuple);
    for (const row of await findMatching(unit.db, child.object, unit.limits, columns, tupleList)) {
      const parent = tuples.get(tupleText(columns.map((column) => row[column] ?? null)));
      if (parent) found.get(parent.id)!.get(child.name)!.push(row);
    }
  }
  return found;
}

/**
 * Whether writing the children a body sends would change nothing: each entry names a stored child (AddChange or
 * Update) whose attributes equal it, it sends no grandchildren, and a replaced collection keeps every stored child.
 */
export function childrenUnchanged(
  unit: UnchangedUnit,
  node: StructureNode,
  body: Record<string, unknown>,
  parent: Row,
  stored: ReadonlyMap<string, Row[]> | undefined,
  merge: boolean,
): boolean {
  for (const child of node.children) {
    if (!hasChildEntries(body, child.name)) continue;
    const rows = stored?.get(child.name);
    if (rows === undefined || unit.writeRules.has(child.object.name)) return false;
    const entries = unit.childEntries(body, child.name);
    if (!collectionUnchanged(unit, child, entries, rows, parent, merge)) return false;
  }
  return true;
}

function collectionUnchanged(
  unit: UnchangedUnit,
  child: StructureNode,
  entries: ReadonlyArray<Record<string, unknown>>,
  rows: readonly Row[],
  parent: Row,
  merge: boolean,
): boolean {
  const object = child.object;
  const inherited = { ...unit.joinValues(child, parent), ...child.values };
  const names = new Set(child.children.map((grandchild) => grandchild.name));
  const kept = new Set<number>();
  try {
    for (const entry of entries) {
      if (child.children.some((grandchild) => hasChildEntries(entry, grandchild.name))) return false;
      const action = childAction(entry, object);
      if (action !== 'addchange' && action !== 'update') return false;
      const { match } = findChild(object, rows, entry, inherited);
      if (!match) return false;
      const values = convertInput(object, entry, match, names);
      for (const name in values) if (!sameValue(match[name] ?? null, values[name] ?? null)) return false;
      kept.add(Number(match[object.uniqueId]));
    }
  } catch {
    // An entry the write path would refuse is left to it, to be refused there with its reason.
    return false;
  }
  return merge || kept.size === rows.length;
}

const tupleText = (values: readonly StoredValue[]): string =>
  JSON.stringify(values.map((value) => (value instanceof Date ? value.toISOString() : String(value))));
