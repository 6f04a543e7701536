// `npm run bench -- soak [--duration <s>] [--connections <n>]`: see bench/README.md.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { Server } from './faults.js';
import { rssSlopeMiBPerHour } from './lib/verdict.js';

/**
 * The soak: one real server process on a fresh PostgreSQL schema, first driven flat out for a few seconds to
 * measure its capacity, then held at half that rate for the duration with a mix of reads and creates. Passes when
 * no request fails and the resident memory stays bounded (the last quarter's peak within 25% + 32 MiB of the
 * first quarter's); the RSS samples are in the result file.
 */

const resultsDir = join(dirname(fileURLToPath(import.meta.url)), 'results');
const ADMIN = { maxauth: Buffer.from('MAXADMIN:faults-admin-pw').toString('base64') };
const CAPACITY_SECONDS = 5;
const run = promisify(execFile);

export interface SoakSettings {
  databaseUrl: string;
  durationSeconds: number;
  connections: number;
  log(message: string): void;
}

export interface SoakResult {
  capacityPerSecond: number;
  targetPerSecond: number;
  achievedPerSecond: number;
  durationSeconds: number;
  requests: number;
  errors: number;
  non2xx: number;
  rssMiB: { start: number; firstQuarterPeak: number; lastQuarterPeak: number; end: number; max: number };
  samples: Array<{ second: number; rssMiB: number }>;
  /** Seconds of warm-up left out of the slope: a quarter of the duration, at most 5 minutes. */
  warmupSeconds: number;
  /** Least-squares slope of the RSS after the warm-up, MiB per hour (undefined: too few samples). */
  rssSlopeMiBPerHour: number | undefined;
  bounded: boolean;
  passed: boolean;
}

async function rssMiB(pid: number): Promise<number> {
  const { stdout } = await run('ps', ['-o', 'rss=', '-p', String(pid)]);
  return Number((Number(stdout.trim()) / 1024).toFixed(1));
}

/** Reads of a page, a filtered and sorted page, one member; and a create with a fresh key. */
function requests(prefix: string): autocannon.Request[] {
  let next = 0;
  const page = '/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=20&oslc.select=assetnum,description,status';
  return [
    { method: 'GET', path: page, headers: ADMIN },
    {
      method: 'GET',
      path: `${page}&oslc.where=${encodeURIComponent('status="OPERATING"')}&oslc.orderBy=-assetnum`,
      headers: ADMIN,
    },
    {
      method: 'POST',
      path: '/maximo/oslc/os/mxapiasset?lean=1',
      headers: { ...ADMIN, 'content-type': 'application/json' },
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify({
          assetnum: `${prefix}${(next++).toString(36)}`.toUpperCase(),
          siteid: 'BEDFORD',
          description: 'soak',
        }),
      }),
    },
  ];
}

function drive(
  base: string,
  prefix: string,
  seconds: number,
  connections: number,
  overallRate?: number,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: base.replace(/\/maximo$/, ''),
        connections,
        duration: seconds,
        timeout: 10,
        requests: requests(prefix),
        ...(overallRate !== undefined && { overallRate }),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

export async function soak(settings: SoakSettings): Promise<SoakResult> {
  const { log } = settings;
  const schema = `eas_soak_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: settings.databaseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const server = new Server({
    DATABASE_URL: settings.databaseUrl,
    EAS_DB_SCHEMA: schema,
    EAS_MAX_FAILED_LOGINS: '0',
  });
  try {
    const base = await server.listening();
    const pid = server.child.pid!;
    log(`soak: measuring capacity for ${CAPACITY_SECONDS} s with ${settings.connections} connections`);
    const flat = await drive(base, 'C', CAPACITY_SECONDS, settings.connections);
    const capacity = flat.requests.average;
    const target = Math.max(1, Math.floor(capacity / 2));
    log(`soak: capacity ${capacity.toFixed(0)} req/s; ${settings.durationSeconds} s at ${target} req/s`);

    const samples: SoakResult['samples'] = [];
    const started = Date.now();
    const interval = Math.max(1, Math.min(10, settings.durationSeconds / 60)) * 1000;
    samples.push({ second: 0, rssMiB: await rssMiB(pid) });
    const sampler = setInterval(() => {
      void rssMiB(pid).then(
        (rss) => samples.push({ second: Math.round((Date.now() - started) / 1000), rssMiB: rss }),
        () => undefined,
      );
    }, interval);
    let result: autocannon.Result;
    try {
      result = await drive(base, 'S', settings.durationSeconds, settings.connections, target);
    } finally {
      clearInterval(sampler);
    }
    samples.push({ second: Math.round((Date.now() - started) / 1000), rssMiB: await rssMiB(pid) });

    const quarter = settings.durationSeconds / 4;
    const peak = (from: number, to: number) =>
      Math.max(0, ...samples.filter((s) => s.second >= from && s.second <= to).map((s) => s.rssMiB));
    const firstQuarterPeak = peak(0, quarter);
    const lastQuarterPeak = peak(settings.durationSeconds - quarter, Infinity);
    const bounded = lastQuarterPeak <= firstQuarterPeak * 1.25 + 32;
    const warmupSeconds = Math.min(300, Math.round(quarter));
    const slope = rssSlopeMiBPerHour(samples, warmupSeconds);
    const soakResult: SoakResult = {
      capacityPerSecond: Math.round(capacity),
      targetPerSecond: target,
      achievedPerSecond: Math.round(result.requests.average),
      durationSeconds: settings.durationSeconds,
      requests: result.requests.total,
      errors: result.errors + result.timeouts,
      non2xx: result.non2xx,
      rssMiB: {
        start: samples[0]!.rssMiB,
        firstQuarterPeak,
        lastQuarterPeak,
        end: samples.at(-1)!.rssMiB,
        max: Math.max(...samples.map((s) => s.rssMiB)),
      },
      samples,
      warmupSeconds,
      rssSlopeMiBPerHour: slope === undefined ? undefined : Number(slope.toFixed(1)),
      bounded,
      passed: bounded && result.errors + result.timeouts === 0 && result.non2xx === 0 && server.alive,
    };
    await mkdir(resultsDir, { recursive: true });
    await writeFile(join(resultsDir, 'soak.json'), `${JSON.stringify(soakResult, null, 2)}\n`);
    return soakResult;
  } finally {
    await server.stop();
    await admin.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await admin.end();
  }
}

export function formatSoak(result: SoakResult): string {
  const { rssMiB } = result;
  return [
    `soak ${result.passed ? 'PASS' : 'FAIL'}: ${result.durationSeconds} s at ${result.targetPerSecond} req/s ` +
      `(half of the measured ${result.capacityPerSecond} req/s), achieved ${result.achievedPerSecond} req/s`,
    `  ${result.requests} requests, ${result.non2xx} non-2xx, ${result.errors} errors/timeouts`,
    `  RSS MiB: start ${rssMiB.start}, first-quarter peak ${rssMiB.firstQuarterPeak}, last-quarter peak ` +
      `${rssMiB.lastQuarterPeak}, end ${rssMiB.end}, max ${rssMiB.max} (${result.bounded ? 'bounded' : 'GROWING'})`,
    `  RSS slope after ${result.warmupSeconds} s of warm-up: ${
      result.rssSlopeMiBPerHour === undefined ? 'too few samples' : `${result.rssSlopeMiBPerHour} MiB/h`
    }`,
    '  samples in bench/results/soak.json',
  ].join('\n');
}
