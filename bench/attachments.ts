// The `attachments` mode of `npm run bench`: see bench/README.md ("Attachments").
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
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
  uploadSeconds: number;
  downloadSeconds: number;
  uploadRatio: number;
  downloadRatio: number;
  /** Peak RSS over the upload and download, less the RSS before them, in MiB. */
  rssRiseMiB: number;
  identical: boolean;
  verdict: 'PASS' | 'FAIL';
}

export interface AttachmentBenchResult {
  megabytes: number;
  /** Seconds of the baseline: the file streamed to another file on the same disk (best of three). */
  baselineSeconds: number;
  engines: EngineResult[];
}

const MIB = 1024 * 1024;

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

/** Round trips (upload, download, delete) per engine; the best of each is compared with the baseline's best. */
const ROUNDS = 3;

/** The baseline: a plain Node stream of the file to disk. */
async function baselineSeconds(file: string, directory: string): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run += 1) {
    const started = performance.now();
    await pipeline(createReadStream(file), createWriteStream(join(directory, 'copy.bin')));
    best = Math.min(best, (performance.now() - started) / 1000);
  }
  await rm(join(directory, 'copy.bin'), { force: true });
  return best;
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

/** Downloads to a file on disk (as the baseline writes), hashing on the way: the SHA-256 of what arrived. */
function download(url: string, headers: Record<string, string>, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { headers }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`download answered ${response.statusCode}`));
        response.resume();
        return;
      }
      const hash = createHash('sha256');
      const hashing = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      });
      pipeline(response, hashing, createWriteStream(target)).then(() => resolve(hash.digest('hex')), reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
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
  started = performance.now();
  const arrived = await download(`${server.baseUrl}${location}`, auth, join(directory, 'downloaded.bin'));
  const downloadSeconds = (performance.now() - started) / 1000;
  const size = (await stat(join(directory, 'downloaded.bin'))).size;
  await rm(join(directory, 'downloaded.bin'), { force: true });
  await call(server.baseUrl, location, { method: 'DELETE', headers: auth });
  return {
    uploadSeconds,
    downloadSeconds,
    identical: arrived === file.sha256 && size === file.megabytes * MIB,
  };
}

async function measureEngine(
  engine: EngineResult['engine'],
  server: RunningServer,
  file: { path: string; sha256: string; megabytes: number },
  directory: string,
  baseline: number,
): Promise<EngineResult> {
  const auth = { maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD) };
  const set = await call(server.baseUrl, `${CONTEXT_ROOT}/api/service/system?action=wsmethod:setProperty`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ propName: 'mxe.doclink.maxfilesize', propValue: String(file.megabytes + 1) }),
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
    'content-length': String(file.megabytes * MIB),
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

  // Best of three round trips, as the baseline is the best of three copies: the first writes of a new file into
  // pages the kernel has not handed out yet are the disk's warm-up, not the service's.
  const before = await rssOf(server.pid);
  const sampler = sampleMemory(server.pid);
  let uploadSeconds = Number.POSITIVE_INFINITY;
  let downloadSeconds = Number.POSITIVE_INFINITY;
  let identical = true;
  for (let round = 0; round < ROUNDS; round += 1) {
    const trip = await roundTrip(server, { collection, uploadHeaders, auth }, file, directory);
    uploadSeconds = Math.min(uploadSeconds, trip.uploadSeconds);
    downloadSeconds = Math.min(downloadSeconds, trip.downloadSeconds);
    identical &&= trip.identical;
  }
  const peak = await sampler.stop();
  const uploadRatio = baseline / uploadSeconds;
  const downloadRatio = baseline / downloadSeconds;
  const rssRiseMiB = Math.max(0, peak - before) / MIB;
  const passed =
    identical &&
    uploadRatio >= ATTACHMENT_THROUGHPUT_TARGET &&
    downloadRatio >= ATTACHMENT_THROUGHPUT_TARGET &&
    rssRiseMiB < ATTACHMENT_RSS_LIMIT_MIB;
  return {
    engine,
    uploadSeconds,
    downloadSeconds,
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
    const baseline = await baselineSeconds(path, directory);
    log(`attachments: baseline ${baseline.toFixed(3)} s`);
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
        engines.push(
          await measureEngine(spec.engine, server, { path, sha256, megabytes }, directory, baseline),
        );
      } finally {
        await server.stop();
      }
    }
    return { megabytes, baselineSeconds: baseline, engines };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

export function formatAttachments(result: AttachmentBenchResult): string {
  const rate = (seconds: number): string => `${(result.megabytes / seconds).toFixed(0)} MB/s`;
  return [
    `attachments: a ${result.megabytes} MB file, baseline (stream to disk) ${result.baselineSeconds.toFixed(3)} s = ${rate(result.baselineSeconds)}`,
    ...result.engines.map(
      (engine) =>
        `${engine.engine.padEnd(8)} upload ${engine.uploadSeconds.toFixed(2)} s (${rate(engine.uploadSeconds)}, ratio ${engine.uploadRatio.toFixed(2)})` +
        `  download ${engine.downloadSeconds.toFixed(2)} s (${rate(engine.downloadSeconds)}, ratio ${engine.downloadRatio.toFixed(2)})` +
        `  RSS +${engine.rssRiseMiB.toFixed(1)} MiB  ${engine.identical ? 'identical' : 'DIFFERENT'}` +
        `  targets ratio >= ${ATTACHMENT_THROUGHPUT_TARGET}, RSS < ${ATTACHMENT_RSS_LIMIT_MIB} MiB  ${engine.verdict}`,
    ),
  ].join('\n');
}
