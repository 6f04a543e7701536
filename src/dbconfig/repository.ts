import { sql, type Kysely } from 'kysely';
import type { StoredValue } from '../oslc/values.js';
import type { Database } from '../db/schema.js';

/**
 * SQL of database configuration (docs/dbconfig.md): the custom attributes in force (`maxattribute`), the pending
 * changes (`maxattributecfg`), and the DDL that carries a change out. Table names come from the metadata and column
 * names from checked attribute names, both quoted by Kysely; values are always bound.
 */

export interface CustomAttributeRow {
  objectname: string;
  attributename: string;
  maxtype: string;
  length: number | null;
  scale: number | null;
  required: boolean;
  defaultvalue: string | null;
  domainid: string | null;
  title: string;
  changeby: string | null;
  changedate: Date | null;
}

export interface PendingChangeRow {
  objectname: string;
  attributename: string;
  changetype: string;
  maxtype: string | null;
  length: number | null;
  scale: number | null;
  required: boolean | null;
  defaultvalue: string | null;
  domainid: string | null;
  title: string | null;
  changeby: string | null;
  changedate: Date | null;
}

const ATTRIBUTE_COLUMNS = [
  'objectname',
  'attributename',
  'maxtype',
  'length',
  'scale',
  'required',
  'defaultvalue',
  'domainid',
  'title',
  'changeby',
  'changedate',
] as const;

const PENDING_COLUMNS = [...ATTRIBUTE_COLUMNS, 'changetype'] as const;

export async function listCustomAttributes(db: Kysely<Database>): Promise<CustomAttributeRow[]> {
  return db
    .selectFrom('maxattribute')
    .select(ATTRIBUTE_COLUMNS)
    .orderBy('objectname')
    .orderBy('maxattributeid')
    .execute();
}

/** The pending changes; `lock` holds them for the rest of the transaction (an apply running elsewhere waits). */
export async function listPendingChanges(db: Kysely<Database>, lock = false): Promise<PendingChangeRow[]> {
  const query = db
    .selectFrom('maxattributecfg')
    .select(PENDING_COLUMNS)
    .orderBy('objectname')
    .orderBy('maxattributecfgid');
  return lock ? query.forUpdate().execute() : query.execute();
}

/** Stages a change, replacing the pending change of the same attribute if there is one. */
export async function upsertPendingChange(db: Kysely<Database>, change: PendingChangeRow): Promise<void> {
  const { objectname: _object, attributename: _attribute, ...rest } = change;
  await db
    .insertInto('maxattributecfg')
    .values(change)
    .onConflict((conflict) => conflict.columns(['objectname', 'attributename']).doUpdateSet(rest))
    .execute();
}

export async function deletePendingChanges(
  db: Kysely<Database>,
  changes: readonly PendingChangeRow[],
): Promise<void> {
  for (const change of changes) {
    await db
      .deleteFrom('maxattributecfg')
      .where('objectname', '=', change.objectname)
      .where('attributename', '=', change.attributename)
      .execute();
  }
}

export async function insertCustomAttribute(db: Kysely<Database>, row: CustomAttributeRow): Promise<void> {
  await db.insertInto('maxattribute').values(row).execute();
}

export async function updateCustomAttribute(db: Kysely<Database>, row: CustomAttributeRow): Promise<void> {
  const { objectname, attributename, ...rest } = row;
  await db
    .updateTable('maxattribute')
    .set(rest)
    .where('objectname', '=', objectname)
    .where('attributename', '=', attributename)
    .execute();
}

export async function deleteCustomAttribute(
  db: Kysely<Database>,
  objectname: string,
  attributename: string,
): Promise<void> {
  await db
    .deleteFrom('maxattribute')
    .where('objectname', '=', objectname)
    .where('attributename', '=', attributename)
    .execute();
}

export async function domainExists(db: Kysely<Database>, domainid: string): Promise<boolean> {
  const row = await db
    .selectFrom('maxdomain')
    .select('domainid')
    .where('domainid', '=', domainid)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the table has a column of that name, attribute or not (`rowstamp`, internal columns). */
export async function columnExists(db: Kysely<Database>, table: string, column: string): Promise<boolean> {
  const result = await sql`
    select 1 from information_schema.columns
     where table_schema = current_schema() and table_name = ${table} and column_name = ${column}`.execute(db);
  return result.rows.length > 0;
}

/** The SQL type of a column, built from a checked type name and whole numbers only (docs/dbconfig.md, "Types"). */
export type ColumnSqlType =
  | { kind: 'varchar'; length: number }
  | { kind: 'numeric'; precision: number; scale: number }
  | { kind: 'integer' | 'date' | 'timestamptz' | 'boolean' };

function typeSql(type: ColumnSqlType) {
  switch (type.kind) {
    case 'varchar':
      return sql`varchar(${sql.lit(checkedWhole(type.length))})`;
    case 'numeric':
      return sql`numeric(${sql.lit(checkedWhole(type.precision))}, ${sql.lit(checkedWhole(type.scale))})`;
    case 'integer':
      return sql`integer`;
    case 'date':
      return sql`date`;
    case 'timestamptz':
      return sql`timestamptz`;
    case 'boolean':
      return sql`boolean`;
  }
}

/** A number reaching DDL as a literal: a whole number or nothing, whatever a caller passed. */
function checkedWhole(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`Not a whole number: ${value}`);
  return value;
}

export async function addColumn(db: Kysely<Database>, table: string, column: string, type: ColumnSqlType) {
  await sql`alter table ${sql.table(table)} add column ${sql.ref(column)} ${typeSql(type)}`.execute(db);
}

export async function alterColumnType(
  db: Kysely<Database>,
  table: string,
  column: string,
  type: ColumnSqlType,
) {
  await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} type ${typeSql(type)}`.execute(
    db,
  );
}

export async function setColumnRequired(
  db: Kysely<Database>,
  table: string,
  column: string,
  required: boolean,
) {
  await (
    required
      ? sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set not null`
      : sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} drop not null`
  ).execute(db);
}

/** Gives the rows without a value the default (bound), before the column becomes required. */
export async function fillEmptyColumn(
  db: Kysely<Database>,
  table: string,
  column: string,
  value: StoredValue,
) {
  await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${value} where ${sql.ref(column)} is null`.execute(
    db,
  );
}

export async function dropColumn(db: Kysely<Database>, table: string, column: string) {
  await sql`alter table ${sql.table(table)} drop column ${sql.ref(column)}`.execute(db);
}
