import { sql, type Kysely } from 'kysely';

export interface DatabaseVersion {
  /** `server_version`, e.g. `16.4` or `17.5 (Debian 17.5-1)`. */
  version: string;
  /** `server_version_num`, e.g. `160004`. */
  versionNumber: number;
}

/** The database server's version, as it reports it (PostgreSQL and PGlite alike). */
export async function databaseVersion<DB>(db: Kysely<DB>): Promise<DatabaseVersion> {
  const result = await sql<{ version: string; num: string }>`
    select current_setting('server_version') as version, current_setting('server_version_num') as num`.execute(
    db,
  );
  const row = result.rows[0];
  return { version: row?.version ?? '', versionNumber: Number(row?.num ?? 0) };
}
