import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const STARTUP_TIMEOUT_MS = 60_000;
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+\/maximo)/;

/** A real server process (`src/server.ts`), for the tests of what several processes on one database share. */
export interface ServerProcess {
  name: string;
  child: ChildProcess;
  /** `http://127.0.0.1:<port>/maximo` */
  base: string;
  /** Everything the process wrote so far, its log included. */
  output: () => string;
}

export interface ServerSettings {
  /** EAS_SERVER_NAME, also the name in failure messages. */
  name: string;
  /** PostgreSQL; without it the server opens PGlite in `EAS_DATA_DIR` (given in `env`). */
  databaseUrl?: string;
  /** EAS_DB_SCHEMA: one schema per test file, shared by its processes (PostgreSQL only). */
  schema?: string;
  adminPassword: string;
  /** More environment (EAS_MASTER_KEY, EAS_LOG_LEVEL, ...). */
  env?: Record<string, string>;
  /** How long the start may take (default 60 s): longer for a process that opens a copied PGlite directory. */
  startupTimeoutMs?: number;
  /** The tree whose `src/server.ts` runs (default this one): an earlier release's (test/helpers/releases.ts). */
  root?: string;
}

/** Starts a server on PostgreSQL on a free port; resolves when it listens, rejects when it exits or hangs. */
export async function startServer(settings: ServerSettings): Promise<ServerProcess> {
  const { name } = settings;
  const { DATABASE_URL: _url, EAS_DB_SCHEMA: _schema, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: settings.root ?? root,
    env: {
      ...inherited,
      ...(settings.databaseUrl !== undefined && { DATABASE_URL: settings.databaseUrl }),
      ...(settings.schema !== undefined && { EAS_DB_SCHEMA: settings.schema }),
      EAS_SERVER_NAME: name,
      EAS_ADMIN_PASSWORD: settings.adminPassword,
      EAS_DEMO: '0',
      EAS_LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: '0',
      ...settings.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const startupTimeoutMs = settings.startupTimeoutMs ?? STARTUP_TIMEOUT_MS;
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running: it would go on writing into a data directory the test is about to remove.
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start in ${startupTimeoutMs / 1000} s:\n${output}`));
    }, startupTimeoutMs);
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
      reject(new Error(`${name} exited with ${String(code)}:\n${output}`));
    });
  });
  return { name, child, base, output: () => output };
}

/** SIGTERM, and waits for the exit. */
export async function stopServer(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = once(server.child, 'exit');
  server.child.kill('SIGTERM');
  await exited;
}

/**
 * Runs `request` while `server` is stopped (SIGSTOP: it hears nothing), resuming it after `resumeAfterMs`; answers
 * the response and whether it came only after the resume, as a change confirmed by every process must.
 */
export async function whileStopped(
  server: ServerProcess,
  resumeAfterMs: number,
  request: () => Promise<Response>,
): Promise<{ response: Response; afterResume: boolean }> {
  server.child.kill('SIGSTOP');
  let resumedAt: number | undefined;
  const resume = setTimeout(() => {
    resumedAt = Date.now();
    server.child.kill('SIGCONT');
  }, resumeAfterMs);
  try {
    const response = await request();
    const answeredAt = Date.now();
    return { response, afterResume: resumedAt !== undefined && answeredAt >= resumedAt };
  } finally {
    clearTimeout(resume);
    server.child.kill('SIGCONT');
  }
}

/** Stops the servers that started (SIGTERM, each awaited) and drops the schema they shared. */
export async function stopServersAndDropSchema(
  servers: readonly (ServerProcess | undefined)[],
  databaseUrl: string,
  schema: string,
): Promise<void> {
  await Promise.all(servers.filter((server) => server !== undefined).map(stopServer));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/**
 * Polls until another instance has heard of a change through the change bus, for at most 5 s. The bus delivers
 * within about a second (docs/security.md); a unit test asserts only that the change arrives: each check here
 * verifies a password (scrypt, about 40 ms on a quiet machine), and on a loaded one a few checks alone outlast that
 * second.
 */
export async function heardEverywhere(what: string, check: () => Promise<boolean>): Promise<void> {
  await within(5_000, check).catch(() => assert.fail(`${what}: not heard within 5 s`));
}

/**
 * Polls until `check` holds (what another process learns through the change bus); answers the milliseconds it took,
 * or fails after the deadline.
 */
export async function within(deadlineMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > deadlineMs) assert.fail(`not within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
