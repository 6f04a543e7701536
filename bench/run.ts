// `npm run bench [-- <section>...] [options]`: see bench/README.md.
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { probe, resolveHeaders, ScenarioLoad } from './lib/load.js';
import { compileServers } from './lib/compile.js';
import { formatProfile, summarizeProfile, type ProfileSummary } from './lib/profile.js';
import { startServer, type RunningServer } from './lib/server-process.js';
import { BENCH_DATABASE_URL } from './lib/settings.js';
import type { LoadSettings, Measurement, Pair, Section } from './lib/types.js';
import { pairVerdict, roundRatios, sliceOrder } from './lib/verdict.js';
import { plannedSections, sections } from './sections/index.js';
import { deployBenchmark, formatDeploy } from './deploy.js';
import { formatMemo, measureMemoCaches } from './memo.js';
import { formatSoak, soak } from './soak.js';
import { formatStartup, startup, type StartupRow } from './startup.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = join(benchDir, '..');
const resultsDir = join(benchDir, 'results');

/**
 * Every pair runs at each of these: 4 connections keep the server busy while a request waits on PostgreSQL with
 * little queueing, so the latency is the service's; 32 saturate the CPU, where any per-request cost shows in full.
 */
const DEFAULT_CONNECTIONS = [4, 32];

const USAGE = `usage: npm run bench -- [section ...] [options]

sections (default: all): startup, ${sections.map((section) => section.name).join(', ')}
soak:                    npm run bench -- soak [--duration <s> (default 1800)] [--connections <n>]
memo:                    npm run bench -- memo (what each memo cache of the request path saves, in-process)
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
  --list              list the sections and exit
`;

/** INFO: a pair measured for comparison, with no target of its own. */
type Verdict = 'PASS' | 'FAIL' | 'INFO' | 'ERROR';

interface PairResult {
  section: string;
  issue: number;
  pair: string;
  description: string;
  /** Concurrent connections of the load. */
  connections?: number;
  target: number;
  subject?: Measurement;
  baseline?: Measurement;
  /** The median of `roundRatios`: what the verdict compares with the target. */
  ratio?: number;
  /** Per round, the service's slice throughput over the baseline's slice next to it in time. */
  roundRatios?: number[];
  /** Over the whole measured time: service requests/s over baseline requests/s. */
  overallRatio?: number;
  verdict: Verdict;
  error?: string;
  profiles?: Record<string, { file: string; summary: ProfileSummary }>;
}

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

const round3 = (value: number): number => Number(value.toFixed(3));

const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/**
 * Both servers of a pair run side by side (an idle one costs nothing): each answers one checked request, gets its
 * warm-up, and then the measured time is cut into slices taken in ABBA order, so that whatever else the machine is
 * doing meanwhile weighs on both scenarios alike. Every server is stopped, whatever happens.
 */
async function runPair(
  section: Section,
  pair: Pair,
  settings: LoadSettings,
  profile: boolean,
): Promise<PairResult> {
  const result: PairResult = {
    section: section.name,
    issue: section.issue,
    pair: pair.name,
    description: pair.description,
    connections: settings.connections,
    target: pair.target ?? Number.NaN,
    verdict: 'ERROR',
  };
  log(`${section.name} / ${pair.name} at ${settings.connections} connections`);
  const scenarios = [pair.baseline, pair.subject] as const;
  const profileFiles = scenarios.map((scenario) =>
    join(
      resultsDir,
      'profiles',
      `${slug(section.name)}-${slug(pair.name)}-${settings.connections}-${slug(scenario.label)}.cpuprofile`,
    ),
  );
  // Per scenario, its server's processes (one unless the scenario asks for replicas).
  const servers: RunningServer[][] = [];
  try {
    for (const scenario of scenarios) {
      const replicas = scenario.server.replicas ?? 1;
      log(`  ${scenario.label}: starting ${scenario.server.script}${replicas > 1 ? ` x ${replicas}` : ''}`);
      const processes: RunningServer[] = [];
      servers.push(processes);
      for (let index = 0; index < replicas; index++)
        processes.push(await startServer(scenario.server, { profile }));
    }
    const resolved = await Promise.all(
      scenarios.map((scenario, index) => resolveHeaders(servers[index]![0]!.baseUrl, scenario)),
    );
    const answers = await Promise.all(
      resolved.map((scenario, index) => probe(servers[index]![0]!.baseUrl, scenario)),
    );
    pair.sameAnswer?.(answers[1], answers[0]);
    const loads = resolved.map((scenario, index) => {
      const processes = servers[index]!;
      return new ScenarioLoad(
        processes.map((server) => server.baseUrl),
        scenario,
        settings,
        async () =>
          (await Promise.all(processes.map((server) => server.cpuMicroseconds()))).reduce((a, b) => a + b, 0),
      );
    });
    log(`  warming up: ${settings.warmupSeconds} s each`);
    for (const load of loads) await load.warmUp(settings.warmupSeconds);
    if (profile) for (const processes of servers) await processes[0]!.startProfile();
    const sliceSeconds = settings.durationSeconds / settings.rounds;
    log(`  measuring: ${settings.rounds} x ${sliceSeconds} s each, alternating`);
    for (let round = 0; round < settings.rounds; round++) {
      for (const index of sliceOrder(round)) await loads[index]!.slice(sliceSeconds);
    }
    if (profile)
      for (const [index, processes] of servers.entries())
        await processes[0]!.stopProfile(profileFiles[index]!);
    result.baseline = loads[0]!.measurement();
    result.subject = loads[1]!.measurement();
    for (const measured of [result.baseline, result.subject]) {
      if (measured.errors > 0 || measured.non2xx > 0) {
        throw new Error(
          `${measured.label}: ${measured.errors} connection errors, ${measured.non2xx} non-2xx answers under load`,
        );
      }
    }
    result.roundRatios = roundRatios(result.subject.slices, result.baseline.slices);
    ({ ratio: result.ratio, verdict: result.verdict } = pairVerdict(result.roundRatios, pair.target));
    result.overallRatio = round3(result.subject.requestsPerSecond / result.baseline.requestsPerSecond);
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    log(`  ERROR: ${result.error}`);
  } finally {
    for (const server of servers.flat()) await server.stop();
  }
  if (profile && result.verdict !== 'ERROR') {
    result.profiles = {};
    for (const [index, scenario] of scenarios.entries()) {
      const file = profileFiles[index]!;
      const summary = await summarizeProfile(file, rootDir);
      result.profiles[scenario.label] = { file: relative(rootDir, file), summary };
      const title = `${section.name} / ${pair.name} / ${scenario.label} (${relative(rootDir, file)})`;
      process.stdout.write(`\n${formatProfile(title, summary)}\n`);
    }
  }
  return result;
}

function formatTable(results: readonly PairResult[]): string {
  const number = (value: number | undefined, digits: number) =>
    value === undefined ? '-' : value.toFixed(digits);
  const header = [
    'section',
    'pair',
    'conns',
    'service',
    'req/s',
    'p50 ms',
    'p99 ms',
    'cpu us',
    'baseline',
    'req/s',
    'p50 ms',
    'p99 ms',
    'cpu us',
    'ratio',
    'rounds',
    'target',
    'result',
  ];
  const rows = results.map((result) => [
    result.section,
    result.pair,
    result.connections === undefined ? '-' : String(result.connections),
    result.subject?.label ?? '-',
    number(result.subject?.requestsPerSecond, 0),
    number(result.subject?.latencyMs.p50, 2),
    number(result.subject?.latencyMs.p99, 2),
    number(result.subject?.serverCpuMicrosecondsPerRequest, 0),
    result.baseline?.label ?? '-',
    number(result.baseline?.requestsPerSecond, 0),
    number(result.baseline?.latencyMs.p50, 2),
    number(result.baseline?.latencyMs.p99, 2),
    number(result.baseline?.serverCpuMicrosecondsPerRequest, 0),
    number(result.ratio, 2),
    result.roundRatios === undefined
      ? '-'
      : `${Math.min(...result.roundRatios).toFixed(2)}-${Math.max(...result.roundRatios).toFixed(2)}`,
    Number.isNaN(result.target) ? '-' : `>= ${result.target.toFixed(2)}`,
    result.verdict,
  ]);
  const textColumns = new Set([0, 1, 3, 8, 16]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        textColumns.has(column) ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  const errors = results
    .filter((result) => result.error !== undefined)
    .map((result) => `${result.section} / ${result.pair}: ${result.error}`);
  return [line(header), rule, ...rows.map(line), ...(errors.length > 0 ? ['', ...errors] : [])].join('\n');
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      starts: { type: 'string' },
      idle: { type: 'string' },
      load: { type: 'string' },
      records: { type: 'string' },
      heap: { type: 'string' },
      reload: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.list) {
    process.stdout.write(
      `${'startup'.padEnd(12)} issue 18: start to first answer and resident memory of npm start\n`,
    );
    process.stdout.write(
      `${'deploy'.padEnd(12)} a 100,000-record migration package deployed against plain batched INSERTs (own mode)\n`,
    );
    for (const section of sections)
      process.stdout.write(`${section.name.padEnd(12)} issue ${section.issue}: ${section.summary}\n`);
    for (const section of plannedSections)
      process.stdout.write(
        `${section.name.padEnd(12)} issue ${section.issue} (planned): ${section.summary}\n`,
      );
    return 0;
  }
  if (positionals.length === 1 && positionals[0]!.toLowerCase() === 'memo') {
    process.stdout.write(`${formatMemo(measureMemoCaches())}\n`);
    return 0;
  }
  if (positionals.length === 1 && positionals[0]!.toLowerCase() === 'soak') {
    const result = await soak({
      databaseUrl: BENCH_DATABASE_URL,
      durationSeconds: positiveNumber('duration', values.duration, 1800),
      connections: Math.round(positiveNumber('connections', values.connections, 2 * availableParallelism())),
      log,
    });
    process.stdout.write(`\n${formatSoak(result)}\n`);
    return result.passed ? 0 : 1;
  }
  if (positionals.length === 1 && positionals[0]!.toLowerCase() === 'deploy') {
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
  const settings: LoadSettings = {
    durationSeconds: positiveNumber('duration', values.duration, 10),
    warmupSeconds: positiveNumber('warmup', values.warmup, 2, true),
    connections: 0,
    rounds: Math.round(positiveNumber('rounds', values.rounds, 10)),
  };
  const connectionLevels = connectionList(values.connections);
  const withStartup =
    positionals.length === 0 || positionals.some((name) => name.toLowerCase() === 'startup');
  const named = positionals.filter((name) => name.toLowerCase() !== 'startup');
  const selected = positionals.length > 0 && named.length === 0 ? [] : selectSections(named);
  if (values.profile) await mkdir(join(resultsDir, 'profiles'), { recursive: true });

  const startedAt = new Date();
  log(
    `${selected.map((section) => section.name).join(', ')}: ${connectionLevels.join(' and ')} connections, ` +
      `${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s per scenario in ${settings.rounds} rounds`,
  );
  let startupRows: StartupRow[] = [];
  let startupError: string | undefined;
  if (withStartup) {
    try {
      startupRows = await startup({
        databaseUrl: BENCH_DATABASE_URL,
        starts: Math.round(positiveNumber('starts', values.starts, 5)),
        idleSeconds: positiveNumber('idle', values.idle, 10, true),
        loadSeconds: positiveNumber('load', values.load, 30),
        connections: connectionLevels[0]!,
        log,
      });
    } catch (error) {
      startupError = error instanceof Error ? error.message : String(error);
      log(`startup: ERROR: ${startupError}`);
    }
  }
  if (selected.length > 0) await compileServers(log);
  const results: PairResult[] = [];
  for (const section of selected) {
    let pairs: Pair[];
    try {
      pairs = await section.prepare({ databaseUrl: BENCH_DATABASE_URL, reload: values.reload, log });
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
    for (const pair of pairs)
      for (const connections of connectionLevels)
        results.push(await runPair(section, pair, { ...settings, connections }, values.profile));
  }

  if (withStartup) {
    process.stdout.write(`\n${formatStartup(startupRows)}\n`);
    if (startupError !== undefined) process.stdout.write(`\nstartup: ${startupError}\n`);
  }
  if (selected.length > 0) process.stdout.write(`\n${formatTable(results)}\n`);
  const report = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    settings: { ...settings, connections: connectionLevels, pipelining: 1 },
    machine: {
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
      node: process.version,
      platform: `${process.platform} ${release()}`,
    },
    ...(withStartup && { startup: { rows: startupRows, ...(startupError && { error: startupError }) } }),
    results,
  };
  await mkdir(resultsDir, { recursive: true });
  const file = join(resultsDir, 'latest.json');
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  log(`results written to ${relative(rootDir, file)}`);
  const startupPassed = startupError === undefined && startupRows.every((row) => row.verdict !== 'FAIL');
  return startupPassed && results.every((result) => result.verdict === 'PASS' || result.verdict === 'INFO')
    ? 0
    : 1;
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
    process.exitCode = 2;
  },
);
