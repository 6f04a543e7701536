// The `deploy` mode of `npm run bench`: see bench/README.md ("Deploy").
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { ensureAssetFixture } from './fixtures/assets.js';
import { withServiceFixture } from './fixtures/service.js';
import { compileServers } from './lib/compile.js';
import { longRequest, longResponse } from './lib/long-request.js';
import { startServer, type RunningServer } from './lib/server-process.js';
import { BENCH_ADMIN_PASSWORD, BENCH_SCHEMA, CONTEXT_ROOT, maxauthHeader } from './lib/settings.js';

/** The issue's target: a plain batched INSERT of the rows takes at least 0.6 of the time the deploy takes. */
export const DEPLOY_TARGET_RATIO = 0.6;

/** Rows per statement of the baseline's INSERTs, and per read of the rows it inserts. */
const INSERT_BATCH = 1000;

/** How often the servers' resident memory is read during a step. */
const RSS_SAMPLE_MS = 50;

/** The definition of a package of `records` records (one per size, so that runs of several sizes coexist). */
const definitionName = (records: number): string => `BENCHDEPLOY${records}`;

/**
 * The last of the first `records` generated assets of the fixture, never the demo's own: the fixture numbers them
 * after the demo's 220 (`B0000221`...).
 */
const lastAssetnum = (records: number): string => `B${String(records + 220).padStart(7, '0')}`;

/** The columns the package carries for these assets, as the baseline inserts them. */
const ASSET_COLUMNS = [
  'assetnum',
  'siteid',
  'orgid',
  'description',
  'status',
  'statusdate',
  'assettype',
  'location',
  'serialnum',
  'manufacturer',
  'purchaseprice',
  'installdate',
  'priority',
  'isrunning',
  'changedate',
  'changeby',
] as const;

export interface DeploySettings {
  databaseUrl: string;
  /** Records of the package (generated assets). */
  records: number;
  /**
   * V8's old-space limit of both servers in MiB (`--max-old-space-size`), to show that no step holds the package:
   * a step that did would fail with an out-of-memory error. Default: node's own.
   */
  heapMiB?: number;
  log(message: string): void;
}

export interface DeployStep {
  step: 'create' | 'download' | 'upload' | 'deploy' | 'redeploy' | 'insert';
  /** Which process did the work: the source or target server, or the runner (the baseline's INSERTs). */
  process: 'source' | 'target' | 'runner';
  seconds: number;
  /** Resident memory of that server before the step, and the highest reading during it (MiB). */
  rssBeforeMiB?: number;
  peakRssMiB?: number;
  /** The server's peak of V8's used heap since it started, read after the step (`process.memoryUsage().heapUsed`). */
  peakHeapMiB?: number;
}

export interface DeployResult {
  records: number;
  heapMiB?: number;
  packageBytes: number;
  steps: DeployStep[];
  /** Distinct progress texts a reader saw on the target's package record during the deploy. */
  progressSeen: string[];
  /** Baseline seconds over deploy seconds. */
  ratio: number;
  target: number;
  verdict: 'PASS' | 'FAIL';
}

const round = (value: number, digits: number): number => Number(value.toFixed(digits));

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kib / 1024;
}

/** The heap peak a server wrote to its file (0 before its first sample). */
async function heapPeakMiB(file: string): Promise<number> {
  // The server samples every 50 ms: one more period, so that the step's own peak is in the file.
  await new Promise((resolve) => setTimeout(resolve, 120));
  const text = await readFile(file, 'utf8').catch(() => '0');
  return Number(text) / 2 ** 20;
}

/** Times `work` while sampling the server's resident memory, and answers the step with its peak. */
async function measured<T>(
  step: DeployStep['step'],
  server: SideServer,
  work: () => Promise<T>,
): Promise<{ value: T; step: DeployStep }> {
  const before = await rssMiB(server.pid);
  let peak = before;
  const timer = setInterval(() => {
    rssMiB(server.pid).then(
      (value) => (peak = Math.max(peak, value)),
      () => undefined,
    );
  }, RSS_SAMPLE_MS);
  const started = performance.now();
  try {
    const value = await work();
    const seconds = (performance.now() - started) / 1000;
    peak = Math.max(peak, await rssMiB(server.pid));
    return {
      value,
      step: {
        step,
        process: server.side,
        seconds: round(seconds, 2),
        rssBeforeMiB: round(before, 1),
        peakRssMiB: round(peak, 1),
        ...(server.heapFile !== undefined && { peakHeapMiB: round(await heapPeakMiB(server.heapFile), 1) }),
      },
    };
  } finally {
    clearInterval(timer);
  }
}

const headers = { maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD) };

/** A request to a server (through node:http, no time limit): `json` is sent as a JSON body; 2xx is parsed. */
async function call(
  baseUrl: string,
  path: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string>; body?: Readable } = {},
): Promise<Record<string, unknown>> {
  const { json, body } = init;
  const response = await longRequest(`${baseUrl}${CONTEXT_ROOT}/oslc${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...headers,
      ...(json !== undefined && { 'content-type': 'application/json' }),
      ...init.headers,
    },
    ...(json !== undefined ? { body: JSON.stringify(json) } : body !== undefined && { body }),
  });
  const { status, text } = response;
  if (status < 200 || status >= 300)
    throw new Error(`${init.method ?? 'GET'} ${path}: HTTP ${status}: ${text.slice(0, 300)}`);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

/** The definition of the benchmark's package on the source (kept from an earlier run when there). */
async function ensureDefinition(source: string, records: number): Promise<void> {
  const found = await call(
    source,
    `/os/mxapidmpkgdef?lean=1&oslc.select=pkgdefname&oslc.where=${encodeURIComponent(`pkgdefname="${definitionName(records)}"`)}`,
  );
  if (Array.isArray(found.member) && found.member.length > 0) return;
  await call(source, '/os/mxapidmpkgdef?lean=1', {
    method: 'POST',
    json: {
      pkgdefname: definitionName(records),
      type: 'SNAPSHOT',
      status: 'APPR',
      batchsize: 1000,
      dmpkgdefcontent: [
        {
          objectstructure: 'MXAPIASSET',
          whereclause: `assetnum>="B0000001" and assetnum<="${lastAssetnum(records)}"`,
          cfgdataorder: 1,
        },
      ],
      dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
    },
  });
}

/** Reads the target's package record once a second while the deploy runs: what an operator's poll would see. */
function watchProgress(target: string, dmpackageid: number): { stop(): Promise<string[]> } {
  const seen: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (!running) break;
      const page = await call(
        target,
        `/os/mxapidmpackage?lean=1&oslc.select=progressstatus&oslc.where=dmpackageid=${dmpackageid}`,
      ).catch(() => ({}) as Record<string, unknown>);
      const member = (page.member as Array<Record<string, unknown>> | undefined)?.[0];
      const text = typeof member?.progressstatus === 'string' ? member.progressstatus : undefined;
      if (text !== undefined && seen.at(-1) !== text) seen.push(text);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return seen;
    },
  };
}

/**
 * The baseline: the same rows read from the source schema a page at a time (not timed) and written into a schema of
 * the same database by multi-row INSERTs of 1,000 rows, in one transaction, through one pg client.
 */
async function insertBaseline(
  databaseUrl: string,
  sourceSchema: string,
  insertSchema: string,
  records: number,
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const columns = ASSET_COLUMNS.join(', ');
    let seconds = 0;
    const timed = async (text: string, values: unknown[] = []) => {
      const started = performance.now();
      await client.query(text, values);
      seconds += (performance.now() - started) / 1000;
    };
    // The tables' triggers name their sequences unqualified, as the service's connections see them.
    await client.query(`set search_path to "${insertSchema}"`);
    await timed('begin');
    let after = 0;
    for (;;) {
      const { rows } = await client.query<Record<string, unknown> & { assetuid: number }>(
        `select assetuid, ${columns} from "${sourceSchema}".asset
         where assetnum >= 'B0000001' and assetnum <= $2 and assetuid > $1 order by assetuid limit ${INSERT_BATCH}`,
        [after, lastAssetnum(records)],
      );
      if (rows.length === 0) break;
      after = rows.at(-1)!.assetuid;
      const values: unknown[] = [];
      const tuples = rows.map((row) => {
        const placeholders = ASSET_COLUMNS.map((column) => {
          values.push(row[column]);
          return `$${values.length}`;
        });
        return `(${placeholders.join(', ')})`;
      });
      await timed(`insert into asset (${columns}) values ${tuples.join(', ')}`, values);
    }
    await timed('commit');
    return seconds;
  } finally {
    await client.end();
  }
}

/** A service process of the benchmark and the side of the migration it plays. */
type SideServer = RunningServer & { side: 'source' | 'target'; heapFile?: string };

/** The source and target service processes, each on its schema (pushed to `servers` to be stopped). */
async function startSides(
  settings: DeploySettings,
  directory: string,
  schemas: { source: string; target: string },
  servers: RunningServer[],
): Promise<{ source: SideServer; target: SideServer }> {
  const start = async (schema: string, side: 'source' | 'target') => {
    const heapFile = join(directory, `heap-${side}`);
    const server = await startServer(
      {
        script: 'eas.ts',
        env: {
          BENCH_DATABASE_URL: settings.databaseUrl,
          BENCH_SCHEMA: schema,
          BENCH_HEAP_FILE: heapFile,
          ...(settings.heapMiB !== undefined && {
            NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${settings.heapMiB}`.trim(),
          }),
        },
      },
      { profile: false },
    );
    servers.push(server);
    return Object.assign(server, { side, heapFile });
  };
  const source = await start(schemas.source, 'source');
  const target = await start(schemas.target, 'target');
  return { source, target };
}

/** create and download on the source, each step timed into `steps`: the package's id and file. */
async function createAndDownload(
  source: SideServer,
  pkgdefname: string,
  file: string,
  steps: DeployStep[],
  log: (text: string) => void,
): Promise<{ sourceId: number; packageBytes: number }> {
  log('deploy: create');
  const created = await measured('create', source, () =>
    call(source.baseUrl, '/dm/create', { method: 'POST', json: { pkgdefname } }),
  );
  steps.push(created.step);
  const sourceId = Number(created.value.dmpackageid);
  log(`deploy: ${String(created.value.progressstatus)}`);

  log('deploy: download');
  const downloaded = await measured('download', source, async () => {
    const response = await longResponse(
      `${source.baseUrl}${CONTEXT_ROOT}/oslc/dm/download?dmpackagedef=${pkgdefname}&dmpackageid=${sourceId}`,
      headers,
    ).catch((error: unknown) => {
      throw new Error(`download: ${error instanceof Error ? error.message : String(error)}`);
    });
    await pipeline(response, createWriteStream(file));
  });
  steps.push(downloaded.step);
  return { sourceId, packageBytes: (await stat(file)).size };
}

/**
 * upload, deploy and redeploy on the target, each step timed into `steps`: the deploy's seconds and the progress
 * texts seen while it ran.
 */
async function uploadAndDeploy(
  target: SideServer,
  pkgdefname: string,
  file: string,
  packageBytes: number,
  steps: DeployStep[],
  log: (text: string) => void,
): Promise<{ deploySeconds: number; progressSeen: string[] }> {
  /** The package file streamed to the target's `/dm/upload`. */
  const upload = () =>
    call(target.baseUrl, '/dm/upload?filename=package.zip', {
      method: 'POST',
      headers: { 'content-type': 'application/zip', 'content-length': String(packageBytes) },
      body: createReadStream(file),
    });

  log('deploy: upload');
  const uploaded = await measured('upload', target, upload);
  steps.push(uploaded.step);
  const targetId = Number(uploaded.value.dmpackageid);

  log('deploy: deploy');
  const watcher = watchProgress(target.baseUrl, targetId);
  // The watcher is stopped on a failure too: its timer would keep the runner alive.
  const deployed = await measured('deploy', target, () =>
    call(target.baseUrl, '/dm/deploy', {
      method: 'POST',
      json: { pkgdefname, dmpackageid: targetId },
    }),
  ).finally(() => watcher.stop());
  const progressSeen = await watcher.stop();
  steps.push(deployed.step);
  log(`deploy: ${String(deployed.value.warningmsg)}`);

  // The same package again: every record is stored already, and equal (a SNAPSHOT deployed twice).
  log('deploy: redeploy');
  const again = await upload();
  const redeployed = await measured('redeploy', target, () =>
    call(target.baseUrl, '/dm/deploy', {
      method: 'POST',
      json: { pkgdefname, dmpackageid: Number(again.dmpackageid) },
    }),
  );
  steps.push(redeployed.step);
  log(`deploy: ${String(redeployed.value.warningmsg)}`);
  return { deploySeconds: deployed.step.seconds, progressSeen };
}

/**
 * create → download → upload → deploy of a package of `records` generated assets between two service processes on
 * PostgreSQL (schemas `<BENCH_SCHEMA>_deploy_source` and `_deploy_target`), each step timed with the peak resident
 * memory of the server doing it; then the same rows by plain batched INSERTs into `_deploy_insert`.
 */
export async function deployBenchmark(settings: DeploySettings): Promise<DeployResult> {
  const { databaseUrl, log } = settings;
  const sourceSchema = `${BENCH_SCHEMA}_deploy_source`;
  const targetSchema = `${BENCH_SCHEMA}_deploy_target`;
  const insertSchema = `${BENCH_SCHEMA}_deploy_insert`;
  const fixture = await ensureAssetFixture({
    url: databaseUrl,
    schema: sourceSchema,
    reload: false,
    log,
    assets: settings.records + 220,
  });
  log(`deploy: source ${sourceSchema} holds ${fixture.assets} assets`);
  for (const schema of [targetSchema, insertSchema])
    await withServiceFixture({ url: databaseUrl, schema, reload: true, log }, async () => undefined);
  await compileServers(log);
  const directory = await mkdtemp(join(tmpdir(), 'eas-bench-deploy-'));
  const servers: RunningServer[] = [];
  try {
    const { source, target } = await startSides(
      settings,
      directory,
      { source: sourceSchema, target: targetSchema },
      servers,
    );
    await ensureDefinition(source.baseUrl, settings.records);
    const pkgdefname = definitionName(settings.records);
    const steps: DeployStep[] = [];
    const file = join(directory, 'package.zip');
    const { sourceId, packageBytes } = await createAndDownload(source, pkgdefname, file, steps, log);
    const { deploySeconds, progressSeen } = await uploadAndDeploy(
      target,
      pkgdefname,
      file,
      packageBytes,
      steps,
      log,
    );
    // The source package's staging rows would pile up run after run.
    await call(source.baseUrl, '/dm/close', {
      method: 'POST',
      json: { pkgdefname, dmpackageid: sourceId },
    });

    log('deploy: baseline INSERTs');
    const insertSeconds = await insertBaseline(databaseUrl, sourceSchema, insertSchema, settings.records);
    steps.push({ step: 'insert', process: 'runner', seconds: round(insertSeconds, 2) });
    const ratio = round(insertSeconds / deploySeconds, 3);
    return {
      records: settings.records,
      ...(settings.heapMiB !== undefined && { heapMiB: settings.heapMiB }),
      packageBytes,
      steps,
      progressSeen,
      ratio,
      target: DEPLOY_TARGET_RATIO,
      verdict: ratio >= DEPLOY_TARGET_RATIO ? 'PASS' : 'FAIL',
    };
  } finally {
    for (const server of servers) await server.stop();
    await rm(directory, { recursive: true, force: true });
  }
}

export function formatDeploy(result: DeployResult): string {
  const header = ['step', 'process', 'seconds', 'rss before MiB', 'peak rss MiB', 'peak heap MiB'];
  const rows = result.steps.map((step) => [
    step.step,
    step.process,
    step.seconds.toFixed(2),
    step.rssBeforeMiB === undefined ? '-' : step.rssBeforeMiB.toFixed(1),
    step.peakRssMiB === undefined ? '-' : step.peakRssMiB.toFixed(1),
    step.peakHeapMiB === undefined ? '-' : step.peakHeapMiB.toFixed(1),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ');
  return [
    `deploy: ${result.records.toLocaleString('en-US')} records, package file ${(result.packageBytes / 2 ** 20).toFixed(1)} MiB` +
      (result.heapMiB === undefined ? '' : `, servers' old space limited to ${result.heapMiB} MiB`),
    line(header),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...rows.map(line),
    '',
    `ratio (insert s / deploy s): ${result.ratio.toFixed(2)}  target >= ${result.target.toFixed(2)}  ${result.verdict}`,
    `progress seen during the deploy: ${result.progressSeen.join(' | ') || '(none)'}`,
  ].join('\n');
}
