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

/** The stored identity of the deployment (migration 0020), if a process has given it one. */
export interface StoredDeploymentIdentity {
  deploymentid: string;
  label: string;
  createdate: Date;
}

export async function findDeploymentIdentity<DB>(
  db: Kysely<DB>,
): Promise<StoredDeploymentIdentity | undefined> {
  const result = await sql<StoredDeploymentIdentity>`
    select deploymentid::text as deploymentid, label, createdate from deploymentidentity`.execute(db);
  return result.rows[0];
}

/** Stores the identity unless one is stored already (by a process starting at the same time): the first one wins. */
export async function insertDeploymentIdentity<DB>(
  db: Kysely<DB>,
  deploymentid: string,
  label: string,
): Promise<void> {
  await sql`
    insert into deploymentidentity (deploymentid, label) values (${deploymentid}::uuid, ${label})
    on conflict (singleton) do nothing`.execute(db);
}

/** Where the database is, as a reader recognises it: `host:port/database/schema` (null host: a local socket). */
export async function databaseLocation<DB>(
  db: Kysely<DB>,
): Promise<{ host: string | null; port: number | null; name: string; schema: string }> {
  const result = await sql<{ host: string | null; port: number | null; name: string; schema: string }>`
    select host(inet_server_addr()) as host, inet_server_port() as port, current_database() as name,
      current_schema() as schema`.execute(db);
  return result.rows[0]!;
}
