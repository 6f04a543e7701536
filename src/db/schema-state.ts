import { sql, type Kysely } from 'kysely';
import { migrations, type Migration } from './migrations/index.js';
import type { MigrationPhase } from './migrations/migration.js';
import type { SchemaState } from './migration-plan.js';
import { registeredProcesses, SCHEMA_LEVEL, type RegisteredProcess } from './process-registry.js';

/** The schema as a process of this build finds it before migrating, and the processes serving it. */
export interface ObservedSchema extends SchemaState {
  /** The registered processes other than this one (`ownPid`: this process's change-bus backend). */
  processes: RegisteredProcess[];
}

/**
 * Reads the recorded phases and, on PostgreSQL (`applicationName` of the change bus), the registered processes. A
 * process whose level is unknown (a release before levels) or lower is of an earlier release; this process's own
 * registration has this build's level and is not counted.
 */
export async function observeSchema<DB>(
  db: Kysely<DB>,
  applied: ReadonlySet<string>,
  registry: { applicationName: string; ownPid?: number | undefined } | undefined,
): Promise<ObservedSchema> {
  const { rows: tables } = await sql<{ phases: boolean }>`
    select to_regclass(quote_ident(current_schema()) || '.easmigration') is not null as phases`.execute(db);
  const recorded = tables[0]?.phases
    ? (await sql<{ name: string; phase: MigrationPhase }>`select name, phase from easmigration`.execute(db))
        .rows
    : [];
  const processes =
    registry === undefined
      ? []
      : (await registeredProcesses(db, registry.applicationName)).filter(
          (process) => process.pid !== registry.ownPid,
        );
  return {
    applied,
    recordedPhases: new Map(recorded.map((row) => [row.name, row.phase])),
    olderProcesses: processes.filter((process) => (process.level ?? 0) < SCHEMA_LEVEL).length,
    processes,
  };
}

/** The applied migrations of the current schema (none before its migration table exists), and the schema. */
export async function appliedMigrations<DB>(
  db: Kysely<DB>,
): Promise<{ schema: string; applied: Set<string> }> {
  const { rows } = await sql<{ schema: string; recorded: boolean }>`
    select current_schema() as schema,
      to_regclass(quote_ident(current_schema()) || '.kysely_migration') is not null as recorded`.execute(db);
  const applied = rows[0]?.recorded
    ? (await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows.map((row) => row.name)
    : [];
  return { schema: rows[0]?.schema ?? 'public', applied: new Set(applied) };
}

/** Records the phase of every applied migration this build knows, for processes of earlier releases to read. */
export async function recordPhases<DB>(db: Kysely<DB>, applied: readonly Migration[]): Promise<void> {
  if (applied.length === 0) return;
  const values = applied.map((migration) => sql`(${migration.name}, ${migration.phase})`);
  await sql`insert into easmigration (name, phase) values ${sql.join(values)}
    on conflict (name) do nothing`.execute(db);
}

/** Whether every migration this build knows is applied and no other is (the start-up's one read). */
export function upToDate(applied: ReadonlySet<string>): boolean {
  return applied.size === migrations.length && migrations.every((migration) => applied.has(migration.name));
}
