import { parseArgs } from 'node:util';
import { EXIT } from '../cli/exit-codes.js';
import type { CliStream } from '../cli/io.js';
import { registryOf, type Storage } from '../db/database.js';
import { planMigrations, type MigrationPlan } from '../db/migration-plan.js';
import { migrations } from '../db/migrations/index.js';
import { SCHEMA_LEVEL, type RegisteredProcess } from '../db/process-registry.js';
import { appliedMigrations, observeSchema } from '../db/schema-state.js';

export const UPGRADE_USAGE = `Usage: npm run admin -- upgrade check

Says whether this release can replace the running one a process at a time (docs/deploy.md, "Rolling upgrade"),
from the schema's migrations and the server processes registered on it. Changes nothing.
Exit codes: 0 a rolling upgrade is possible; 1 a fault (the database cannot be reached); 2 usage;
4 not possible (the reason is printed).
`;

const WHEN: Record<string, string> = {
  expand: 'applied by the first process of this release',
  contract: 'applied by the first process of this release to start after the last older one stopped',
  offline: 'needs every process of an earlier release stopped first',
};

/** `upgrade check`: reads, never migrates (the admin command runs it before its usual migration). */
export async function runUpgradeCheck(
  argv: readonly string[],
  storage: Storage,
  io: { out: (text: string) => void; err: (text: string) => void },
  progress?: CliStream,
): Promise<number> {
  let positionals: string[];
  try {
    ({ positionals } = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: {} }));
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${UPGRADE_USAGE}`);
    return EXIT.usage;
  }
  if (positionals.length !== 2 || positionals[1] !== 'check') {
    io.err(`upgrade takes: check.\n\n${UPGRADE_USAGE}`);
    return EXIT.usage;
  }
  progress?.write('upgrade check: reading the schema migrations...\n');
  const { schema, applied } = await appliedMigrations(storage.db);
  progress?.write('upgrade check: reading the registered server processes...\n');
  const observed = await observeSchema(storage.db, applied, registryOf(storage));
  const plan = planMigrations(migrations, observed);
  io.out(describeState(schema, applied, observed.processes));
  io.out(describePlan(plan));
  const reason = plan.refusal ?? newerProcesses(observed.processes);
  if (reason !== undefined) {
    io.out(`Rolling upgrade: not possible: ${reason}.\n`);
    return EXIT.refused;
  }
  io.out(
    observed.processes.length === 0
      ? 'Rolling upgrade: possible (no process serves the schema: start this release, it migrates).\n'
      : 'Rolling upgrade: possible.\n',
  );
  return EXIT.ok;
}

function describeState(schema: string, applied: ReadonlySet<string>, processes: RegisteredProcess[]): string {
  const newest = [...applied].sort().at(-1);
  const levels = new Map<string, number>();
  for (const { level } of processes) {
    const name = level === undefined ? 'before levels' : String(level);
    levels.set(name, (levels.get(name) ?? 0) + 1);
  }
  const running = [...levels].map(([level, count]) => `${count} at level ${level}`).join(', ');
  return (
    `Schema ${schema}: ${applied.size} migration(s) applied${newest === undefined ? '' : `, newest ${newest}`}.\n` +
    `This release: level ${SCHEMA_LEVEL} (${migrations.at(-1)!.name}).\n` +
    `Server processes registered: ${processes.length === 0 ? 'none' : running}.\n`
  );
}

function describePlan(plan: MigrationPlan): string {
  const pending = [...plan.apply, ...plan.deferred].sort((a, b) => a.name.localeCompare(b.name));
  if (pending.length === 0) return 'Pending migrations: none.\n';
  const width = Math.max(...pending.map((migration) => migration.name.length));
  return (
    'Pending migrations:\n' +
    pending
      .map(
        (migration) =>
          `  ${migration.name.padEnd(width)}  ${migration.phase.padEnd(8)}  ${WHEN[migration.phase]}\n`,
      )
      .join('')
  );
}

function newerProcesses(processes: RegisteredProcess[]): string | undefined {
  const newer = processes.filter((process) => (process.level ?? 0) > SCHEMA_LEVEL);
  if (newer.length === 0) return undefined;
  const level = Math.max(...newer.map((process) => process.level ?? 0));
  return `${newer.length} process(es) of a newer release (level ${level}) serve the schema; this release is older`;
}
