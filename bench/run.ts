// `npm run bench [-- <section>...] [options]`: see bench/README.md.
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { compileServers } from './lib/compile.js';
import { resultsDir, rootDir, runPair, type PairOptions, type PairResult } from './lib/pair.js';
import { BENCH_DATABASE_URL } from './lib/settings.js';
import { formatTable } from './lib/table.js';
import { formatProfile, summarizeProfile } from './lib/profile.js';
import type { LoadSettings, Pair, Section, SectionContext, StorageKind } from './lib/types.js';
import { plannedSections, sections } from './sections/index.js';
import { attachmentBenchmark, formatAttachments } from './attachments.js';
import { backoutBenchmark, formatBackout } from './backout.js';
import { backupBenchmark, formatBackup } from './backup.js';
import { deployBenchmark, formatDeploy } from './deploy.js';
import { formatMemo, measureMemoCaches } from './memo.js';
import { formatSoak, soak } from './soak.js';
import { formatStartup, startup, type StartupRow } from './startup.js';

/**
 * Every pair runs at each of these: 4 connections keep the server busy while a request waits on PostgreSQL with
 * little queueing, so the latency is the service's; 32 saturate the CPU, where any per-request cost shows in full.
 */
const DEFAULT_CONNECTIONS = [4, 32];

const USAGE = `usage: npm run bench -- [section ...] [options]

sections (default: all): startup, ${sections.map((section) => section.name).join(', ')}
soak:                    npm run bench -- soak [--duration <s> (default 1800)] [--connections <n>]
memo:                    npm run bench -- memo (what each memo cache of the request path saves, in-process)
backout:                 npm run bench -- backout [--records <n> (default 100000)]
                         (a deploy's back-out against INSERTs of the same rows)
attachments:             npm run bench -- attachments [--megabytes <n> (default 100)]
                         (an attachment uploaded and downloaded on PostgreSQL and PGlite against a stream to disk)
backup:                  npm run bench -- backup [--records <n> (default 100000)] [--reload]
                         (eas backup of a running PGlite deployment against tar of its stopped directory; restore)
deploy:                  npm run bench -- deploy [--records <n> (default 100000)] [--heap <MiB>]
                         (a package deploy against INSERTs; --heap limits the servers' V8 old space)
planned:                 ${plannedSections.map((section) => section.name).join(', ')}

options:
  --duration <s>      measured seconds per scenario (default 10)
  --warmup <s>        discarded warm-up seconds per scenario (default 2)
  --connections <n,m> concurrent connections; every pair runs at each (default ${DEFAULT_CONNECTIONS.join(',')})
  --rounds <n>        slices the measured time is cut into, alternating baseline and service (default 10)
  --starts <n>        startup: starts per timing, the median is reported (default 5)
  --idle <s>          startup: idle seconds before the idle RSS (default 10)
  --load <s>          startup: seconds of mixed load before the loaded RSS (default 30)
  --reload            rebuild the fixtures even if an earlier run left them in place
  --profile           CPU-profile each server child over the measured window and print where the time goes
  --cost              the cost account: CPU us per request of each stage of the request path, both servers
                      side by side (profiled at a finer interval; e.g. npm run bench -- session --cost)
  --storage <kind>    postgres (default) or pglite: where the property-call sections' service keeps its data
  --pair <name,...>   run only the pairs of these names (e.g. --pair "property set"), case-insensitive
  --list              list the sections and exit
`;

const log = (message: string): void => void process.stderr.write(`bench: ${message}\n`);

function positiveNumber(name: string, text: string | undefined, fallback: number, allowZero = false): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new Error(`--${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got "${text}"`);
  }
  return value;
}

function selectSections(names: readonly string[]): Section[] {
  if (names.length === 0) return [...sections];
  return names.map((name) => {
    const wanted = name.toLowerCase();
    const section = sections.find((candidate) => candidate.name.toLowerCase() === wanted);
    if (section) return section;
    const planned = plannedSections.find((candidate) => candidate.name.toLowerCase() === wanted);
    if (planned)
      throw new Error(`section "${planned.name}" (issue ${planned.issue}) is planned, not written yet`);
    throw new Error(`unknown section "${name}"; known: ${sections.map((each) => each.name).join(', ')}`);
  });
}

/** `--connections 4,32`: the levels every pair runs at. */
function connectionList(text: string | undefined): number[] {
  if (text === undefined) return DEFAULT_CONNECTIONS;
  return text.split(',').map((part) => Math.round(positiveNumber('connections', part.trim(), 1)));
}

const OPTIONS = {
  duration: { type: 'string' },
  warmup: { type: 'string' },
  connections: { type: 'string' },
  rounds: { type: 'string' },
  starts: { type: 'string' },
  idle: { type: 'string' },
  load: { type: 'string' },
  records: { type: 'string' },
  megabytes: { type: 'string' },
  heap: { type: 'string' },
  storage: { type: 'string' },
  pair: { type: 'string' },
  reload: { type: 'boolean', default: false },
  profile: { type: 'boolean', default: false },
  cost: { type: 'boolean', default: false },
  list: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Options = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function listSections(): void {
  process.stdout.write(
    `${'startup'.padEnd(12)} issue 18: start to first answer and resident memory of npm start\n`,
  );
  process.stdout.write(
    `${'deploy'.padEnd(12)} a 100,000-record migration package deployed against plain batched INSERTs (own mode)\n`,
  );
  process.stdout.write(
    `${'attachments'.padEnd(12)} a 100 MB attachment up and down on both engines against a stream to disk (own mode)\n`,
  );
  process.stdout.write(
    `${'backout'.padEnd(12)} the back-out of a 100,000-record deploy against plain batched INSERTs (own mode)\n`,
  );
  process.stdout.write(
    `${'backup'.padEnd(12)} eas backup and restore of a 100,000-asset PGlite deployment against tar (own mode)\n`,
  );
  for (const section of sections)
    process.stdout.write(`${section.name.padEnd(12)} issue ${section.issue}: ${section.summary}\n`);
  for (const section of plannedSections)
    process.stdout.write(`${section.name.padEnd(12)} issue ${section.issue} (planned): ${section.summary}\n`);
}

/** The modes that are not pairs (memo, soak, deploy): their exit code, or undefined when the run is pairs. */
async function ownMode(positionals: readonly string[], values: Options): Promise<number | undefined> {
  const mode = positionals.length === 1 ? positionals[0]!.toLowerCase() : undefined;
  if (mode === 'memo') {
    process.stdout.write(`${formatMemo(measureMemoCaches())}\n`);
    return 0;
  }
  if (mode === 'soak') {
    const result = await soak({
      databaseUrl: BENCH_DATABASE_URL,
      durationSeconds: positiveNumber('duration', values.duration, 1800),
      connections: Math.round(positiveNumber('connections', values.connections, 2 * availableParallelism())),
      log,
    });
    process.stdout.write(`\n${formatSoak(result)}\n`);
    return result.passed ? 0 : 1;
  }
  if (mode === 'attachments') {
    const megabytes = Math.round(positiveNumber('megabytes', values.megabytes, 100));
    const result = await attachmentBenchmark({ databaseUrl: BENCH_DATABASE_URL, megabytes, log });
    process.stdout.write(`\n${formatAttachments(result)}\n`);
    await mkdir(resultsDir, { recursive: true });
    await writeFile(join(resultsDir, 'attachments.json'), `${JSON.stringify(result, null, 2)}\n`);
    return result.engines.every((engine) => engine.verdict === 'PASS') ? 0 : 1;
  }
  if (mode === 'backout') {
    const records = Math.round(positiveNumber('records', values.records, 100_000));
    const profileFile = values.profile ? join(resultsDir, 'profiles', 'backout.cpuprofile') : undefined;
    if (profileFile) await mkdir(join(resultsDir, 'profiles'), { recursive: true });
    const result = await backoutBenchmark({ databaseUrl: BENCH_DATABASE_URL, records, profileFile, log });
    process.stdout.write(`\n${formatBackout(result)}\n`);
    if (profileFile)
      process.stdout.write(`\n${formatProfile('back-out', await summarizeProfile(profileFile, rootDir))}\n`);
    await mkdir(resultsDir, { recursive: true });
    await writeFile(join(resultsDir, 'backout.json'), `${JSON.stringify(result, null, 2)}\n`);
    return result.verdict === 'PASS' ? 0 : 1;
  }
  if (mode === 'backup') {
    const records = Math.round(positiveNumber('records', values.records, 100_000));
    const result = await backupBenchmark({ assets: records, reload: values.reload, log });
    process.stdout.write(`\n${formatBackup(result)}\n`);
    await mkdir(resultsDir, { recursive: true });
    await writeFile(join(resultsDir, 'backup.json'), `${JSON.stringify(result, null, 2)}\n`);
    return result.verdict === 'PASS' ? 0 : 1;
  }
  if (mode === 'deploy') {
    const result = await deployBenchmark({
      databaseUrl: BENCH_DATABASE_URL,
      records: Math.round(positiveNumber('records', values.records, 100_000)),
      ...(values.heap !== undefined && { heapMiB: Math.round(positiveNumber('heap', values.heap, 0)) }),
      log,
    });
    process.stdout.write(`\n${formatDeploy(result)}\n`);
    await mkdir(resultsDir, { recursive: true });
    await writeFile(join(resultsDir, 'deploy.json'), `${JSON.stringify(result, null, 2)}\n`);
    log(`results written to ${relative(rootDir, join(resultsDir, 'deploy.json'))}`);
    return result.verdict === 'PASS' ? 0 : 1;
  }
  return undefined;
}

/** `--storage`: where the property-call sections' service keeps its data (bench/README.md, "Storage"). */
function storageOf(text: string | undefined): StorageKind {
  if (text === undefined || text === 'postgres') return 'postgres';
  if (text === 'pglite') return 'pglite';
  throw new Error(`--storage must be postgres or pglite, got "${text}"`);
}

interface StartupOutcome {
  rows: StartupRow[];
  error?: string;
}

async function runStartup(values: Options, connections: number): Promise<StartupOutcome> {
  try {
    return {
      rows: await startup({
        databaseUrl: BENCH_DATABASE_URL,
        starts: Math.round(positiveNumber('starts', values.starts, 5)),
        idleSeconds: positiveNumber('idle', values.idle, 10, true),
        loadSeconds: positiveNumber('load', values.load, 30),
        connections,
        log,
      }),
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log(`startup: ERROR: ${message}`);
    return { rows: [], error: message };
  }
}

/** `--pair "key create,property set"`: the pair names to run, lower-cased; undefined runs every pair. */
function pairNames(text: string | undefined): ReadonlySet<string> | undefined {
  if (text === undefined) return undefined;
  return new Set(text.split(',').map((name) => name.trim().toLowerCase()));
}

/** Every pair of the selected sections at every connection level; a section that cannot prepare is an ERROR row. */
async function runSections(
  selected: readonly Section[],
  context: SectionContext,
  settings: LoadSettings,
  connectionLevels: readonly number[],
  options: PairOptions & { only?: ReadonlySet<string> | undefined },
): Promise<PairResult[]> {
  const results: PairResult[] = [];
  for (const section of selected) {
    let pairs: Pair[];
    try {
      pairs = await section.prepare(context);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`${section.name}: preparation failed: ${message}`);
      results.push({
        section: section.name,
        issue: section.issue,
        pair: '(prepare)',
        description: section.summary,
        target: Number.NaN,
        verdict: 'ERROR',
        error: message,
      });
      continue;
    }
    for (const pair of pairs) {
      if (options.only && !options.only.has(pair.name.toLowerCase())) continue;
      for (const connections of connectionLevels)
        results.push(await runPair(section, pair, { ...settings, connections }, options));
    }
  }
  return results;
}

/** `bench/results/latest.json`: the settings, the machine, and every result. */
async function writeReport(report: {
  startedAt: Date;
  settings: Omit<LoadSettings, 'connections'> & { connections: readonly number[]; storage: StorageKind };
  startup: StartupOutcome | undefined;
  results: readonly PairResult[];
}): Promise<void> {
  const file = join(resultsDir, 'latest.json');
  const content = {
    startedAt: report.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    settings: { ...report.settings, pipelining: 1 },
    machine: {
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
      node: process.version,
      platform: `${process.platform} ${release()}`,
    },
    ...(report.startup && {
      startup: { rows: report.startup.rows, ...(report.startup.error && { error: report.startup.error }) },
    }),
    results: report.results,
  };
  await mkdir(resultsDir, { recursive: true });
  await writeFile(file, `${JSON.stringify(content, null, 2)}\n`);
  log(`results written to ${relative(rootDir, file)}`);
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: OPTIONS });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.list) {
    listSections();
    return 0;
  }
  const own = await ownMode(positionals, values);
  if (own !== undefined) return own;
  const settings: LoadSettings = {
    durationSeconds: positiveNumber('duration', values.duration, 10),
    warmupSeconds: positiveNumber('warmup', values.warmup, 2, true),
    connections: 0,
    rounds: Math.round(positiveNumber('rounds', values.rounds, 10)),
  };
  const storage = storageOf(values.storage);
  const connectionLevels = connectionList(values.connections);
  const withStartup =
    positionals.length === 0 || positionals.some((name) => name.toLowerCase() === 'startup');
  const named = positionals.filter((name) => name.toLowerCase() !== 'startup');
  const selected = positionals.length > 0 && named.length === 0 ? [] : selectSections(named);
  if (values.profile || values.cost) await mkdir(join(resultsDir, 'profiles'), { recursive: true });

  const startedAt = new Date();
  log(
    `${selected.map((section) => section.name).join(', ')}: ${connectionLevels.join(' and ')} connections, ` +
      `${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s per scenario in ${settings.rounds} rounds`,
  );
  const startupOutcome = withStartup ? await runStartup(values, connectionLevels[0]!) : undefined;
  if (selected.length > 0) await compileServers(log);
  const context = { databaseUrl: BENCH_DATABASE_URL, reload: values.reload, storage, log };
  const results = await runSections(selected, context, settings, connectionLevels, {
    profile: values.profile,
    cost: values.cost,
    only: pairNames(values.pair),
    log,
  });
  if (startupOutcome) {
    process.stdout.write(`\n${formatStartup(startupOutcome.rows)}\n`);
    if (startupOutcome.error !== undefined) process.stdout.write(`\nstartup: ${startupOutcome.error}\n`);
  }
  if (selected.length > 0) process.stdout.write(`\n${formatTable(results)}\n`);
  await writeReport({
    startedAt,
    settings: { ...settings, connections: connectionLevels, storage },
    startup: startupOutcome,
    results,
  });
  const startupPassed =
    startupOutcome === undefined ||
    (startupOutcome.error === undefined && startupOutcome.rows.every((row) => row.verdict !== 'FAIL'));
  const pairsPassed = results.every((result) => result.verdict === 'PASS' || result.verdict === 'INFO');
  return startupPassed && pairsPassed ? 0 : 1;
}

let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) return;
  interrupted = true;
  log('interrupted; stopping the servers');
  // The exit handler of server-process.ts kills any child still running.
  process.exit(130);
});

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    // Exit now: a timer or socket the failed step left behind would otherwise keep the runner waiting (the exit
    // handler of server-process.ts kills any child still running).
    process.exit(2);
  },
);
