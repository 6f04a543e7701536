import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { TEST_DATABASE_URL } from './helpers/storage.js';

/**
 * The real process, started as an operator starts it: `node --import tsx src/server.ts` with its configuration in
 * the environment. Start-up, the README query, a restart on the same data, and the ways start-up must fail.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN_PASSWORD = 'admin-process-pw';
const DEMO_PASSWORD = 'demo-process-pw';
// A first start loads the demo data; next to the other real-process tests on a busy machine that can pass 30 s.
const STARTUP_TIMEOUT_MS = 60_000;
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+\/maximo)\b/;

/** The parent's environment without any setting of the service, so that only what a test passes applies. */
function cleanEnvironment(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('EAS_') || ['PORT', 'HOST', 'DATABASE_URL'].includes(name)) continue;
    env[name] = value;
  }
  return { ...env, EAS_LOG_LEVEL: 'warn', ...settings };
}

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

class ServerProcess {
  stdout = '';
  stderr = '';
  readonly finished: Promise<Finished>;
  private readonly child: ChildProcess;

  constructor(settings: Record<string, string>) {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: root,
      env: cleanEnvironment(settings),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.finished = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        // Output still buffered in the pipes arrives before 'close'.
        this.child.on('close', () => resolve({ code, signal, stdout: this.stdout, stderr: this.stderr }));
      });
    });
  }

  /** The base address the process printed once it listens; fails if it exits or takes too long instead. */
  async listening(): Promise<string> {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    let exited = false;
    void this.finished.then(() => (exited = true));
    while (Date.now() < deadline) {
      const match = LISTENING.exec(this.stdout);
      if (match) return match[1]!;
      if (exited) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    this.kill('SIGKILL');
    throw new Error(`the server did not start\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
  }

  kill(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** Stops the process as a service manager does and waits for it to finish. */
  async stop(): Promise<Finished> {
    this.kill('SIGTERM');
    const timer = setTimeout(() => this.kill('SIGKILL'), 10_000);
    try {
      return await this.finished;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Runs a start-up that must fail, and answers how it ended. */
async function failedStart(settings: Record<string, string>): Promise<Finished> {
  const server = new ServerProcess(settings);
  const timer = setTimeout(() => server.kill('SIGKILL'), STARTUP_TIMEOUT_MS);
  try {
    return await server.finished;
  } finally {
    clearTimeout(timer);
  }
}

const credentials = (userid: string, password: string) => ({
  maxauth: Buffer.from(`${userid}:${password}`).toString('base64'),
});
const admin = credentials('MAXADMIN', ADMIN_PASSWORD);

interface Counts {
  assets: number;
  locations: number;
  workOrders: number;
  items: number;
}

async function counts(base: string): Promise<Counts> {
  const count = async (structure: string) => {
    const response = await fetch(`${base}/oslc/os/${structure}?count=1&lean=1`, { headers: admin });
    assert.equal(response.status, 200, `count of ${structure}`);
    return Number(((await response.json()) as { totalCount: number }).totalCount);
  };
  return {
    assets: await count('mxapiasset'),
    locations: await count('mxapioperloc'),
    workOrders: await count('mxapiwodetail'),
    items: await count('mxapiitem'),
  };
}

/** Starts, queries, writes, stops and starts again on the same storage; answers nothing, asserts everything. */
async function restartKeepsRecords(settings: Record<string, string>): Promise<void> {
  const first = new ServerProcess(settings);
  const base = await first.listening();
  let location: string;
  let before: Counts;
  try {
    const readme = await fetch(
      `${base}/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,status&oslc.pageSize=2`,
      {
        headers: admin,
      },
    );
    assert.equal(readme.status, 200);
    assert.equal(readme.headers.get('content-type'), 'application/json');
    const members = ((await readme.json()) as { member: Array<Record<string, unknown>> }).member;
    assert.equal(members.length, 2);
    for (const member of members) {
      assert.equal(typeof member.assetnum, 'string');
      assert.equal(typeof member.status, 'string');
    }
    before = await counts(base);
    assert.ok(before.assets > 0 && before.locations > 0 && before.workOrders > 0, 'the demo data is loaded');

    const created = await fetch(`${base}/oslc/os/mxapiasset?lean=1`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ assetnum: 'RESTART1', siteid: 'BEDFORD', description: 'Survives a restart' }),
    });
    assert.equal(created.status, 201, await created.text());
    location = String(created.headers.get('location'));
    assert.ok(location.startsWith(`${base}/oslc/os/mxapiasset/_`), location);
  } finally {
    const stopped = await first.stop();
    assert.equal(stopped.code, 0, `SIGTERM ends the process cleanly\n${stopped.stderr}`);
  }

  // The second start also serves the metrics on a port of their own (EAS_METRICS_PORT, docs/operations.md).
  const second = new ServerProcess({ ...settings, EAS_METRICS_PORT: '0' });
  const secondBase = await second.listening();
  try {
    const metrics = /Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(second.stdout)?.[1];
    assert.ok(metrics, second.stdout);
    const scraped = await fetch(metrics);
    assert.equal(scraped.status, 200);
    assert.match(await scraped.text(), /^# TYPE eas_http_requests_total counter$/m);
    assert.equal(
      (await fetch(`${secondBase}/metrics`, { headers: admin })).status,
      404,
      'not on the API port',
    );
    const path = new URL(location).pathname;
    const read = await fetch(`${secondBase.replace(/\/maximo$/, '')}${path}?lean=1`, { headers: admin });
    assert.equal(read.status, 200);
    const asset = (await read.json()) as Record<string, unknown>;
    assert.equal(asset.assetnum, 'RESTART1');
    assert.equal(asset.description, 'Survives a restart');
    assert.deepEqual(await counts(secondBase), { ...before, assets: before.assets + 1 });
    // The demo users keep their passwords: the second start did not seed again.
    const wilson = await fetch(`${secondBase}/oslc/os/mxapiasset?lean=1&oslc.pageSize=1`, {
      headers: credentials('WILSON', DEMO_PASSWORD),
    });
    assert.equal(wilson.status, 200);
  } finally {
    const stopped = await second.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
  }
}

describe('the server process', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  async function temporaryDirectory(): Promise<string> {
    const directory = await mkdtemp(join(tmpdir(), 'eas-process-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    return directory;
  }

  /** A fresh PostgreSQL schema of EAS_TEST_DATABASE_URL, dropped at the end. */
  async function temporarySchema(prepare?: string): Promise<string> {
    const schema = `eas_process_${randomBytes(4).toString('hex')}`;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(`create schema ${schema}`);
      if (prepare) await client.query(`set search_path = ${schema}; ${prepare}`);
    } finally {
      await client.end();
    }
    cleanups.push(async () => {
      const dropper = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await dropper.connect();
      await dropper.query(`drop schema if exists ${schema} cascade`);
      await dropper.end();
    });
    return schema;
  }

  const demo = {
    PORT: '0',
    EAS_DEMO: '1',
    EAS_ADMIN_PASSWORD: ADMIN_PASSWORD,
    EAS_DEMO_PASSWORD: DEMO_PASSWORD,
  };

  // On both passes: the PostgreSQL pass runs under another Node line (.ci/run), and this is where it starts PGlite.
  test('a restart on the same data directory keeps every record', async () => {
    await restartKeepsRecords({ ...demo, EAS_DATA_DIR: await temporaryDirectory() });
  });

  if (TEST_DATABASE_URL) {
    test('a restart on the same PostgreSQL schema keeps every record', async () => {
      const schema = await temporarySchema();
      await restartKeepsRecords({
        ...demo,
        DATABASE_URL: TEST_DATABASE_URL!,
        EAS_DB_SCHEMA: schema,
        EAS_DATA_DIR: await temporaryDirectory(),
      });
    });
  }

  /** Where a process of this pass keeps its data: a data directory, or a fresh schema beside one. */
  async function storageSettings(): Promise<Record<string, string>> {
    const dataDir = { EAS_DATA_DIR: await temporaryDirectory() };
    if (!TEST_DATABASE_URL) return dataDir;
    return { ...dataDir, DATABASE_URL: TEST_DATABASE_URL, EAS_DB_SCHEMA: await temporarySchema() };
  }

  test('a first start that fails after creating the administrator has printed its password, and it works', async () => {
    const storage = await storageSettings();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    let result: Finished;
    try {
      result = await failedStart({ PORT: String(port), ...storage });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    assert.notEqual(result.code, 0, 'the port is taken');
    assert.match(result.stderr, /address is in use/, result.stderr);
    const printed = /MAXADMIN created with the generated password (\S+)/.exec(result.stdout);
    assert.ok(printed, `the password was printed before the failure: ${result.stdout}`);
    assert.match(result.stdout, /npm run admin -- reset-password MAXADMIN/);

    const again = new ServerProcess({ PORT: '0', ...storage });
    try {
      const base = await again.listening();
      assert.match(again.stdout, /lost: npm run admin -- reset-password MAXADMIN/);
      const whoami = await fetch(`${base}/oslc/whoami`, { headers: credentials('MAXADMIN', printed[1]!) });
      assert.equal(whoami.status, 200, 'the printed password is the one of MAXADMIN');
    } finally {
      await again.stop();
    }
  });

  test('a bad configuration value stops start-up, naming the variable', async () => {
    const dataDir = await temporaryDirectory();
    const cases = [
      ['PORT', 'abc'],
      ['PORT', '70000'],
      ['EAS_CONTEXT_ROOT', 'nope'],
      ['EAS_DEMO', 'perhaps'],
    ] as const;
    // Independent processes that stop before opening any storage: run side by side.
    const results = await Promise.all(
      cases.map(([variable, value]) => failedStart({ ...demo, EAS_DATA_DIR: dataDir, [variable]: value })),
    );
    for (const [index, [variable, value]] of cases.entries()) {
      const result = results[index]!;
      assert.notEqual(result.code, 0, `${variable}=${value} must not start`);
      assert.notEqual(result.code, null, `${variable}=${value} ends by itself`);
      assert.match(
        result.stderr,
        new RegExp(`\\b${variable}\\b`),
        `stderr names ${variable}: ${result.stderr}`,
      );
      assert.doesNotMatch(result.stderr, /^\s+at /m, 'a configuration error is a message, not a stack trace');
      assert.doesNotMatch(result.stdout, /listening/);
    }
  });

  test('a migration that fails stops the process with a message naming it', async () => {
    // A table of the first migration already there, not made by it: the migration cannot run over it.
    const conflict = 'create table organization (stranger integer)';
    let settings: Record<string, string>;
    let leftBehind: () => Promise<{ sequence: unknown; stranger: unknown }>;
    if (TEST_DATABASE_URL) {
      const schema = await temporarySchema(conflict);
      settings = {
        DATABASE_URL: TEST_DATABASE_URL,
        EAS_DB_SCHEMA: schema,
        EAS_DATA_DIR: await temporaryDirectory(),
      };
      leftBehind = async () => {
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try {
          const { rows } = await client.query<{ sequence: unknown; stranger: unknown }>(
            `select to_regclass('${schema}.rowstamp_seq') as sequence, to_regclass('${schema}.organization') as stranger`,
          );
          return rows[0]!;
        } finally {
          await client.end();
        }
      };
    } else {
      const dataDir = await temporaryDirectory();
      const prepared = new PGlite({ dataDir });
      await prepared.exec(conflict);
      await prepared.close();
      settings = { EAS_DATA_DIR: dataDir };
      leftBehind = async () => {
        const reopened = new PGlite({ dataDir });
        try {
          const { rows } = await reopened.query<{ sequence: unknown; stranger: unknown }>(
            `select to_regclass('rowstamp_seq')::text as sequence, to_regclass('organization')::text as stranger`,
          );
          return rows[0]!;
        } finally {
          await reopened.close();
        }
      };
    }
    const result = await failedStart({ ...demo, ...settings });
    assert.notEqual(result.code, 0);
    assert.notEqual(result.code, null, 'the process ends by itself');
    assert.match(result.stderr, /migration 0001-core failed/i, result.stderr);
    assert.match(result.stderr, /organization/, 'the message says what went wrong');
    assert.doesNotMatch(result.stderr, /^\s+at /m, 'a migration failure is a message, not a stack trace');
    assert.doesNotMatch(result.stdout, /listening/);
    const state = await leftBehind();
    assert.equal(state.sequence, null, 'the failed migration was rolled back');
    assert.notEqual(state.stranger, null, 'what was there before is untouched');
  });
});
