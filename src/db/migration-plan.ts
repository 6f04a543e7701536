import type { Migration, MigrationPhase } from './migrations/migration.js';

/** What a process of this build finds on the schema: what it can read before it migrates. */
export interface SchemaState {
  /** Names of the applied migrations (the migration table). */
  applied: ReadonlySet<string>;
  /** Phases recorded for applied migrations (`easmigration`); those of a newer release are read from here. */
  recordedPhases: ReadonlyMap<string, MigrationPhase>;
  /** Other processes serving the schema of an earlier release than this build (src/db/process-registry.ts). */
  olderProcesses: number;
}

/** What this build does with the schema, or why it cannot serve it. */
export interface MigrationPlan {
  /** Pending migrations to apply now, oldest first. */
  apply: Migration[];
  /** Pending contract migrations that wait for the earlier release's last process to stop. */
  deferred: Migration[];
  /** Applied migrations this build does not know (a newer release), each with its recorded phase. */
  newer: Array<{ name: string; phase: MigrationPhase | undefined }>;
  /** Set when this build cannot serve the schema: the reason. */
  refusal?: string;
}

/**
 * Expand migrations apply at once; contract ones wait until no process of an earlier release remains; an offline
 * one cannot run while one does. A schema a newer release has contracted (or rewritten) this build refuses: what
 * it may read could be gone (docs/deploy.md, "Rolling upgrade").
 */
export function planMigrations(known: readonly Migration[], state: SchemaState): MigrationPlan {
  const knownNames = new Set(known.map((migration) => migration.name));
  const newer = [...state.applied]
    .filter((name) => !knownNames.has(name))
    .sort()
    .map((name) => ({ name, phase: state.recordedPhases.get(name) }));
  const pending = known.filter((migration) => !state.applied.has(migration.name));
  const older = state.olderProcesses > 0;
  const plan: MigrationPlan = {
    apply: pending.filter((migration) => migration.phase !== 'contract' || !older),
    deferred: pending.filter((migration) => migration.phase === 'contract' && older),
    newer,
  };
  const notServable = newer.find((migration) => migration.phase !== 'expand');
  if (notServable !== undefined) {
    plan.refusal =
      `the schema has migration ${notServable.name} (${notServable.phase ?? 'phase not recorded'}) of a newer ` +
      'release, which removes or rewrites what this release may use: run the newer release';
    return plan;
  }
  const offline = pending.find((migration) => migration.phase === 'offline');
  if (offline !== undefined && older)
    plan.refusal =
      `migration ${offline.name} (offline) rewrites what the running release uses and cannot run while ` +
      `${state.olderProcesses} process(es) of it serve the schema: stop them, then start this release`;
  return plan;
}
