// The `backout` mode of `npm run bench`: see bench/README.md ("Back-out").
import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import pg from 'pg';
import { FORMAT_VERSION, writePackageFile, type Manifest } from '../src/migration/transfer/package-file.js';
import { withServiceFixture } from './fixtures/service.js';
import { compileServers } from './lib/compile.js';
import { startServer, type RunningServer } from './lib/server-process.js';
import { BENCH_ADMIN_PASSWORD, BENCH_SCHEMA, CONTEXT_ROOT, maxauthHeader } from './lib/settings.js';

/** The issue's target: a plain batched INSERT of the rows takes at least half the time the back-out takes. */
export const BACKOUT_TARGET_RATIO = 0.5;

/** Rows per statement of the baseline's INSERTs. */
const INSERT_BATCH = 1000;

const PKGDEF = 'BENCHBACKOUT';

export interface BackoutSettings {
  databaseUrl: string;
  /** Records the deploy adds, and the back-out deletes again. */
  records: number;
  /** Where to write a CPU profile of the server over the back-out (`--profile`); none: not profiled. */
  profileFile?: string | undefined;
  log(message: string): void;
}

export interface BackoutResult {
  records: number;
  deploySeconds: number;
  backoutSeconds: number;
  insertSeconds: number;
  /** Baseline seconds over back-out seconds. */
  ratio: number;
  target: number;
  verdict: 'PASS' | 'FAIL';
}

const round = (value: number, digits: number): number => Number(value.toFixed(digits));

/** The generated assets, as the package carries them and the baseline inserts them. */
function asset(index: number): Record<string, string> {
  const site = index % 2 === 0 ? 'BEDFORD' : 'NASHUA';
  return {
    assetnum: `BO${String(index).padStart(7, '0')}`,
    siteid: site,
    orgid: 'EAGLENA',
    description: `Back-out bench asset ${index}`,
    status: 'NOT READY',
  };
}

/** A package file of `records` new assets (one data file, NDJSON), sized and hashed as an upload checks it. */
async function packageOf(records: number): Promise<Buffer> {
  const hash = createHash('sha256');
  let bytes = 0;
  for (let index = 0; index < records; index += 1) {
    const line = `${JSON.stringify(asset(index))}\n`;
    hash.update(line);
    bytes += Buffer.byteLength(line);
  }
  const name = 'data/001-MXAPIASSET.ndjson';
  const manifest: Manifest = {
    formatVersion: FORMAT_VERSION,
    source: 'bench/backout/generated',
    pkgdefname: PKGDEF,
    type: 'SNAPSHOT',
    xmlaction: 'AddChange',
    package: `${PKGDEF}_${Date.now().toString(36).toUpperCase()}`,
    createby: 'MAXADMIN',
    createdate: new Date().toISOString(),
    entries: [
      {
        name,
        objectstructure: 'MXAPIASSET',
        cfgdataorder: 1,
        count: records,
        bytes,
        sha256: hash.digest('hex'),
      },
    ],
    attributes: [],
  };
  const lines = async function* () {
    for (let index = 0; index < records; index += 1) yield JSON.stringify(asset(index));
  };
  return buffer(writePackageFile(manifest, [{ name, lines }]));
}

async function call(baseUrl: string, path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}${CONTEXT_ROOT}/oslc${path}`, {
    ...init,
    headers: {
      maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD),
      ...(init.headers as Record<string, string>),
    },
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

const posted = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** The same rows by multi-row INSERTs of 1,000 rows in one transaction, through one pg client: its seconds. */
async function insertBaseline(databaseUrl: string, schema: string, records: number): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`set search_path to "${schema}"`);
    const columns = Object.keys(asset(0));
    const started = performance.now();
    await client.query('begin');
    for (let first = 0; first < records; first += INSERT_BATCH) {
      const values: unknown[] = [];
      const tuples: string[] = [];
      for (let index = first; index < Math.min(records, first + INSERT_BATCH); index += 1) {
        const row = asset(index);
        tuples.push(`(${columns.map((column) => `$${values.push(row[column])}`).join(', ')}, now())`);
      }
      await client.query(
        `insert into asset (${columns.join(', ')}, statusdate) values ${tuples.join(', ')}`,
        values,
      );
    }
    await client.query('commit');
    return (performance.now() - started) / 1000;
  } finally {
    await client.end();
  }
}

/**
 * upload → deploy → back-out of a package of `records` new assets on one service process on PostgreSQL (schema
 * `<BENCH_SCHEMA>_backout_target`), the back-out timed against plain batched INSERTs of the same rows into
 * `_backout_insert`.
 */
export async function backoutBenchmark(settings: BackoutSettings): Promise<BackoutResult> {
  const { databaseUrl, log, records } = settings;
  const targetSchema = `${BENCH_SCHEMA}_backout_target`;
  const insertSchema = `${BENCH_SCHEMA}_backout_insert`;
  for (const schema of [targetSchema, insertSchema])
    await withServiceFixture({ url: databaseUrl, schema, reload: true, log }, async () => undefined);
  await compileServers(log);
  const servers: RunningServer[] = [];
  try {
    const target = await startServer(
      { script: 'eas.ts', env: { BENCH_DATABASE_URL: databaseUrl, BENCH_SCHEMA: targetSchema } },
      { profile: settings.profileFile !== undefined },
    );
    servers.push(target);
    log(`backout: package of ${records} records`);
    const file = await packageOf(records);
    const uploaded = await call(target.baseUrl, '/dm/upload?filename=backout.zip', {
      method: 'POST',
      headers: { 'content-type': 'application/zip' },
      body: new Uint8Array(file),
    });
    const ref = { pkgdefname: PKGDEF, dmpackageid: Number(uploaded.dmpackageid) };
    log('backout: deploy');
    let started = performance.now();
    await call(target.baseUrl, '/dm/deploy', posted(ref));
    const deploySeconds = (performance.now() - started) / 1000;
    log('backout: back-out');
    if (settings.profileFile !== undefined) await target.startProfile();
    started = performance.now();
    const answer = await call(target.baseUrl, '/dm/backout', posted(ref));
    const backoutSeconds = (performance.now() - started) / 1000;
    if (settings.profileFile !== undefined) await target.stopProfile(settings.profileFile);
    log(`backout: ${String(answer.warningmsg)}`);
    log('backout: baseline INSERTs');
    const insertSeconds = await insertBaseline(databaseUrl, insertSchema, records);
    const ratio = round(insertSeconds / backoutSeconds, 3);
    return {
      records,
      deploySeconds: round(deploySeconds, 2),
      backoutSeconds: round(backoutSeconds, 2),
      insertSeconds: round(insertSeconds, 2),
      ratio,
      target: BACKOUT_TARGET_RATIO,
      verdict: ratio >= BACKOUT_TARGET_RATIO ? 'PASS' : 'FAIL',
    };
  } finally {
    for (const server of servers) await server.stop();
  }
}

export function formatBackout(result: BackoutResult): string {
  return [
    `backout: ${result.records.toLocaleString('en-US')} records added by a deploy, then backed out`,
    `deploy ${result.deploySeconds.toFixed(2)} s, back-out ${result.backoutSeconds.toFixed(2)} s, insert ${result.insertSeconds.toFixed(2)} s`,
    `ratio (insert s / back-out s): ${result.ratio.toFixed(2)}  target >= ${result.target.toFixed(2)}  ${result.verdict}`,
  ].join('\n');
}
