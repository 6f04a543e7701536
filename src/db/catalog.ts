import { sql, type Kysely } from 'kysely';

/** What the database itself enforces on a column: the limits validation must check before a write reaches it. */
export interface ColumnCatalogRow {
  table: string;
  column: string;
  dataType: string;
  nullable: boolean;
  hasDefault: boolean;
  /** Characters of `varchar(n)`. */
  maxLength: number | null;
  /** Digits of `numeric(p, s)`. */
  precision: number | null;
  scale: number | null;
}

interface CatalogRecord {
  table_name: string;
  column_name: string;
  data_type: string;
  is_nullable: string;
  column_default: string | null;
  is_identity: string;
  character_maximum_length: number | null;
  numeric_precision: number | null;
  numeric_scale: number | null;
}

/** The columns of every table of the current schema (the one `search_path` names: EAS_DB_SCHEMA or the default). */
export async function loadColumnCatalog<DB>(db: Kysely<DB>): Promise<ColumnCatalogRow[]> {
  const result = await sql<CatalogRecord>`
    select table_name, column_name, data_type, is_nullable, column_default, is_identity,
           character_maximum_length, numeric_precision, numeric_scale
      from information_schema.columns
     where table_schema = current_schema()`.execute(db);
  return result.rows.map((row) => ({
    table: row.table_name,
    column: row.column_name,
    dataType: row.data_type,
    nullable: row.is_nullable === 'YES',
    hasDefault: row.column_default !== null || row.is_identity === 'YES',
    maxLength: row.character_maximum_length === null ? null : Number(row.character_maximum_length),
    precision: row.numeric_precision === null ? null : Number(row.numeric_precision),
    scale: row.numeric_scale === null ? null : Number(row.numeric_scale),
  }));
}

/**
 * Takes the planner's statistics of every table of the schema. PostgreSQL's autovacuum does it some time after rows
 * arrive and the embedded database never does: without them the planner guesses, and may look up the rows that refer
 * to an asset through an index of other columns (docs/operations.md, "Statistics").
 */
export async function analyzeSchema<DB>(db: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    select quote_ident(table_name) as name from information_schema.tables
     where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  if (rows.length === 0) return;
  await sql.raw(`analyze ${rows.map((row) => row.name).join(', ')}`).execute(db);
}
