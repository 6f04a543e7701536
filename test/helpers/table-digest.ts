import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

/** Per table of the current schema (the migrator's own bookkeeping aside): how many rows it holds and a digest of their values, in no particular order. */
export type TableDigests = Record<string, { rows: number; digest: string }>;

export interface DigestOptions {
  /** Dates from this instant on are the seeding's own time and compare as `now`. */
  since: Date;
  /** Values that differ between seedings by design (a salted password hash, the database's identity). */
  varying: ReadonlyArray<{ table: string; column: string }>;
}

function normalized(value: unknown, since: Date): unknown {
  if (value instanceof Date) return value.getTime() >= since.getTime() ? 'now' : value.toISOString();
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  return value;
}

/**
 * What the tables hold, row by row, with the values a seeding cannot repeat set aside: rowstamps (a counter shared
 * by every write), the seeding's own time and `varying`. Two seedings that wrote the same rows give equal digests.
 */
export async function tableDigests<DB>(db: Kysely<DB>, options: DigestOptions): Promise<TableDigests> {
  const { rows: tables } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not like 'kysely%'
    order by table_name`.execute(db);
  const digests: TableDigests = {};
  for (const { name } of tables) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
    const skipped = new Set(
      options.varying.filter((entry) => entry.table === name).map((entry) => entry.column),
    );
    const lines = rows
      .map((row) =>
        JSON.stringify(
          Object.keys(row)
            .filter((column) => column !== 'rowstamp' && !skipped.has(column))
            .sort()
            .map((column) => [column, normalized(row[column], options.since)]),
        ),
      )
      .sort();
    const digest = createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 32);
    digests[name] = { rows: rows.length, digest };
  }
  return digests;
}
