// The `backup` mode of `npm run bench`: see bench/README.md ("Backup").
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { ensureAdministrator } from '../src/auth/bootstrap.js';
import { hashPassword } from '../src/auth/password.js';
import { migrateToLatest, openStorage } from '../src/db/database.js';
import { seedDemoData } from '../src/demo/seed.js';
import { countAssets, insertGeneratedAssets } from './fixtures/assets.js';
import { compiledDir, compileServers, rootDir } from './lib/compile.js';
import { rssOf, sampleMemory } from './lib/rss.js';
import { startServer } from './lib/server-process.js';
import { BENCH_ADMIN_PASSWORD, BENCH_DEMO_PASSWORD, BENCH_MASTER_KEY, CONTEXT_ROOT } from './lib/settings.js';

/** The issue's targets: backup and restore in at most this many times `tar`'s, the server's RSS rising by less. */
export const BACKUP_TIME_TARGET = 2;
export const BACKUP_RSS_LIMIT_MIB = 128;
/** Each timing is taken this many times; the median is reported. */
const RUNS = 3;
const MIB = 1024 * 1024;

export interface BackupBenchSettings {
  assets: number;
  /** Build the data directory again even if an earlier run left it. */
  reload: boolean;
  log(message: string): void;
}

/** One operation against its baseline: medians of RUNS runs (wall and CPU seconds), and every run. */
export interface Comparison {
  seconds: number;
  cpuSeconds: number;
  baselineSeconds: number;
  baselineCpuSeconds: number;
  /** Wall seconds over the baseline's (the target: at most BACKUP_TIME_TARGET). */
  ratio: number;
  cpuRatio: number;
  runs: Array<{ seconds: number; cpuSeconds: number }>;
  baselineRuns: Array<{ seconds: number; cpuSeconds: number }>;
}

export interface BackupBenchResult {
  assets: number;
  /** The stopped data directory: bytes of its files, and how many. */
  dataBytes: number;
  files: number;
  archiveBytes: number;
  /** `eas backup` (CPU: the CLI's and the server's) against `tar` of the stopped directory. */
  backup: Comparison;
  /** The server's CPU seconds per backup. */
  serverCpuSeconds: number[];
  /** `npm run admin -- restore` against `tar -x`. */
  restore: Comparison;
  /** The same against `tar -x` with every file then fsynced, as the restore does (for information: no target). */
  restoreAgainstSynced: Comparison;
  /** What any backup through a server and a CLI on Node costs before it does anything of its own (no target). */
  floor: BackupFloor;
  /** The server's peak RSS during a backup, less its RSS just before it (the highest of the runs), in MiB. */
  backupRssRiseMiB: number;
  /** The restore process's peak RSS less the peak of the same command that restores nothing (`--help`), in MiB. */
  restoreRssRiseMiB: number;
  /** The slowest answer to the requests sent during the backups (one every 100 ms), in seconds. */
  slowestAnswerSeconds: number;
  verdict: 'PASS' | 'FAIL';
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

/** Bytes and files under `directory`. */
async function sizeOf(directory: string): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    bytes += (await stat(join(entry.parentPath, entry.name))).size;
    files += 1;
  }
  return { bytes, files };
}

/**
 * The data directory of `assets` assets, built in this process (the server is not running): migrations, MAXADMIN,
 * the demo organization, then the generated assets in one INSERT ... SELECT (bench/fixtures/assets.ts) and ANALYZE.
 * Kept in .cache/bench/backup/ for the next run.
 */
async function prepareDataDir(dataDir: string, settings: BackupBenchSettings): Promise<void> {
  if (settings.reload) await rm(dataDir, { recursive: true, force: true });
  const storage = await openStorage({ kind: 'pglite', dataDir });
  try {
    await migrateToLatest(storage);
    const existing = await countAssets(storage.db);
    if (existing >= settings.assets) return;
    settings.log(`backup: building a data directory of ${settings.assets.toLocaleString('en-US')} assets`);
    await ensureAdministrator(storage.db, await hashPassword(BENCH_ADMIN_PASSWORD));
    await seedDemoData(storage, { passwordHash: await hashPassword(BENCH_DEMO_PASSWORD) });
    const seeded = await countAssets(storage.db);
    await insertGeneratedAssets(storage.db, seeded + 1, settings.assets);
    await sql.raw('analyze').execute(storage.db);
  } finally {
    await storage.close();
  }
}

/** What one run of a command cost: wall seconds, CPU seconds (user + system), peak resident set in bytes. */
interface Run {
  seconds: number;
  cpuSeconds: number;
  peakBytes: number;
}

/** `0m1.234s` of bash's `times`, in seconds. */
const minutesSeconds = (text: string): number => {
  const [, minutes, seconds] = /^(\d+)m([\d.]+)s$/.exec(text) ?? [];
  return Number(minutes) * 60 + Number(seconds);
};

/**
 * Runs a command to its end under bash, whose `times` then reports the command's CPU time (user and system, what
 * Node cannot read of an ended child); the peak of its resident set (VmHWM) is sampled meanwhile.
 */
async function timed(
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<Run> {
  const started = performance.now();
  const child = spawn('bash', ['-c', '"$@"; code=$?; times >&2; exit $code', 'timed', command, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // The command is bash's child: its pid is found once it runs, and sampled from then on.
  const sampler = sampleMemory(child.pid ?? -1, 'VmHWM', 10, true);
  const [code] = (await once(child, 'exit')) as [number | null];
  const seconds = (performance.now() - started) / 1000;
  const peakBytes = await sampler.stop();
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${String(code)}: ${stderr}`);
  const children = stderr.trim().split('\n').at(-1)!.trim().split(/\s+/);
  return { seconds, cpuSeconds: minutesSeconds(children[0]!) + minutesSeconds(children[1]!), peakBytes };
}

const cliScript = join(compiledDir, 'src', 'cli', 'main.js');
/** What `npm run admin` runs: the compiled entry bundled into one file, as `npm run build` bundles it. */
const adminScript = join(compiledDir, 'src', 'bundle', 'admin.js');

async function bundleAdmin(): Promise<void> {
  const entry = join(compiledDir, 'src', 'admin', 'main.js');
  await promisify(execFile)(process.execPath, [
    join(rootDir, 'scripts', 'bundle.mjs'),
    `${entry}=${adminScript}`,
  ]);
}

/** `tar` of the stopped directory, RUNS times (a new archive each time). */
async function timeTar(dataDir: string, work: string): Promise<Run[]> {
  const runs: Run[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const file = join(work, `data-${run}.tar`);
    runs.push(await timed('tar', ['-cf', file, '-C', dataDir, '.']));
    if (run > 0) await rm(file);
  }
  return runs;
}

/**
 * `tar -x` of the first tar archive into an empty directory, RUNS times; with `synced`, each file then fsynced
 * (coreutils `sync FILE...`) and the folder last, as the restore leaves it: what `tar -x` costs made as durable.
 */
async function timeUntar(work: string, synced = false): Promise<Run[]> {
  const runs: Run[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const target = join(work, `untar-${run}`);
    await mkdir(target);
    const archive = join(work, 'data-0.tar');
    runs.push(
      synced
        ? await timed('sh', [
            '-c',
            'tar -xf "$1" -C "$2" && find "$2" -type f -exec sync {} + && sync "$2"',
            'untar',
            archive,
            target,
          ])
        : await timed('tar', ['-xf', archive, '-C', target]),
    );
    await rm(target, { recursive: true, force: true });
  }
  return runs;
}

interface BackupRuns {
  /** The CLI's runs, with the server's CPU seconds of the same backup added to each one's. */
  runs: Run[];
  serverCpuSeconds: number[];
  rssRiseBytes: number;
  archiveBytes: number;
  /** The slowest answer to a request sent during a backup (one every 100 ms), in seconds. */
  slowestAnswerSeconds: number;
}

/** Requests every 100 ms until `done` settles: each must be answered 200; answers the slowest one's seconds. */
async function probeWhile(url: string, done: Promise<unknown>): Promise<number> {
  const headers = { maxauth: Buffer.from(`MAXADMIN:${BENCH_ADMIN_PASSWORD}`).toString('base64') };
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => undefined);
  let slowest = 0;
  while (!finished) {
    const asked = performance.now();
    const answer = await fetch(`${url}/oslc/os/mxapiasset?lean=1&oslc.pageSize=1`, { headers });
    await answer.arrayBuffer();
    if (answer.status !== 200) throw new Error(`a request during the backup answered ${answer.status}`);
    slowest = Math.max(slowest, (performance.now() - asked) / 1000);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return slowest;
}

/**
 * The least any `eas backup` can take on this machine, whatever its code: the archive's bytes, in the page cache,
 * handed by a bare `node:http` server (1 MiB reads, no checksum, no zip) to `curl -o` on the same disk, plus the start
 * of a Node process that does nothing (the CLI is one). Against `tar` of the stopped directory.
 */
export interface BackupFloor {
  /** `curl -o` of the archive from the bare server: median seconds. */
  transferSeconds: number;
  /** `node -e 0`: median seconds. */
  nodeStartSeconds: number;
  /** The two together over `tar`'s median. */
  ratio: number;
}

/**
 * A process of its own (plain `node`, as the service's is) serving the file named by its argument to every request
 * as `node:http` does at its simplest: 1 MiB read synchronously, then written; it prints its port.
 */
const BARE_FILE_SERVER = `
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createServer } from 'node:http';
const server = createServer((request, response) => {
  const fd = openSync(process.argv[1], 'r');
  const size = fstatSync(fd).size;
  response.writeHead(200, { 'content-length': size });
  let position = 0;
  const pump = () => {
    while (position < size) {
      const piece = Buffer.allocUnsafe(${MIB});
      const read = readSync(fd, piece, 0, piece.length, position);
      position += read;
      if (!response.write(piece.subarray(0, read))) return void response.once('drain', pump);
    }
    closeSync(fd);
    response.end();
  };
  pump();
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

async function timeFloor(archive: string, work: string, tar: readonly Run[]): Promise<BackupFloor> {
  const server = spawn(process.execPath, ['--input-type=module', '-e', BARE_FILE_SERVER, archive], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const [port] = (await once(server.stdout, 'data')) as [Buffer];
    const url = `http://127.0.0.1:${port.toString().trim()}/`;
    const transfers: Run[] = [];
    const starts: Run[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const file = join(work, 'floor.zip');
      transfers.push(await timed('curl', ['-s', '-f', '-o', file, url]));
      await rm(file);
      starts.push(await timed(process.execPath, ['-e', '0']));
    }
    const transferSeconds = median(transfers.map((run) => run.seconds));
    const nodeStartSeconds = median(starts.map((run) => run.seconds));
    const ratio = (transferSeconds + nodeStartSeconds) / median(tar.map((run) => run.seconds));
    return { transferSeconds, nodeStartSeconds, ratio };
  } finally {
    server.kill();
  }
}

/** `eas backup` (the compiled CLI under plain node) against the running server, RUNS times; its RSS sampled. */
async function timeBackups(
  dataDir: string,
  work: string,
  log: (message: string) => void,
): Promise<BackupRuns> {
  const server = await startServer(
    { script: 'eas.ts', env: { BENCH_STORAGE: 'pglite', BENCH_PGLITE_DIR: dataDir } },
    { profile: false },
  );
  const url = `${server.baseUrl}${CONTEXT_ROOT}`;
  const env = { EAS_USER: 'MAXADMIN', EAS_PASSWORD: BENCH_ADMIN_PASSWORD };
  const backup = (file: string) =>
    timed(process.execPath, [cliScript, '--url', url, 'backup', '--quiet', file], env);
  try {
    // A warm-up backup: the first login and the first read of the files are not what is measured.
    await backup(join(work, 'warm.zip'));
    await rm(join(work, 'warm.zip'));
    const result: BackupRuns = {
      runs: [],
      serverCpuSeconds: [],
      rssRiseBytes: 0,
      archiveBytes: 0,
      slowestAnswerSeconds: 0,
    };
    for (let run = 0; run < RUNS; run += 1) {
      const file = join(work, `backup-${run}.zip`);
      const before = await rssOf(server.pid);
      const cpuBefore = await server.cpuMicroseconds();
      const sampler = sampleMemory(server.pid);
      const running = backup(file);
      const slowest = await probeWhile(url, running);
      const cli = await running;
      const serverCpu = ((await server.cpuMicroseconds()) - cpuBefore) / 1e6;
      result.runs.push({ ...cli, cpuSeconds: cli.cpuSeconds + serverCpu });
      result.serverCpuSeconds.push(serverCpu);
      result.slowestAnswerSeconds = Math.max(result.slowestAnswerSeconds, slowest);
      result.rssRiseBytes = Math.max(result.rssRiseBytes, (await sampler.stop()) - before);
      result.archiveBytes = (await stat(file)).size;
      if (run > 0) await rm(file);
      log(`backup: run ${run + 1}: ${cli.seconds.toFixed(2)} s, server CPU ${serverCpu.toFixed(2)} s`);
    }
    return result;
  } finally {
    await server.stop();
  }
}

/** `npm run admin -- restore` (bundled, plain node) of the first archive into an empty directory, RUNS times. */
async function timeRestores(work: string): Promise<{ runs: Run[]; rssRiseBytes: number }> {
  const env = { EAS_MASTER_KEY: BENCH_MASTER_KEY, EAS_LOG_LEVEL: 'warn' };
  const idle = await timed(process.execPath, [adminScript, 'restore', '--help'], env);
  const runs: Run[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const target = join(work, `restored-${run}`);
    runs.push(
      await timed(
        process.execPath,
        [adminScript, 'restore', join(work, 'backup-0.zip'), '--data-dir', target],
        env,
      ),
    );
    await rm(target, { recursive: true, force: true });
  }
  const peak = Math.max(...runs.map((run) => run.peakBytes));
  return { runs, rssRiseBytes: Math.max(0, peak - idle.peakBytes) };
}

/**
 * A PGlite deployment of `assets` assets: `tar` of its stopped data directory against `eas backup` from the running
 * server (its RSS sampled), and `tar -x` against `npm run admin -- restore` into an empty directory.
 */
export async function backupBenchmark(settings: BackupBenchSettings): Promise<BackupBenchResult> {
  const { log } = settings;
  const dataDir = join(compiledDir, 'backup', `pglite-${settings.assets}`);
  await compileServers(log);
  await bundleAdmin();
  if (!existsSync(cliScript) || !existsSync(adminScript))
    throw new Error(`the compiled CLIs are missing (${cliScript}, ${adminScript})`);
  await prepareDataDir(dataDir, settings);
  const work = await mkdtemp(join(tmpdir(), 'eas-bench-backup-'));
  try {
    // The server opens the directory once first (it migrates and seeds nothing new): tar then copies what
    // the backup reads.
    await (
      await startServer(
        { script: 'eas.ts', env: { BENCH_STORAGE: 'pglite', BENCH_PGLITE_DIR: dataDir } },
        { profile: false },
      )
    ).stop();
    const { bytes, files } = await sizeOf(dataDir);
    log(`backup: ${(bytes / MIB).toFixed(0)} MiB in ${files} files; tar`);
    const tar = await timeTar(dataDir, work);
    log('backup: eas backup against the running server');
    const backups = await timeBackups(dataDir, work, log);
    log('backup: tar -x, then restore');
    const untar = await timeUntar(work);
    const untarSynced = await timeUntar(work, true);
    const restores = await timeRestores(work);
    log('backup: the floor (a bare node:http server to curl, a Node start)');
    const floor = await timeFloor(join(work, 'backup-0.zip'), work, tar);
    return summarize(
      settings.assets,
      { bytes, files },
      { tar, untar, untarSynced, backups, restores, floor },
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function compare(runs: readonly Run[], baseline: readonly Run[]): Comparison {
  const seconds = median(runs.map((run) => run.seconds));
  const cpuSeconds = median(runs.map((run) => run.cpuSeconds));
  const baselineSeconds = median(baseline.map((run) => run.seconds));
  const baselineCpuSeconds = median(baseline.map((run) => run.cpuSeconds));
  const pick = ({ seconds, cpuSeconds }: Run) => ({ seconds, cpuSeconds });
  return {
    seconds,
    cpuSeconds,
    baselineSeconds,
    baselineCpuSeconds,
    ratio: seconds / baselineSeconds,
    cpuRatio: cpuSeconds / baselineCpuSeconds,
    runs: runs.map(pick),
    baselineRuns: baseline.map(pick),
  };
}

function summarize(
  assets: number,
  size: { bytes: number; files: number },
  runs: {
    tar: Run[];
    untar: Run[];
    untarSynced: Run[];
    backups: BackupRuns;
    restores: { runs: Run[]; rssRiseBytes: number };
    floor: BackupFloor;
  },
): BackupBenchResult {
  const backup = compare(runs.backups.runs, runs.tar);
  const restore = compare(runs.restores.runs, runs.untar);
  const restoreSynced = compare(runs.restores.runs, runs.untarSynced);
  const backupRssRiseMiB = Math.max(0, runs.backups.rssRiseBytes) / MIB;
  const restoreRssRiseMiB = runs.restores.rssRiseBytes / MIB;
  const passed =
    backup.ratio <= BACKUP_TIME_TARGET &&
    restore.ratio <= BACKUP_TIME_TARGET &&
    backupRssRiseMiB < BACKUP_RSS_LIMIT_MIB &&
    restoreRssRiseMiB < BACKUP_RSS_LIMIT_MIB;
  return {
    assets,
    dataBytes: size.bytes,
    files: size.files,
    archiveBytes: runs.backups.archiveBytes,
    backup,
    serverCpuSeconds: runs.backups.serverCpuSeconds,
    restore,
    restoreAgainstSynced: restoreSynced,
    floor: runs.floor,
    backupRssRiseMiB,
    restoreRssRiseMiB,
    slowestAnswerSeconds: runs.backups.slowestAnswerSeconds,
    verdict: passed ? 'PASS' : 'FAIL',
  };
}

function formatComparison(name: string, baseline: string, comparison: Comparison): string {
  const list = (values: readonly number[]) => values.map((value) => value.toFixed(2)).join(', ');
  return (
    `${name} ${comparison.seconds.toFixed(2)} s (${list(comparison.runs.map((run) => run.seconds))}; ` +
    `CPU ${comparison.cpuSeconds.toFixed(2)} s)  ${baseline} ${comparison.baselineSeconds.toFixed(2)} s ` +
    `(${list(comparison.baselineRuns.map((run) => run.seconds))}; CPU ${comparison.baselineCpuSeconds.toFixed(2)} s)  ` +
    `ratio ${comparison.ratio.toFixed(2)} (CPU ${comparison.cpuRatio.toFixed(2)})`
  );
}

export function formatBackup(result: BackupBenchResult): string {
  return [
    `backup: ${result.assets.toLocaleString('en-US')} assets, data directory ${(result.dataBytes / MIB).toFixed(0)} MiB ` +
      `in ${result.files} files, archive ${(result.archiveBytes / MIB).toFixed(0)} MiB (medians of ${RUNS} runs)`,
    `${formatComparison('eas backup', 'tar', result.backup)}  server RSS +${result.backupRssRiseMiB.toFixed(1)} MiB, ` +
      `server CPU ${result.serverCpuSeconds.map((value) => value.toFixed(2)).join(', ')} s, ` +
      `slowest answer meanwhile ${result.slowestAnswerSeconds.toFixed(2)} s`,
    `${formatComparison('restore', 'tar -x', result.restore)}  restore RSS +${result.restoreRssRiseMiB.toFixed(1)} MiB`,
    `${formatComparison('restore', 'tar -x + fsync', result.restoreAgainstSynced)}  (INFO)`,
    `floor: node:http to curl -o ${result.floor.transferSeconds.toFixed(2)} s + a Node start ` +
      `${result.floor.nodeStartSeconds.toFixed(2)} s = ` +
      `${(result.floor.transferSeconds + result.floor.nodeStartSeconds).toFixed(2)} s  ` +
      `tar ${result.backup.baselineSeconds.toFixed(2)} s  ratio ${result.floor.ratio.toFixed(2)}  ` +
      '(INFO: any backup through a Node server and a Node CLI, before it does anything of its own)',
    `targets: ratio <= ${BACKUP_TIME_TARGET}, RSS rise < ${BACKUP_RSS_LIMIT_MIB} MiB  ${result.verdict}`,
  ].join('\n');
}
