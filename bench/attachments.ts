// The `attachments` mode of `npm run bench`: see bench/README.md ("Attachments").
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ensureAdministrator } from '../src/auth/bootstrap.js';
import { hashPassword } from '../src/auth/password.js';
import { migrateToLatest, openStorage } from '../src/db/database.js';
import { seedDemoData } from '../src/demo/seed.js';
import { withServiceFixture } from './fixtures/service.js';
import { compileServers } from './lib/compile.js';
import { rssOf, sampleMemory } from './lib/rss.js';
import { startServer, type RunningServer } from './lib/server-process.js';
import {
  BENCH_ADMIN_PASSWORD,
  BENCH_DEMO_PASSWORD,
  BENCH_SCHEMA,
  CONTEXT_ROOT,
  maxauthHeader,
} from './lib/settings.js';
import { median, sliceOrder } from './lib/verdict.js';

/** The targets: throughput at least half a plain stream of the file to disk; RSS rising by less than this. */
export const ATTACHMENT_THROUGHPUT_TARGET = 0.5;
export const ATTACHMENT_RSS_LIMIT_MIB = 64;

export interface AttachmentBenchSettings {
  databaseUrl: string;
  /** Size of the attached file. */
  megabytes: number;
  log(message: string): void;
}

export interface EngineResult {
  engine: 'postgres' | 'pglite';
  /** Medians over the rounds: the baseline's copies, the uploads and the downloads. */
  baselineSeconds: number;
  uploadSeconds: number;
  downloadSeconds: number;
  /** Per round, the copy's seconds over the upload's (and the download's) beside it in time. */
  uploadRoundRatios: number[];
  downloadRoundRatios: number[];
  /** The medians of the round ratios: what the verdict compares with the target. */
  uploadRatio: number;
  downloadRatio: number;
  /** Peak RSS over the uploads and downloads, less the RSS before them, in MiB. */
  rssRiseMiB: number;
  identical: boolean;
  verdict: 'PASS' | 'FAIL';
}

export interface AttachmentBenchResult {
  megabytes: number;
  engines: EngineResult[];
}

const MIB = 1024 * 1024;

const round2 = (value: number): number => Number(value.toFixed(2));

async function writeRandomFile(path: string, megabytes: number): Promise<string> {
  const hash = createHash('sha256');
  const handle = await open(path, 'w');
  try {
    for (let index = 0; index < megabytes; index += 1) {
      const block = randomBytes(MIB);
      hash.update(block);
      await handle.write(block);
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/**
 * The PGlite data directory the server opens, built here first: a cluster's first start (initdb, migrations, demo
 * data) takes longer than a server is given to start on a loaded machine.
 */
async function preparePglite(dataDir: string): Promise<void> {
  const storage = await openStorage({ kind: 'pglite', dataDir });
  try {
    await migrateToLatest(storage);
    await ensureAdministrator(storage.db, await hashPassword(BENCH_ADMIN_PASSWORD));
    await seedDemoData(storage, { passwordHash: await hashPassword(BENCH_DEMO_PASSWORD) });
  } finally {
    await storage.close();
  }
}

/** Measured rounds per engine, each a copy of the file (the baseline) and a round trip, in ABBA order. */
const ROUNDS = 6;

/** The baseline: a plain Node stream of the file to disk. */
async function copySeconds(file: string, directory: string): Promise<number> {
  const started = performance.now();
  await pipeline(createReadStream(file), createWriteStream(join(directory, 'copy.bin')));
  const seconds = (performance.now() - started) / 1000;
  await rm(join(directory, 'copy.bin'), { force: true });
  return seconds;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request; the body comes from a file stream when `file` is given. */
function call(
  baseUrl: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; file?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${baseUrl}${path}`,
      { method: options.method ?? 'GET', headers: options.headers },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(parts).toString(),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    if (options.file) createReadStream(options.file).pipe(outgoing);
    else outgoing.end(options.body);
  });
}

/** Downloads to a file on disk, as the baseline writes. */
function download(url: string, headers: Record<string, string>, target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { headers }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`download answered ${response.statusCode}`));
        response.resume();
        return;
      }
      pipeline(response, createWriteStream(target)).then(resolve, reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** One upload, download and delete of the file: their seconds, and whether the bytes came back. */
async function roundTrip(
  server: RunningServer,
  target: { collection: string; uploadHeaders: Record<string, string>; auth: Record<string, string> },
  file: { path: string; sha256: string; megabytes: number },
  directory: string,
): Promise<{ uploadSeconds: number; downloadSeconds: number; identical: boolean }> {
  const { collection, uploadHeaders, auth } = target;
  let started = performance.now();
  const uploaded = await call(server.baseUrl, collection, {
    method: 'POST',
    headers: uploadHeaders,
    file: file.path,
  });
  const uploadSeconds = (performance.now() - started) / 1000;
  if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}: ${uploaded.body}`);
  const location = new URL(String(uploaded.headers.location)).pathname;
  const downloaded = join(directory, 'downloaded.bin');
  started = performance.now();
  await download(`${server.baseUrl}${location}`, auth, downloaded);
  const downloadSeconds = (performance.now() - started) / 1000;
  // Checked once the clock has stopped: the baseline's copy is not hashed either.
  const [arrived, { size }] = await Promise.all([sha256Of(downloaded), stat(downloaded)]);
  await rm(downloaded, { force: true });
  await call(server.baseUrl, location, { method: 'DELETE', headers: auth });
  return {
    uploadSeconds,
    downloadSeconds,
    identical: arrived === file.sha256 && size === file.megabytes * MIB,
  };
}

/** Where the round trips go: the limit raised to the file's size, an asset's attachments, a small trip first. */
async function prepareTarget(
  server: RunningServer,
  megabytes: number,
): Promise<{ collection: string; uploadHeaders: Record<string, string>; auth: Record<string, string> }> {
  const auth = { maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD) };
  const set = await call(server.baseUrl, `${CONTEXT_ROOT}/api/service/system?action=wsmethod:setProperty`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ propName: 'mxe.doclink.maxfilesize', propValue: String(megabytes + 1) }),
  });
  if (set.status !== 200) throw new Error(`setProperty answered ${set.status}: ${set.body}`);
  const assets = await call(server.baseUrl, `${CONTEXT_ROOT}/api/os/mxapiasset?lean=1&oslc.pageSize=1`, {
    headers: auth,
  });
  const href = new URL(
    String((JSON.parse(assets.body) as { member: Array<{ href: string }> }).member[0]!.href),
  );
  const collection = `${href.pathname}/doclinks`;
  const uploadHeaders = {
    ...auth,
    'content-type': 'application/octet-stream',
    slug: 'bench.bin',
    'x-document-meta': 'FILE/Attachments',
    'x-document-description': 'attachments benchmark',
    'content-length': String(megabytes * MIB),
  };
  // A small round trip first: the first request's JIT and connection set-up are not what is measured.
  const warm = await call(server.baseUrl, collection, {
    method: 'POST',
    headers: { ...uploadHeaders, 'content-length': '4' },
    body: 'warm',
  });
  if (warm.status !== 201) throw new Error(`warm-up upload answered ${warm.status}: ${warm.body}`);
  await call(server.baseUrl, new URL(String(warm.headers.location)).pathname, {
    method: 'DELETE',
    headers: auth,
  });
  return { collection, uploadHeaders, auth };
}

async function measureEngine(
  engine: EngineResult['engine'],
  server: RunningServer,
  file: { path: string; sha256: string; megabytes: number },
  directory: string,
): Promise<EngineResult> {
  const target = await prepareTarget(server, file.megabytes);
  const before = await rssOf(server.pid);
  const sampler = sampleMemory(server.pid);
  const trip = (): ReturnType<typeof roundTrip> => roundTrip(server, target, file, directory);
  // One full round trip unmeasured: the first writes of a new file into pages the kernel has not handed out yet are
  // the disk's warm-up, not the service's.
  let { identical } = await trip();
  const copies: number[] = [];
  const uploads: number[] = [];
  const downloads: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    // Every round starts with nothing left to write back: the previous round's files written out meanwhile would
    // take the disk and a core from whichever side measures then.
    execFileSync('sync');
    const copyFirst = sliceOrder(round)[0] === 0;
    if (copyFirst) copies.push(await copySeconds(file.path, directory));
    const measured = await trip();
    if (!copyFirst) copies.push(await copySeconds(file.path, directory));
    uploads.push(measured.uploadSeconds);
    downloads.push(measured.downloadSeconds);
    identical &&= measured.identical;
  }
  const peak = await sampler.stop();
  const uploadRoundRatios = copies.map((copy, round) => round2(copy / uploads[round]!));
  const downloadRoundRatios = copies.map((copy, round) => round2(copy / downloads[round]!));
  const uploadRatio = median(uploadRoundRatios);
  const downloadRatio = median(downloadRoundRatios);
  const rssRiseMiB = Math.max(0, peak - before) / MIB;
  const passed =
    identical &&
    uploadRatio >= ATTACHMENT_THROUGHPUT_TARGET &&
    downloadRatio >= ATTACHMENT_THROUGHPUT_TARGET &&
    rssRiseMiB < ATTACHMENT_RSS_LIMIT_MIB;
  return {
    engine,
    baselineSeconds: median(copies),
    uploadSeconds: median(uploads),
    downloadSeconds: median(downloads),
    uploadRoundRatios,
    downloadRoundRatios,
    uploadRatio,
    downloadRatio,
    rssRiseMiB,
    identical,
    verdict: passed ? 'PASS' : 'FAIL',
  };
}

/**
 * One file of `megabytes` uploaded by a binary POST to an asset's `doclinks` and downloaded again, on a service
 * process on PostgreSQL (schema `<BENCH_SCHEMA>_attachments`) and on one on PGlite (a data directory on disk): the
 * seconds of each against a plain stream of the file to disk, the server's RSS rise, the bytes' identity.
 */
export async function attachmentBenchmark(settings: AttachmentBenchSettings): Promise<AttachmentBenchResult> {
  const { databaseUrl, log, megabytes } = settings;
  const directory = await mkdtemp(join(tmpdir(), 'eas-bench-attachments-'));
  try {
    const path = join(directory, 'file.bin');
    log(`attachments: writing a ${megabytes} MB file`);
    const sha256 = await writeRandomFile(path, megabytes);
    const schema = `${BENCH_SCHEMA}_attachments`;
    await withServiceFixture({ url: databaseUrl, schema, reload: false, log }, async () => undefined);
    await compileServers(log);
    const engines: EngineResult[] = [];
    const specs: Array<{ engine: EngineResult['engine']; env: Record<string, string> }> = [
      {
        engine: 'postgres',
        // Attachment files in a folder, as a PostgreSQL deployment that takes large uploads is set up
        // (docs/operations.md, "Attachment files").
        env: {
          BENCH_DATABASE_URL: databaseUrl,
          BENCH_SCHEMA: schema,
          EAS_ATTACHMENTS_DIR: join(directory, 'files'),
        },
      },
      {
        engine: 'pglite',
        env: { BENCH_STORAGE: 'pglite', BENCH_PGLITE_DIR: join(directory, 'pglite') },
      },
    ];
    for (const spec of specs) {
      log(`attachments: ${spec.engine}`);
      if (spec.env.BENCH_PGLITE_DIR) await preparePglite(spec.env.BENCH_PGLITE_DIR);
      const server = await startServer({ script: 'eas.ts', env: spec.env }, { profile: false });
      try {
        engines.push(await measureEngine(spec.engine, server, { path, sha256, megabytes }, directory));
      } finally {
        await server.stop();
      }
    }
    return { megabytes, engines };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

export function formatAttachments(result: AttachmentBenchResult): string {
  const rate = (seconds: number): string => `${(result.megabytes / seconds).toFixed(0)} MB/s`;
  return [
    `attachments: a ${result.megabytes} MB file; medians of ${ROUNDS} rounds, each a copy (stream to disk) beside a round trip`,
    ...result.engines.map(
      (engine) =>
        `${engine.engine.padEnd(8)} copy ${engine.baselineSeconds.toFixed(2)} s (${rate(engine.baselineSeconds)})` +
        `  upload ${engine.uploadSeconds.toFixed(2)} s (${rate(engine.uploadSeconds)}, ratio ${engine.uploadRatio.toFixed(2)})` +
        `  download ${engine.downloadSeconds.toFixed(2)} s (${rate(engine.downloadSeconds)}, ratio ${engine.downloadRatio.toFixed(2)})` +
        `  RSS +${engine.rssRiseMiB.toFixed(1)} MiB  ${engine.identical ? 'identical' : 'DIFFERENT'}` +
        `  targets ratio >= ${ATTACHMENT_THROUGHPUT_TARGET}, RSS < ${ATTACHMENT_RSS_LIMIT_MIB} MiB  ${engine.verdict}` +
        `\n${' '.repeat(9)}round ratios: upload ${engine.uploadRoundRatios.join(' ')}; download ${engine.downloadRoundRatios.join(' ')}`,
    ),
  ].join('\n');
}
