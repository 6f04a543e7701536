// `npm run faults [-- --small] [--database-url <url>] [--no-postgres]`: see docs/operations.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { TcpProxy } from '../test/helpers/tcp-proxy.js';

/**
 * The fault script: real server processes on 127.0.0.1 under load, with the faults the service must survive.
 *
 * 1. PostgreSQL backends terminated under load, then the database unreachable for a while (a relay in front of
 *    it is cut): the process stays up, answers 503 only while the database is away, then 200 again by itself,
 *    and every acknowledged write is there.
 * 2. `kill -9` under concurrent writes, on PGlite and on PostgreSQL: after a restart every acknowledged write is
 *    present and complete, none partial.
 * 3. A second process on one PGlite directory is refused, naming the directory.
 *
 * Every loop is bounded in time; the script stops its processes and removes its data whatever happens.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN_PASSWORD = 'faults-admin-pw';
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+\/maximo)\b/;
const STARTUP_TIMEOUT_MS = 120_000;
const AUTH = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };

export interface FaultSizes {
  /** Concurrent clients of the load and of the writers. */
  clients: number;
  /** Seconds of load before, between and after the faults. */
  phaseSeconds: number;
  /** Seconds the database stays unreachable. */
  outageSeconds: number;
  /** Seconds of concurrent writes before `kill -9`. */
  writeSeconds: number;
}

export const SMALL: FaultSizes = { clients: 3, phaseSeconds: 1.5, outageSeconds: 2, writeSeconds: 2 };
export const FULL: FaultSizes = { clients: 8, phaseSeconds: 5, outageSeconds: 10, writeSeconds: 10 };

export interface FaultResult {
  name: string;
  passed: boolean;
  /** What was measured, one line. */
  detail: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server process (`src/server.ts`) with its own environment. */
export class Server {
  output = '';
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(env: Record<string, string>) {
    const clean: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (!name.startsWith('EAS_') && !['PORT', 'HOST', 'DATABASE_URL'].includes(name)) clean[name] = value;
    }
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: root,
      env: {
        ...clean,
        HOST: '127.0.0.1',
        PORT: '0',
        EAS_ADMIN_PASSWORD: ADMIN_PASSWORD,
        EAS_LOG_LEVEL: 'warn',
        EAS_DEMO: '1',
        EAS_DEMO_PASSWORD: 'faults-demo-pw',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async listening(): Promise<string> {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    while (Date.now() < deadline && this.alive) {
      const match = LISTENING.exec(this.output);
      if (match) return match[1]!;
      await sleep(50);
    }
    this.child.kill('SIGKILL');
    throw new Error(`the server did not start:\n${this.output}`);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.alive) this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

interface Sample {
  at: number;
  /** HTTP status, or 0 when the request failed without an answer. */
  status: number;
}

/** `clients` loops of one request each until `until()`; answers every status with its time. */
async function load(clients: number, until: () => boolean, send: () => Promise<number>): Promise<Sample[]> {
  const samples: Sample[] = [];
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!until()) {
        let status: number;
        try {
          status = await send();
        } catch {
          status = 0;
        }
        samples.push({ at: Date.now(), status });
        if (status !== 200) await sleep(50);
      }
    }),
  );
  return samples;
}

async function getStatus(url: string): Promise<number> {
  const response = await fetch(url, { headers: AUTH, signal: AbortSignal.timeout(15_000) });
  await response.arrayBuffer();
  return response.status;
}

interface Written {
  assetnum: string;
  description: string;
  serialnum: string;
}

/** Concurrent creates until `until()`; answers the acknowledged (201) records, also kept in `acknowledged`. */
async function writers(
  base: string,
  clients: number,
  prefix: string,
  until: () => boolean,
  acknowledged: Written[] = [],
) {
  let sent = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let index = 0; !until(); index++) {
        const assetnum = `${prefix}${client}-${index}`.toUpperCase();
        const record = { assetnum, description: `fault ${assetnum}`, serialnum: `SN-${assetnum}` };
        sent++;
        try {
          const response = await fetch(`${base}/oslc/os/mxapiasset?lean=1`, {
            method: 'POST',
            headers: { ...AUTH, 'content-type': 'application/json' },
            body: JSON.stringify({ ...record, siteid: 'BEDFORD' }),
            signal: AbortSignal.timeout(15_000),
          });
          await response.arrayBuffer();
          if (response.status === 201) acknowledged.push(record);
          else await sleep(50);
        } catch {
          await sleep(50);
        }
      }
    }),
  );
  return { acknowledged, sent };
}

/** Every acknowledged record present and complete; every record of the prefix complete. */
async function verifyWrites(base: string, prefix: string, acknowledged: Written[]): Promise<string[]> {
  const problems: string[] = [];
  const where = encodeURIComponent(`assetnum="${prefix.toUpperCase()}%"`);
  const members: Array<Partial<Written>> = [];
  // Page after page: a page holds at most the server's largest page size (1,000 by default).
  let next: string | undefined =
    `${base}/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,description,serialnum&oslc.pageSize=1000&oslc.where=${where}`;
  while (next !== undefined) {
    const response = await fetch(next, { headers: AUTH });
    if (response.status !== 200) return [`reading back answered ${response.status}`];
    const page = (await response.json()) as {
      member: Array<Partial<Written>>;
      responseInfo?: { nextPage?: { href: string } };
    };
    members.push(...page.member);
    next = page.responseInfo?.nextPage?.href;
  }
  const stored = new Map(members.map((member) => [member.assetnum, member]));
  for (const record of acknowledged) {
    const found = stored.get(record.assetnum);
    if (!found) problems.push(`acknowledged ${record.assetnum} is missing`);
  }
  for (const member of members) {
    if (member.description !== `fault ${member.assetnum}` || member.serialnum !== `SN-${member.assetnum}`) {
      problems.push(`${member.assetnum} is partial: ${JSON.stringify(member)}`);
    }
  }
  return problems;
}

async function withSchema<T>(databaseUrl: string, work: (schema: string) => Promise<T>): Promise<T> {
  const schema = `eas_faults_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`create schema ${schema}`);
    return await work(schema);
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await admin.end();
  }
}

async function withDirectory<T>(work: (directory: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), 'eas-faults-'));
  try {
    return await work(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Fault 1: backends terminated, then the database unreachable, under reads and writes. */
export async function databaseOutage(
  databaseUrl: string,
  sizes: FaultSizes,
  log: (line: string) => void,
): Promise<FaultResult> {
  const name = 'PostgreSQL backends terminated, then unreachable, under load';
  return withSchema(databaseUrl, async (schema) => {
    const proxy = TcpProxy.forUrl(databaseUrl);
    await proxy.up();
    const applicationName = `${schema}_app`;
    const url = new URL(proxy.rewrite(databaseUrl));
    url.searchParams.set('application_name', applicationName);
    const server = new Server({ DATABASE_URL: url.toString(), EAS_DB_SCHEMA: schema });
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      const base = await server.listening();
      const list = `${base}/oslc/os/mxapiasset?lean=1&oslc.pageSize=5&oslc.select=assetnum`;
      const timeline = outageTimeline(sizes);
      const done = () => Date.now() >= timeline.endAt;
      const [reads, writes] = await Promise.all([
        load(sizes.clients, done, () => getStatus(list)),
        writers(base, Math.max(1, Math.floor(sizes.clients / 2)), `${schema.slice(-8)}W`, done),
        injectOutage(admin, proxy, applicationName, timeline, sizes, log),
      ]);
      const { problems, detail } = await judgeOutage(timeline, reads, writes, server.alive, () =>
        verifyWrites(base, `${schema.slice(-8)}W`, writes.acknowledged),
      );
      return {
        name,
        passed: problems.length === 0,
        detail: problems.length ? `${detail}; ${problems.join('; ')}` : detail,
      };
    } finally {
      await server.stop();
      await admin.end();
      await proxy.down();
    }
  });
}

/** When the outage's faults happen, from now: backends terminated, then the database away, then back. */
interface OutageTimeline {
  terminateAt: number;
  downAt: number;
  upAt: number;
  /** A request that started just before the relay was cut or restored answers according to when it started. */
  graceMs: number;
  endAt: number;
}

function outageTimeline(sizes: FaultSizes): OutageTimeline {
  const phaseMs = sizes.phaseSeconds * 1000;
  const terminateAt = Date.now() + phaseMs;
  const downAt = terminateAt + 2 * phaseMs;
  const upAt = downAt + sizes.outageSeconds * 1000;
  const graceMs = 3000;
  return { terminateAt, downAt, upAt, graceMs, endAt: upAt + graceMs + 2 * phaseMs };
}

/** The faults, on time: the app's backends terminated three times, then the relay cut, then restored. */
async function injectOutage(
  admin: pg.Client,
  proxy: TcpProxy,
  applicationName: string,
  { terminateAt, downAt, upAt }: OutageTimeline,
  sizes: FaultSizes,
  log: (line: string) => void,
): Promise<void> {
  await sleep(terminateAt - Date.now());
  let terminated = 0;
  for (let round = 0; round < 3; round++) {
    const { rowCount } = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [applicationName],
    );
    terminated += rowCount ?? 0;
    await sleep(200);
  }
  log(`  terminated ${terminated} backends`);
  await sleep(downAt - Date.now());
  await proxy.down();
  log(`  database unreachable for ${sizes.outageSeconds} s`);
  await sleep(upAt - Date.now());
  await proxy.up();
  log('  database back');
}

/** 200 or, within a fault window, 503; some 503 while away; only 200 after; every acknowledged write kept. */
async function judgeOutage(
  { terminateAt, downAt, upAt, graceMs }: OutageTimeline,
  reads: Sample[],
  writes: { acknowledged: unknown[]; sent: number },
  alive: boolean,
  verify: () => Promise<string[]>,
): Promise<{ problems: string[]; detail: string }> {
  const inFault = (at: number) =>
    (at >= terminateAt && at <= terminateAt + graceMs) || (at >= downAt && at <= upAt + graceMs);
  const wrong = reads.filter(
    (sample) => sample.status !== 200 && !(sample.status === 503 && inFault(sample.at)),
  );
  const during = reads.filter((sample) => sample.at > downAt + 500 && sample.at < upAt);
  const afterwards = reads.filter((sample) => sample.at > upAt + graceMs);
  const count = (samples: Sample[], status: number) => samples.filter((s) => s.status === status).length;
  const problems = [
    ...(alive ? [] : ['the process exited']),
    ...(wrong.length > 0
      ? [
          `${wrong.length} answers outside the fault windows or not 200/503: ${wrong.map((s) => s.status).join(',')}`,
        ]
      : []),
    ...(during.length > 0 && count(during, 503) === 0 ? ['no 503 while the database was away'] : []),
    ...(afterwards.length === 0 || count(afterwards, 200) !== afterwards.length
      ? ['not all 200 after the database returned']
      : []),
    ...(await verify()).slice(0, 5),
  ];
  const detail =
    `${reads.length} reads: ${count(reads, 200)} x 200, ${count(reads, 503)} x 503, ` +
    `${reads.length - count(reads, 200) - count(reads, 503)} other; ` +
    `${writes.acknowledged.length}/${writes.sent} writes acknowledged; process alive: ${alive}`;
  return { problems, detail };
}

/** Fault 2: `kill -9` during concurrent writes; a restart on the same storage has every acknowledged write. */
export async function killDuringWrites(
  kind: 'pglite' | 'postgres',
  databaseUrl: string | undefined,
  sizes: FaultSizes,
  log: (line: string) => void,
): Promise<FaultResult> {
  const name = `kill -9 under concurrent writes (${kind === 'pglite' ? 'PGlite' : 'PostgreSQL'})`;
  const run = async (env: Record<string, string>) => {
    const prefix = `K${randomBytes(3).toString('hex')}`;
    const first = new Server(env);
    const base = await first.listening();
    const stopAt = Date.now() + sizes.writeSeconds * 1000;
    const acknowledged: Written[] = [];
    const killer = (async () => {
      await sleep(stopAt - Date.now());
      // On a loaded machine the first writes can take longer than the planned time: the kill proves nothing until
      // some write has been acknowledged (bounded: a server that acknowledges none fails the check).
      while (acknowledged.length === 0 && Date.now() < stopAt + 60_000) await sleep(100);
      first.child.kill('SIGKILL');
      await first.exited;
    })();
    const [writes] = await Promise.all([
      writers(base, sizes.clients, prefix, () => !first.alive, acknowledged),
      killer,
    ]);
    log(`  killed after ${writes.acknowledged.length}/${writes.sent} acknowledged writes`);
    const second = new Server(env);
    try {
      const secondBase = await second.listening();
      const problems = await verifyWrites(secondBase, prefix, writes.acknowledged);
      const detail = `${writes.acknowledged.length}/${writes.sent} writes acknowledged before the kill, all present after the restart, none partial`;
      return {
        name,
        passed: problems.length === 0 && writes.acknowledged.length > 0,
        detail: problems.length ? problems.slice(0, 5).join('; ') : detail,
      };
    } finally {
      await second.stop();
    }
  };
  if (kind === 'pglite') return withDirectory((directory) => run({ EAS_DATA_DIR: directory }));
  return withSchema(databaseUrl!, (schema) => run({ DATABASE_URL: databaseUrl!, EAS_DB_SCHEMA: schema }));
}

/** Fault 3: a second process on a PGlite directory that one process already serves. */
export async function secondProcessRefused(): Promise<FaultResult> {
  const name = 'a second process on one PGlite directory';
  return withDirectory(async (directory) => {
    const first = new Server({ EAS_DATA_DIR: directory });
    try {
      await first.listening();
      const second = new Server({ EAS_DATA_DIR: directory });
      const timer = setTimeout(() => second.child.kill('SIGKILL'), STARTUP_TIMEOUT_MS);
      const code = await second.exited;
      clearTimeout(timer);
      const refused = code !== 0 && code !== null && second.output.includes(directory);
      const line = second.output.trim().split('\n').at(-1) ?? '';
      return { name, passed: refused && first.alive, detail: `refused with exit code ${code}: ${line}` };
    } finally {
      await first.stop();
    }
  });
}

export async function runFaults(options: {
  sizes: FaultSizes;
  databaseUrl: string | undefined;
  log: (line: string) => void;
}): Promise<FaultResult[]> {
  const { sizes, databaseUrl, log } = options;
  const steps: Array<[string, () => Promise<FaultResult>]> = [
    ['second process', () => secondProcessRefused()],
    ['kill PGlite', () => killDuringWrites('pglite', undefined, sizes, log)],
  ];
  if (databaseUrl) {
    steps.push(
      ['outage', () => databaseOutage(databaseUrl, sizes, log)],
      ['kill PostgreSQL', () => killDuringWrites('postgres', databaseUrl, sizes, log)],
    );
  }
  const results: FaultResult[] = [];
  for (const [label, step] of steps) {
    log(`${label}...`);
    try {
      results.push(await step());
    } catch (error) {
      results.push({
        name: label,
        passed: false,
        detail: error instanceof Error ? error.message : String(error),
      });
    }
    const last = results.at(-1)!;
    log(`  ${last.passed ? 'PASS' : 'FAIL'}: ${last.detail}`);
  }
  return results;
}

export function formatSummary(results: FaultResult[]): string {
  return results
    .map((result) => `${result.passed ? 'PASS' : 'FAIL'}  ${result.name}: ${result.detail}`)
    .join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      small: { type: 'boolean', default: false },
      'database-url': { type: 'string' },
      'no-postgres': { type: 'boolean', default: false },
    },
  });
  const databaseUrl = values['no-postgres']
    ? undefined
    : (values['database-url'] ?? process.env.EAS_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
  const results = await runFaults({
    sizes: values.small ? SMALL : FULL,
    databaseUrl,
    log: (line) => process.stderr.write(`faults: ${line}\n`),
  });
  process.stdout.write(`\n${formatSummary(results)}\n`);
  return results.every((result) => result.passed) ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(`faults: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 2;
    },
  );
}
