import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { costAccount, formatCostTable, stageSamples, type CostAccount } from './cost.js';
import { probe, resolveHeaders, ScenarioLoad } from './load.js';
import { formatProfile, summarizeProfile, type ProfileSummary } from './profile.js';
import { startServer, type RunningServer } from './server-process.js';
import type { LoadSettings, Measurement, Pair, Scenario, Section } from './types.js';
import { pairVerdict, roundRatios, sliceOrder } from './verdict.js';

export const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const resultsDir = join(rootDir, 'bench', 'results');

/** INFO: a pair measured for comparison, with no target of its own. */
export type Verdict = 'PASS' | 'FAIL' | 'INFO' | 'ERROR';

export interface PairResult {
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
  /** `--cost`: CPU µs per request of each stage of the request path, baseline first (bench/lib/cost.ts). */
  cost?: CostAccount[];
}

/** How a pair is observed besides its throughput. */
export interface PairOptions {
  /** CPU-profile each server over the measured window and print the summary (`--profile`). */
  profile: boolean;
  /** The cost account of each server's request path, from a profile at a finer sampling interval (`--cost`). */
  cost: boolean;
  log(message: string): void;
}

/** Sampling interval of `--cost`: a stage of 1 µs in a 25 µs request gets a few hundred samples in 3 s. */
const COST_SAMPLING_MICROSECONDS = 200;

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
export async function runPair(
  section: Section,
  pair: Pair,
  settings: LoadSettings,
  options: PairOptions,
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
  options.log(`${section.name} / ${pair.name} at ${settings.connections} connections`);
  const scenarios = [pair.baseline, pair.subject] as const;
  const profileFiles = scenarios.map((scenario) =>
    join(
      resultsDir,
      'profiles',
      `${slug(section.name)}-${slug(pair.name)}-${settings.connections}-${slug(scenario.label)}.cpuprofile`,
    ),
  );
  const profiled = options.profile || options.cost;
  // Per scenario, its server's processes (one unless the scenario asks for replicas).
  const servers: RunningServer[][] = [];
  try {
    for (const scenario of scenarios) servers.push(await startScenario(scenario, profiled, options.log));
    const measured = await measure(pair, scenarios, servers, settings, {
      ...options,
      files: profiled ? profileFiles : undefined,
    });
    result.baseline = measured[0];
    result.subject = measured[1];
    result.roundRatios = roundRatios(result.subject.slices, result.baseline.slices);
    ({ ratio: result.ratio, verdict: result.verdict } = pairVerdict(result.roundRatios, pair.target));
    result.overallRatio = round3(result.subject.requestsPerSecond / result.baseline.requestsPerSecond);
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    options.log(`  ERROR: ${result.error}`);
  } finally {
    for (const server of servers.flat()) await server.stop();
  }
  if (profiled && result.verdict !== 'ERROR') await reportProfiles(result, scenarios, profileFiles, options);
  return result;
}

/** The processes of one scenario's server (one unless the scenario asks for replicas). */
async function startScenario(
  scenario: Scenario,
  profile: boolean,
  log: (message: string) => void,
): Promise<RunningServer[]> {
  const replicas = scenario.server.replicas ?? 1;
  log(`  ${scenario.label}: starting ${scenario.server.script}${replicas > 1 ? ` x ${replicas}` : ''}`);
  const processes: RunningServer[] = [];
  for (let index = 0; index < replicas; index++)
    processes.push(await startServer(scenario.server, { profile }));
  return processes;
}

/** Checks both answers, warms both servers up, and takes the measured slices (profiled when `files` is given). */
async function measure(
  pair: Pair,
  scenarios: readonly [Scenario, Scenario],
  servers: readonly RunningServer[][],
  settings: LoadSettings,
  options: PairOptions & { files: readonly string[] | undefined },
): Promise<[Measurement, Measurement]> {
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
  options.log(`  warming up: ${settings.warmupSeconds} s each`);
  for (const load of loads) await load.warmUp(settings.warmupSeconds);
  const interval = options.cost ? COST_SAMPLING_MICROSECONDS : undefined;
  if (options.files) for (const processes of servers) await processes[0]!.startProfile(interval);
  const sliceSeconds = settings.durationSeconds / settings.rounds;
  options.log(`  measuring: ${settings.rounds} x ${sliceSeconds} s each, alternating`);
  for (let round = 0; round < settings.rounds; round++) {
    for (const index of sliceOrder(round)) await loads[index]!.slice(sliceSeconds);
  }
  if (options.files)
    for (const [index, processes] of servers.entries())
      await processes[0]!.stopProfile(options.files[index]!);
  const measured: [Measurement, Measurement] = [loads[0]!.measurement(), loads[1]!.measurement()];
  for (const each of measured) {
    if (each.errors > 0 || each.non2xx > 0) {
      throw new Error(
        `${each.label}: ${each.errors} connection errors, ${each.non2xx} non-2xx answers under load`,
      );
    }
  }
  return measured;
}

/** `--profile`: the summary of each server's profile; `--cost`: the cost account of both, side by side. */
async function reportProfiles(
  result: PairResult,
  scenarios: readonly [Scenario, Scenario],
  files: readonly string[],
  options: PairOptions,
): Promise<void> {
  const title = `${result.section} / ${result.pair} at ${result.connections} connections`;
  if (options.profile) {
    result.profiles = {};
    for (const [index, scenario] of scenarios.entries()) {
      const file = files[index]!;
      const summary = await summarizeProfile(file, rootDir);
      result.profiles[scenario.label] = { file: relative(rootDir, file), summary };
      process.stdout.write(
        `\n${formatProfile(`${title} / ${scenario.label} (${relative(rootDir, file)})`, summary)}\n`,
      );
    }
  }
  if (options.cost) {
    const measured = [result.baseline!, result.subject!];
    result.cost = await Promise.all(
      scenarios.map(async (scenario, index) =>
        costAccount(
          scenario.label,
          measured[index]!.serverCpuMicrosecondsPerRequest,
          await stageSamples(files[index]!, rootDir),
        ),
      ),
    );
    process.stdout.write(`\n${formatCostTable(`cost account: ${title} (profiled)`, result.cost)}\n`);
  }
}
