// The `startup` section of `npm run bench`: see bench/README.md.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { stopChild } from './lib/server-process.js';
import { median } from './lib/verdict.js';
import { BENCH_MASTER_KEY, CONTEXT_ROOT, sessionCookieHeader } from './lib/settings.js';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN_PASSWORD = 'startup-admin-pw';
const DEMO_PASSWORD = 'startup-demo-pw';
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+\/maximo)/;
const START_TIMEOUT_MS = 120_000;
const run = promisify(execFile);

/** The targets: seconds from start to first answer, MiB of resident memory when idle. */
export const STARTUP_TARGETS = {
  restartSeconds: 1.5,
  firstStartWithDemoSeconds: 8,
  idleRssMiB: { pglite: 300, postgres: 120 },
} as const;

export interface StartupSettings {
  /** PostgreSQL for the `postgres` storage; without it only PGlite is measured. */
  databaseUrl?: string;
  /** Starts per measurement, the median is reported (default 5). */
  starts: number;
  /** Seconds of idleness before the idle RSS is read (default 10). */
  idleSeconds: number;
  /** Seconds of mixed load before the loaded RSS is read (default 30). */
  loadSeconds: number;
  connections: number;
  log(message: string): void;
}

export type Verdict = 'PASS' | 'FAIL' | 'INFO';

export interface StartupRow {
  storage: 'pglite' | 'postgres';
  measure: string;
  /** Seconds or MiB, see `unit`. */
  value: number;
  unit: 's' | 'MiB';
  /** Every sample, in the order taken (starts), or the single reading. */
  samples: number[];
  limit?: number;
  verdict: Verdict;
}

const round = (value: number, digits: number): number => Number(value.toFixed(digits));

/** `npm run build`, what `npm install` runs (incremental: seconds when dist/ is current), so the start measured is `npm start`. */
async function buildDist(log: (message: string) => void): Promise<void> {
  const started = Date.now();
  await run('npm', ['run', 'build'], { cwd: rootDir }).catch((error: unknown) => {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm run build failed:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  });
  log(`startup: dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** What `npm start` runs (package.json), without npm's own process in between. */
const SERVER_ENTRY = join(rootDir, 'dist', 'bundle', 'server.js');

interface Started {
  child: ChildProcess;
  base: string;
  /** From spawn to the first HTTP answer, in seconds. */
  seconds: number;
  /** CPU time of the process (user + system, all its threads) until then: what a busy machine does not inflate. */
  cpuSeconds: number;
}

/** Linux's clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on every architecture Node runs on). */
const CLOCK_TICKS = 100;

async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // After the command name in parentheses: field 3 is the state, 14 and 15 (utime, stime) are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * `node dist/bundle/server.js` (what `npm start` runs) with only the variables given; timed from the spawn to the first
 * HTTP answer of any status, polled every 10 ms once the welcome line names the port.
 */
async function startServer(env: Record<string, string>): Promise<Started> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('EAS_') && !['PORT', 'HOST', 'DATABASE_URL'].includes(name)) clean[name] = value;
  }
  const started = performance.now();
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    cwd: rootDir,
    env: {
      ...clean,
      HOST: '127.0.0.1',
      PORT: '0',
      EAS_ADMIN_PASSWORD: ADMIN_PASSWORD,
      EAS_DEMO_PASSWORD: DEMO_PASSWORD,
      EAS_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  try {
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no welcome line within ${START_TIMEOUT_MS / 1000} s:\n${output}`)),
        START_TIMEOUT_MS,
      );
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const match = LISTENING.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited with ${String(code)}:\n${output}`));
      });
    });
    for (;;) {
      try {
        const response = await fetch(`${base}/oslc/whoami`);
        await response.arrayBuffer();
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    const seconds = (performance.now() - started) / 1000;
    return { child, base, seconds, cpuSeconds: await cpuSecondsOf(child.pid!) };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return round(kib / 1024, 1);
}

/** The soak's mix with a session cookie (one login, as a client with a cookie jar): two pages, a create. */
function mixedLoad(base: string, cookie: Record<string, string>, seconds: number, connections: number) {
  const prefix = `SU${randomBytes(3).toString('hex')}`.toUpperCase();
  let next = 0;
  const page = `${CONTEXT_ROOT}/oslc/os/mxapiasset?lean=1&oslc.pageSize=20&oslc.select=assetnum,description,status`;
  return new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      {
        url: base.replace(/\/maximo$/, ''),
        connections,
        duration: seconds,
        timeout: 10,
        requests: [
          { method: 'GET', path: page, headers: cookie },
          {
            method: 'GET',
            path: `${page}&oslc.where=${encodeURIComponent('status="OPERATING"')}&oslc.orderBy=-assetnum`,
            headers: cookie,
          },
          {
            method: 'POST',
            path: `${CONTEXT_ROOT}/oslc/os/mxapiasset?lean=1`,
            headers: { ...cookie, 'content-type': 'application/json' },
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({
                assetnum: `${prefix}${(next++).toString(36).toUpperCase()}`,
                siteid: 'BEDFORD',
                description: 'startup bench',
              }),
            }),
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

interface StorageUnderTest {
  name: 'pglite' | 'postgres';
  /** The environment of a first start on empty storage (the n-th of the run). */
  fresh(index: number): Promise<Record<string, string>>;
  cleanUp(): Promise<void>;
}

function pgliteStorage(): StorageUnderTest {
  const directories: string[] = [];
  return {
    name: 'pglite',
    async fresh() {
      const directory = await mkdtemp(join(tmpdir(), 'eas-startup-'));
      directories.push(directory);
      return { EAS_DATA_DIR: directory };
    },
    async cleanUp() {
      for (const directory of directories) await rm(directory, { recursive: true, force: true });
    },
  };
}

function postgresStorage(databaseUrl: string): StorageUnderTest {
  const schemas: string[] = [];
  return {
    name: 'postgres',
    async fresh() {
      const schema = `eas_startup_${randomBytes(4).toString('hex')}`;
      schemas.push(schema);
      return { DATABASE_URL: databaseUrl, EAS_DB_SCHEMA: schema, EAS_MASTER_KEY: BENCH_MASTER_KEY };
    },
    async cleanUp() {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await client.end();
      }
    },
  };
}

function verdictOf(value: number, limit: number | undefined): Verdict {
  if (limit === undefined) return 'INFO';
  return value <= limit ? 'PASS' : 'FAIL';
}

type AddRow = (measure: string, unit: StartupRow['unit'], samples: number[], limit?: number) => void;

/** The resident memory of one process after idling, and after a mixed load (which must answer without errors). */
async function measureMemory(
  storage: StorageUnderTest,
  settings: StartupSettings,
  env: Record<string, string>,
  row: AddRow,
): Promise<void> {
  const { log } = settings;
  const server = await startServer(env);
  try {
    const pid = server.child.pid!;
    await new Promise((resolve) => setTimeout(resolve, settings.idleSeconds * 1000));
    row(
      `RSS after ${settings.idleSeconds} s idle`,
      'MiB',
      [await rssMiB(pid)],
      STARTUP_TARGETS.idleRssMiB[storage.name],
    );
    const cookie = await sessionCookieHeader(
      server.base.replace(/\/maximo$/, ''),
      `${CONTEXT_ROOT}/oslc/whoami`,
      'MAXADMIN',
      ADMIN_PASSWORD,
    );
    const result = await mixedLoad(server.base, cookie, settings.loadSeconds, settings.connections);
    if (result.errors + result.timeouts + result.non2xx > 0) {
      throw new Error(
        `${storage.name} mixed load: ${result.non2xx} non-2xx, ${result.errors + result.timeouts} errors`,
      );
    }
    log(`startup: ${storage.name} mixed load ${result.requests.average.toFixed(0)} req/s`);
    row(`RSS after ${settings.loadSeconds} s mixed load`, 'MiB', [await rssMiB(pid)]);
  } finally {
    await stopChild(server.child);
  }
}

/** First starts with the demo data, restarts on the last one, then idle and loaded memory of one more start. */
async function measureStorage(storage: StorageUnderTest, settings: StartupSettings): Promise<StartupRow[]> {
  const { log } = settings;
  const rows: StartupRow[] = [];
  const row: AddRow = (measure, unit, samples, limit) => {
    const value = round(unit === 's' ? median(samples) : samples[0]!, unit === 's' ? 3 : 1);
    rows.push({
      storage: storage.name,
      measure,
      value,
      unit,
      samples: samples.map((sample) => round(sample, 3)),
      ...(limit !== undefined && { limit }),
      verdict: verdictOf(value, limit),
    });
  };
  /** Each start's line, then the series' wall-clock row (with the PGlite target) and its CPU row. */
  const logStart = (measure: string, server: Started) =>
    log(
      `startup: ${storage.name} ${measure} ${server.seconds.toFixed(2)} s (CPU ${server.cpuSeconds.toFixed(2)} s)`,
    );
  const startRows = (measure: string, starts: readonly Started[], pgliteLimit: number) => {
    const limit = storage.name === 'pglite' ? pgliteLimit : undefined;
    row(
      measure,
      's',
      starts.map((start) => start.seconds),
      limit,
    );
    row(
      `${measure}, CPU`,
      's',
      starts.map((start) => start.cpuSeconds),
    );
  };
  let env: Record<string, string> = {};
  const firstStarts: Started[] = [];
  for (let index = 0; index < settings.starts; index++) {
    env = { ...(await storage.fresh(index)), EAS_DEMO: '1' };
    const server = await startServer(env);
    firstStarts.push(server);
    logStart('first start with demo data', server);
    await stopChild(server.child);
  }
  startRows('first start with demo data', firstStarts, STARTUP_TARGETS.firstStartWithDemoSeconds);
  const restarts: Started[] = [];
  for (let index = 0; index < settings.starts; index++) {
    const server = await startServer(env);
    restarts.push(server);
    logStart('restart', server);
    await stopChild(server.child);
  }
  startRows('restart', restarts, STARTUP_TARGETS.restartSeconds);

  await measureMemory(storage, settings, env, row);
  return rows;
}

/**
 * The `startup` section: start to first answer of `npm start`'s `node dist/bundle/server.js` (median of `starts`), first on empty
 * storage with the demo data, then restarts; then the resident memory of one process after idling and after a
 * mixed load (a login, then pages and creates). On PGlite, and on PostgreSQL when a URL is given.
 */
export async function startup(settings: StartupSettings): Promise<StartupRow[]> {
  await buildDist(settings.log);
  const storages = [
    pgliteStorage(),
    ...(settings.databaseUrl ? [postgresStorage(settings.databaseUrl)] : []),
  ];
  const rows: StartupRow[] = [];
  for (const storage of storages) {
    try {
      rows.push(...(await measureStorage(storage, settings)));
    } finally {
      await storage.cleanUp();
    }
  }
  return rows;
}

export function formatStartup(rows: readonly StartupRow[]): string {
  const header = ['storage', 'measure', 'value', 'samples', 'limit', 'result'];
  const cells = rows.map((row) => [
    row.storage,
    row.measure,
    `${row.value} ${row.unit}`,
    row.samples.length > 1 ? row.samples.map((sample) => sample.toFixed(2)).join(' ') : '',
    row.limit === undefined ? '-' : `<= ${row.limit} ${row.unit}`,
    row.verdict,
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...cells.map((line) => line[column]!.length)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, column) => value.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n');
}
