import { sql, type Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import type { ObjectMeta } from '../metadata/registry.js';
import type { StoredValue } from './values.js';

/** SQL of the write path, for any object the metadata declares; names come from metadata, values are bound. */
type Db = Kysely<DynamicDatabase>;
export type Row = Record<string, StoredValue>;

const matches = (pairs: ReadonlyArray<readonly [string, StoredValue]>) =>
  pairs.map(([column, value]) =>
    value === null ? sql`${sql.ref(column)} is null` : sql`${sql.ref(column)} = ${value}`,
  );

function whereAll(pairs: ReadonlyArray<readonly [string, StoredValue]>) {
  return sql.join(matches(pairs), sql` and `);
}

export async function findByKeys(
  db: Db,
  object: ObjectMeta,
  keyValues: readonly StoredValue[],
): Promise<Row | undefined> {
  const pairs = object.keys.map((key, index) => [key, keyValues[index] ?? null] as const);
  const result =
    await sql<Row>`select * from ${sql.table(object.table)} where ${whereAll(pairs)} limit 1`.execute(db);
  return result.rows[0];
}

export async function findByUniqueId(db: Db, object: ObjectMeta, uniqueId: number): Promise<Row | undefined> {
  const result =
    await sql<Row>`select * from ${sql.table(object.table)} where ${sql.ref(object.uniqueId)} = ${uniqueId}`.execute(
      db,
    );
  return result.rows[0];
}

/** Locks the row for the rest of the transaction, so a concurrent writer waits instead of overwriting. */
export async function lockByUniqueId(db: Db, object: ObjectMeta, uniqueId: number): Promise<Row | undefined> {
  const result =
    await sql<Row>`select * from ${sql.table(object.table)} where ${sql.ref(object.uniqueId)} = ${uniqueId} for update`.execute(
      db,
    );
  return result.rows[0];
}

export async function exists(
  db: Db,
  table: string,
  pairs: ReadonlyArray<readonly [string, StoredValue]>,
): Promise<boolean> {
  const result = await sql`select 1 from ${sql.table(table)} where ${whereAll(pairs)} limit 1`.execute(db);
  return result.rows.length > 0;
}

export async function findAll(
  db: Db,
  table: string,
  pairs: ReadonlyArray<readonly [string, StoredValue]>,
): Promise<Row[]> {
  const result = await sql<Row>`select * from ${sql.table(table)} where ${whereAll(pairs)}`.execute(db);
  return result.rows;
}

export async function insertRow(db: Db, object: ObjectMeta, values: Readonly<Row>): Promise<Row> {
  const columns = Object.keys(values);
  const result =
    await sql<Row>`insert into ${sql.table(object.table)} (${sql.join(columns.map((column) => sql.ref(column)))})
    values (${sql.join(columns.map((column) => values[column] ?? null))}) returning *`.execute(db);
  return result.rows[0]!;
}

export async function updateRow(
  db: Db,
  object: ObjectMeta,
  uniqueId: number,
  values: Readonly<Row>,
): Promise<void> {
  const assignments = Object.entries(values).map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
  // An update with nothing to change still takes a new rowstamp: the client asked for a write. The unique id is an
  // identity column that refuses any assignment, so the no-op assigns the rowstamp (its trigger renews it).
  const set = assignments.length > 0 ? sql.join(assignments) : sql`rowstamp = rowstamp`;
  await sql`update ${sql.table(object.table)} set ${set} where ${sql.ref(object.uniqueId)} = ${uniqueId}`.execute(
    db,
  );
}

export async function deleteRow(db: Db, object: ObjectMeta, uniqueId: number): Promise<void> {
  await sql`delete from ${sql.table(object.table)} where ${sql.ref(object.uniqueId)} = ${uniqueId}`.execute(
    db,
  );
}
