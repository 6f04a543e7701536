import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import type { ObjectMeta, ObjectStructure } from '../metadata/registry.js';
import { joinPairs } from '../oslc/child-entries.js';
import { findAll, type Row } from '../oslc/repository.js';
import { isDateType, isNumericType, parseIsoDate } from '../oslc/values.js';

/*
 * The drift guard of CHANGE packages (docs/migration.md, "Drift guard"): a record's root row hashed over the
 * attributes a package migrates, normalized so that the same values hash alike on the source and on the target
 * whichever engine stored them (numbers as text or numbers, dates as instants, '' as null).
 */

/** Field of a package line that holds the hash the target's row must have (absent: nothing to check). */
export const EXPECTED_FIELD = '_expected';

/** The root attributes a package carries and the drift hash covers: what a client may write, no unique id. */
export function driftAttributes(object: ObjectMeta): string[] {
  return [...object.attributes.values()]
    .filter((attribute) => !attribute.generated && !attribute.writeOnly && attribute.name !== object.uniqueId)
    .map((attribute) => attribute.name)
    .sort();
}

/**
 * The hash of a row over `names` (the source's list, from the manifest): each value normalized by the attribute's
 * type on this side; an attribute this side does not know counts as null. Nulls are left out, so an attribute added
 * (or removed) while everyone's value is null changes no hash: a write hashed before a custom attribute was added
 * still matches a package listing it.
 */
export function driftHash(
  object: ObjectMeta,
  names: readonly string[],
  row: Readonly<Record<string, unknown>>,
): string {
  return driftHasher(object, names)(row);
}

/** How `normalize` reads an attribute's values, decided once per attribute rather than once per value. */
interface AttributeKind {
  /** The attribute's name as JSON text, as the hashed pairs hold it. */
  json: string;
  date: boolean;
  numeric: boolean;
  yorn: boolean;
}

/**
 * `driftHash` for many rows of one object over the same names: the attributes' types looked up once, and the hashed
 * text (the JSON of the `[name, value]` pairs whose value is not null) written directly, the same bytes as
 * `JSON.stringify` of the pairs.
 */
export function driftHasher(
  object: ObjectMeta,
  names: readonly string[],
): (row: Readonly<Record<string, unknown>>) => string {
  const kinds = names.map((name): [string, AttributeKind] => {
    const type = object.attributes.get(name)?.type;
    return [
      name,
      {
        json: JSON.stringify(name),
        date: type !== undefined && isDateType(type),
        numeric: type !== undefined && isNumericType(type),
        yorn: type === 'YORN',
      },
    ];
  });
  return (row) => {
    let text = '';
    for (const [name, kind] of kinds) {
      const value = normalize(kind, row[name]);
      if (value === null) continue;
      const json = typeof value === 'string' ? JSON.stringify(value) : String(value);
      text += `${text === '' ? '' : ','}[${kind.json},${json}]`;
    }
    return createHash('sha256').update(`[${text}]`).digest('hex');
  };
}

function normalize(kind: AttributeKind, value: unknown): string | boolean | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (kind.date && typeof value === 'string') return parseIsoDate(value)?.toISOString() ?? value;
  if (kind.numeric || typeof value === 'number' || typeof value === 'bigint') {
    const number = Number(value);
    // 12.50 and 12.5, -0 and 0: one text per number (String gives the shortest form that reads back the same).
    return Number.isFinite(number) ? String(number === 0 ? 0 : number) : String(value);
  }
  if (kind.yorn || typeof value === 'boolean')
    return value === true || value === 1 || value === '1' || value === 'Y' || value === 'true';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Whether a package line's record meets drift on this deployment: it carries an expected hash, the row it names is
 * here (a record to add, or a deletion of a missing row, is never drift), and that row hashes otherwise.
 */
export function drifted(
  object: ObjectMeta,
  names: readonly string[] | undefined,
  record: Readonly<Record<string, unknown>>,
  existing: Readonly<Record<string, unknown>> | undefined,
): boolean {
  const expected = record[EXPECTED_FIELD];
  if (names === undefined || typeof expected !== 'string' || existing === undefined) return false;
  return driftHash(object, names, existing) !== expected;
}

/** The root's child collections a drift hash covers, each with the attributes of its rows (manifest `expectedchildren`). */
export type ChildDriftAttributes = Array<{ name: string; attributes: string[] }>;

/** Every child collection of the structure's root, with the attributes a package carries of its rows. */
export function childDriftAttributes(structure: ObjectStructure): ChildDriftAttributes {
  return structure.root.children.map((child) => ({
    name: child.name,
    attributes: driftAttributes(child.object),
  }));
}

/**
 * The hash of a whole record: its root row's (`driftHash`), and with `children` (a package that lists them) each
 * child collection's rows, hashed row by row and sorted, so that the order the rows are read in does not matter.
 * A package without `expectedchildren` (an older one) hashes the root row only, as it was made.
 */
export function recordHash(
  structure: ObjectStructure,
  names: readonly string[],
  children: ChildDriftAttributes | undefined,
  row: Readonly<Row>,
  childRows: ReadonlyMap<string, readonly Row[]>,
): string {
  const root = driftHash(structure.root.object, names, row);
  if (children === undefined) return root;
  const collections = children.map(({ name, attributes }) => {
    const object = structure.root.children.find((child) => child.name === name)?.object;
    const rows = object ? (childRows.get(name) ?? []) : [];
    return [name, rows.map((child) => driftHash(object!, attributes, child)).sort()] as const;
  });
  return createHash('sha256')
    .update(JSON.stringify([root, collections]))
    .digest('hex');
}

/** The stored rows of the root's child collections `children` names, for `recordHash`. */
export async function childRowsOf(
  db: Kysely<DynamicDatabase>,
  structure: ObjectStructure,
  children: ChildDriftAttributes | undefined,
  row: Readonly<Row>,
): Promise<Map<string, Row[]>> {
  const rows = new Map<string, Row[]>();
  for (const { name } of children ?? []) {
    const child = structure.root.children.find((candidate) => candidate.name === name);
    if (child) rows.set(name, await findAll(db, child.object.table, joinPairs(child, row)));
  }
  return rows;
}

/**
 * Whether a package line's record meets drift on this deployment (as `drifted`), its child collections included
 * when the package's hashes cover them.
 */
export async function recordDrifted(
  db: Kysely<DynamicDatabase>,
  structure: ObjectStructure,
  entry: { expectedattributes?: string[] | undefined; expectedchildren?: ChildDriftAttributes | undefined },
  record: Readonly<Record<string, unknown>>,
  existing: Readonly<Row> | undefined,
): Promise<boolean> {
  const names = entry.expectedattributes;
  const expected = record[EXPECTED_FIELD];
  if (names === undefined || typeof expected !== 'string' || existing === undefined) return false;
  const childRows = await childRowsOf(db, structure, entry.expectedchildren, existing);
  return recordHash(structure, names, entry.expectedchildren, existing, childRows) !== expected;
}
