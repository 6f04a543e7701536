import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../../db/schema.js';
import type { ObjectMeta, StructureNode } from '../../metadata/registry.js';
import type { ColumnLimits } from '../../oslc/column-limits.js';
import type { Row } from '../../oslc/repository.js';
import type { StoredValue } from '../../oslc/values.js';
import { jsonValue, type JsonRecord } from '../packages.js';
import { findByKeys } from '../../oslc/repository.js';
import { childRows, rowsByKeys } from './repository.js';

/*
 * Records as an inverse package carries them (docs/migration.md, "Back-out"): read set-wise, one statement per
 * object of the structure for a whole chunk of records, whatever their number of children.
 */

/** Key values as text, equal for the values a package sends and the values stored. */
export function keyText(values: readonly (StoredValue | undefined)[]): string {
  return JSON.stringify(
    values.map((value) =>
      value === undefined || value === null
        ? null
        : String(value instanceof Date ? value.toISOString() : value),
    ),
  );
}

export const rowKey = (object: ObjectMeta, row: Row): string =>
  keyText(object.keys.map((key) => row[key] ?? null));

/** A stored record: its root row, and its whole record (children included) as a package line holds it. */
export interface StoredRecord {
  row: Row;
  record: JsonRecord;
}

/** The stored records among `keyTuples` with every child collection, by key text. */
export async function storedRecords(
  db: Kysely<DynamicDatabase>,
  limits: ColumnLimits,
  node: StructureNode,
  keyTuples: readonly (readonly StoredValue[])[],
): Promise<Map<string, StoredRecord>> {
  const rows = await rootRows(db, limits, node.object, keyTuples);
  const records = await withChildren(db, limits, node, rows);
  return new Map(rows.map((row, index) => [rowKey(node.object, row), { row, record: records[index]! }]));
}

/**
 * The root rows among `keyTuples`: one statement for the keys without a null part, a look-up each for the others
 * (a null part matches only `is null`, rare: domain values without a site or an organization).
 */
export async function rootRows(
  db: Kysely<DynamicDatabase>,
  limits: ColumnLimits,
  object: ObjectMeta,
  keyTuples: readonly (readonly StoredValue[])[],
): Promise<Row[]> {
  const complete = keyTuples.filter((tuple) => tuple.every((value) => value !== null));
  const rows = await rowsByKeys(db, limits, object, complete);
  for (const tuple of keyTuples) {
    if (tuple.every((value) => value !== null)) continue;
    const row = await findByKeys(db, object, tuple);
    if (row) rows.push(row);
  }
  return rows;
}

/** The rows as records, each with its child collections (read one statement per child node). */
async function withChildren(
  db: Kysely<DynamicDatabase>,
  limits: ColumnLimits,
  node: StructureNode,
  rows: readonly Row[],
): Promise<JsonRecord[]> {
  const exportOf = rowExporter(node.object);
  const records = rows.map(exportOf);
  for (const child of node.children) {
    const children = await childRows(db, limits, child, rows);
    const childRecords = await withChildren(db, limits, child, children);
    const byParent = new Map<string, JsonRecord[]>();
    children.forEach((row, index) => {
      const parentKey = keyText(child.on.map(([, childAttribute]) => row[childAttribute] ?? null));
      const list = byParent.get(parentKey) ?? [];
      list.push(childRecords[index]!);
      byParent.set(parentKey, list);
    });
    rows.forEach((row, index) => {
      const parentKey = keyText(child.on.map(([parentAttribute]) => row[parentAttribute] ?? null));
      records[index]![child.name] = byParent.get(parentKey) ?? [];
    });
  }
  return records;
}

/** A row as a package carries it: what a client may write, no unique ids or stamps; nulls carried. */
export function exportRow(object: ObjectMeta, row: Row): JsonRecord {
  return rowExporter(object)(row);
}

/** `exportRow` for many rows of one object: the attributes it carries chosen once, in the same order. */
export function rowExporter(object: ObjectMeta): (row: Row) => JsonRecord {
  const names = [...object.attributes.values()]
    .filter((attribute) => !attribute.generated && !attribute.writeOnly && attribute.name !== object.uniqueId)
    .map((attribute) => attribute.name);
  return (row) => {
    const record: JsonRecord = {};
    for (const name of names) {
      const value = row[name] ?? null;
      record[name] = value === null ? null : jsonValue(value);
    }
    return record;
  };
}
