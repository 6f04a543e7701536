import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import { migrations } from './migrations/index.js';

/**
 * Which release each server process on the schema runs (src/db/README.md, "Phases"). Every process already
 * registers itself: its change-bus connection carries `eas bus <prefix>` in `application_name` (the confirmations
 * count them). That name stays the same across releases, so a process of an earlier release still counts every
 * process; the release is told apart by a shared advisory lock the connection holds, keyed by the schema level: the
 * sequence number of the newest migration the process knows. A process of a release before the levels holds none.
 * `pg_stat_activity` and `pg_locks` are readable by every role.
 */
const LEVEL_LOCK_CLASS = 0x45415355; // "EASU"

/** This build's schema level: the number of its newest migration (`0034-...` → 34). */
export const SCHEMA_LEVEL = levelOf(migrations[migrations.length - 1]!.name);

export function levelOf(migrationName: string): number {
  return Number.parseInt(migrationName.slice(0, 4), 10);
}

/** Held on the change-bus connection for as long as it is open: released with it when the process stops. */
export async function registerLevel(client: pg.Client): Promise<void> {
  await client.query('select pg_advisory_lock_shared($1, $2)', [LEVEL_LOCK_CLASS, SCHEMA_LEVEL]);
}

/** A registered process: its change-bus connection's backend, and its schema level (undefined: before levels). */
export interface RegisteredProcess {
  pid: number;
  level: number | undefined;
}

/** The processes whose change-bus connection is open on the schema whose connections carry `applicationName`. */
export async function registeredProcesses<DB>(
  db: Kysely<DB>,
  applicationName: string,
): Promise<RegisteredProcess[]> {
  const { rows } = await sql<{ pid: number; level: number | null }>`
    select a.pid, l.objid::int as level
    from pg_stat_activity a
    left join pg_locks l on l.pid = a.pid and l.locktype = 'advisory' and l.objsubid = 2
      and l.classid::bigint = ${LEVEL_LOCK_CLASS}
    where a.datname = current_database() and a.application_name = ${applicationName}
    order by a.pid`.execute(db);
  return rows.map((row) => ({ pid: row.pid, level: row.level ?? undefined }));
}
