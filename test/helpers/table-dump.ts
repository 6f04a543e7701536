import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';

/** One table to dump: its rows matching `where` (SQL), the columns in `ignore` left out. */
export interface DumpedTable {
  table: string;
  where?: string;
  ignore?: readonly string[];
}

/**
 * The rows of tables as sorted JSON texts, to compare a database row by row before and after (a back-out against a
 * snapshot taken before the deploy). Dates as instants; numbers as PostgreSQL sends them on either engine.
 */
export async function dumpTables(
  db: Kysely<Database>,
  tables: readonly DumpedTable[],
): Promise<Record<string, string[]>> {
  const dump: Record<string, string[]> = {};
  for (const { table, where, ignore = [] } of tables) {
    const result = await sql<Record<string, unknown>>`select * from ${sql.table(table)}${
      where === undefined ? sql`` : sql` where ${sql.raw(where)}`
    }`.execute(db);
    const key = where === undefined ? table : `${table} where ${where}`;
    dump[key] = result.rows
      .map((row) =>
        JSON.stringify(
          Object.keys(row)
            .filter((column) => !ignore.includes(column))
            .sort()
            .map((column) => {
              const value = row[column];
              return [column, value instanceof Date ? value.toISOString() : value];
            }),
        ),
      )
      .sort();
  }
  return dump;
}

/** The columns of a table, in order (a structural change adds or drops one). */
export async function columnsOf(db: Kysely<Database>, table: string): Promise<string[]> {
  const result = await sql<{ column_name: string }>`select column_name from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} order by column_name`.execute(db);
  return result.rows.map((row) => row.column_name);
}
