import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import {
  startServer,
  stopServer,
  stopServersAndDropSchema,
  type ServerProcess,
} from '../../test/helpers/processes.js';
import { releaseTree } from '../../test/helpers/releases.js';
import { SCHEMA_LEVEL } from './process-registry.js';

/**
 * The rolling upgrade (docs/deploy.md, "Rolling upgrade") with real processes on one PostgreSQL schema behind
 * HAProxy: a process of the previous release, then this tree's, under continuous load. Without
 * EAS_TEST_DATABASE_URL this file registers nothing (PGlite is one process).
 *
 * PREVIOUS is the last commit before migration 0032 (its newest is 0031-audit-trail): from it to this tree, 0032
 * and 0033 are expand migrations and 0034 a contract one. BEFORE_OFFLINE is the last commit of main before
 * 0026-0029 landed: 0029 rewrites the ticket's key (offline), so no rolling upgrade crosses it. Both trees come from
 * this repository's history (`git archive`, kept under .cache/releases) and run on this tree's node_modules.
 */
const PREVIOUS = '671b85ca9bc92fcafc861fe116385a7f00829234';
const BEFORE_OFFLINE = '72f2d2cc299ff85eb43111994bc2916709862299';

const url = process.env.EAS_TEST_DATABASE_URL;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ADMIN_PASSWORD = 'rolling-admin-pw';
const MASTER_KEY = 'eas-rolling-upgrade-master-key-0123456789';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
const env = { EAS_MASTER_KEY: MASTER_KEY };

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (typeof address !== 'object' || address === null) throw new Error('no free port');
  return address.port;
}

async function query<T>(schema: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`set search_path to "${schema}"`);
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

/** When each migration was applied (the migrator's own record). */
async function appliedAt(schema: string): Promise<Map<string, Date>> {
  const rows = await query<{ name: string; timestamp: string }>(
    schema,
    'select name, timestamp from kysely_migration',
  );
  return new Map(rows.map((row) => [row.name, new Date(row.timestamp)]));
}

async function indexExists(schema: string, name: string): Promise<boolean> {
  const rows = await query<{ found: boolean }>(
    schema,
    `select to_regclass(quote_ident(current_schema()) || '.${name}') is not null as found`,
  );
  return rows[0]!.found;
}

/** `npm run admin -- <args>` of this tree on the schema: its exit code and output. */
async function adminCommand(schema: string, args: string[]): Promise<{ code: number; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/admin/main.ts', ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, EAS_DB_SCHEMA: schema, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, out };
}

/** HAProxy as docs/deploy.md shows it, in front of the given ports; answers its address and the process. */
async function startHaproxy(
  dir: string,
  ports: readonly number[],
): Promise<{ base: string; proxy: ChildProcess; log: () => string }> {
  const front = await freePort();
  const config = [
    'global',
    '  log stderr format raw local0 info',
    'defaults',
    '  log global',
    '  option httplog',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    // A health check slower than this while a migration runs must not take a process out at once.
    '  timeout check 2s',
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response',
    'frontend eas',
    `  bind 127.0.0.1:${front}`,
    '  default_backend eas',
    'backend eas',
    '  balance roundrobin',
    '  option httpchk GET /maximo/health/ready',
    '  http-response set-header X-Eas-Backend %s',
    ...ports.map((port, index) => `  server eas-${index} 127.0.0.1:${port} check inter 500ms fall 2 rise 1`),
    '',
  ].join('\n');
  await writeFile(join(dir, 'haproxy.cfg'), config);
  const proxy = spawn('haproxy', ['-f', join(dir, 'haproxy.cfg'), '-db'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  proxy.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  return { base: `http://127.0.0.1:${front}/maximo`, proxy, log: () => log };
}

/**
 * Requests through the balancer until stopped, in `lanes` loops: lane 0 creates service requests (without a site),
 * the others read assets and service requests; every failure is kept with what it got, every create counted.
 */
function continuousLoad(base: string, lanes: number) {
  const failures: string[] = [];
  const answeredBy = new Map<string, number>();
  let requests = 0;
  let created = 0;
  let running = true;
  const paths = ['/api/os/mxapiasset?lean=1&oslc.pageSize=2', '/api/os/mxapisr?lean=1&oslc.pageSize=2'];
  const send = (index: number, n: number) =>
    index === 0
      ? fetch(`${base}/api/os/mxapisr?lean=1`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify({ description: `Rolling upgrade ${n}` }),
        })
      : fetch(`${base}${paths[n % paths.length]}`, { headers: admin });
  const lane = async (index: number) => {
    for (let n = index; running; n++) {
      try {
        const response = await send(index, n);
        await response.text();
        requests++;
        const backend = response.headers.get('x-eas-backend') ?? '?';
        answeredBy.set(backend, (answeredBy.get(backend) ?? 0) + 1);
        if (response.status === 201) created++;
        else if (response.status !== 200 || index === 0)
          failures.push(`HTTP ${response.status} from ${backend}`);
      } catch (error) {
        requests++;
        failures.push(String(error));
      }
    }
  };
  const done = Promise.all(Array.from({ length: lanes }, (_, index) => lane(index)));
  return {
    failures,
    answeredBy,
    requests: () => requests,
    created: () => created,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Waits until `check` holds, polling; fails after `ms`. */
async function until(ms: number, what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const server = (name: string, schema: string, port: number, tree?: string) =>
  startServer({
    name,
    databaseUrl: url!,
    schema,
    adminPassword: ADMIN_PASSWORD,
    env: { ...env, PORT: String(port) },
    ...(tree !== undefined && { root: tree }),
  });

if (url) {
  describe('rolling upgrade on one PostgreSQL schema', () => {
    const started: ServerProcess[] = [];
    const schemas: string[] = [];
    const cleanups: Array<() => Promise<void>> = [];
    const newSchema = () => {
      const schema = `eas_test_rolling_${process.pid}_${randomBytes(3).toString('hex')}`;
      schemas.push(schema);
      return schema;
    };

    after(async () => {
      for (const cleanup of cleanups) await cleanup();
      for (const schema of schemas) await stopServersAndDropSchema(started, url, schema);
    });

    test('the previous release is replaced behind HAProxy under load: expand first, contract after', async () => {
      const schema = newSchema();
      const [tree, oldPort, newPort] = await Promise.all([releaseTree(PREVIOUS), freePort(), freePort()]);
      const old = await server('OLD', schema, oldPort, tree);
      started.push(old);
      assert.equal([...(await appliedAt(schema)).keys()].sort().at(-1), '0031-audit-trail');

      const check = await adminCommand(schema, ['upgrade', 'check']);
      assert.equal(check.code, 0, check.out);
      assert.match(check.out, /Server processes registered: 1 at level before levels/);
      assert.match(check.out, /0032-attachments-owner-delete\s+expand/);
      assert.match(check.out, /0034-upgrade-tkstatus-index\s+contract/);
      assert.match(check.out, /Rolling upgrade: possible\./);

      const dir = await mkdtemp(join(tmpdir(), 'eas-rolling-'));
      const { base, proxy, log } = await startHaproxy(dir, [oldPort, newPort]);
      cleanups.push(async () => {
        proxy.kill('SIGTERM');
        await rm(dir, { recursive: true, force: true });
      });
      // Load from the moment HAProxy has found the old process up (its first health check).
      await until(10_000, 'HAProxy answers through the old process', async () => {
        const response = await fetch(`${base}/health/ready`).catch(() => undefined);
        await response?.text();
        return response?.status === 200;
      });
      const load = continuousLoad(base, 4);

      // The new process migrates: the expand migrations at once, the contract one not while OLD serves.
      const first = await server('NEW1', schema, newPort);
      started.push(first);
      let applied = await appliedAt(schema);
      assert.ok(applied.has('0032-attachments-owner-delete') && applied.has('0033-upgrade-migration-phases'));
      assert.ok(!applied.has('0034-upgrade-tkstatus-index'));
      assert.ok(await indexExists(schema, 'tkstatus_ticketid'));
      await until(10_000, 'both processes answer', () => load.answeredBy.has('eas-1'));
      const beforeStop = load.requests();
      await until(10_000, 'requests on both releases', () => load.requests() > beforeStop + 40);

      // The old process stops; the new release's second process takes its place (its port).
      await stopServer(old);
      const oldGone = new Date();
      const servedWhileOne = load.requests();
      await until(10_000, 'requests while one process serves', () => load.requests() > servedWhileOne + 40);
      assert.ok(
        !(await appliedAt(schema)).has('0034-upgrade-tkstatus-index'),
        'no contract before a restart',
      );
      const second = await server('NEW2', schema, oldPort);
      started.push(second);
      applied = await appliedAt(schema);
      assert.ok(applied.get('0034-upgrade-tkstatus-index')! >= oldGone, 'the contract ran after OLD stopped');
      assert.ok(!(await indexExists(schema, 'tkstatus_ticketid')));
      const afterContract = load.requests();
      await until(10_000, 'requests after the contract', () => load.requests() > afterContract + 40);
      await load.stop();

      const failed = log()
        .split('\n')
        .filter((line) => / 50\d /.test(line));
      assert.deepEqual(
        load.failures,
        [],
        `${load.failures.length} of ${load.requests()} failed:\n${failed.join('\n')}`,
      );
      const tickets = await query<{ n: number }>(schema, `select count(*)::int as n from ticket`);
      assert.ok(load.created() > 0);
      assert.equal(tickets[0]!.n, load.created(), 'every create acknowledged is stored once');
      const phases = await query<{ name: string; phase: string }>(
        schema,
        `select name, phase from easmigration`,
      );
      assert.equal(phases.find((row) => row.name === '0034-upgrade-tkstatus-index')?.phase, 'contract');
      const again = await adminCommand(schema, ['upgrade', 'check']);
      assert.equal(again.code, 0, again.out);
      assert.ok(
        again.out.includes(`registered: 2 at level ${SCHEMA_LEVEL}.\nPending migrations: none.`),
        again.out,
      );
    });

    test('upgrade check says no across an offline migration, and this release refuses to start', async () => {
      const schema = newSchema();
      const [tree, port] = await Promise.all([releaseTree(BEFORE_OFFLINE), freePort()]);
      started.push(await server('OLDER', schema, port, tree));

      const check = await adminCommand(schema, ['upgrade', 'check']);
      assert.equal(check.code, 4, check.out);
      assert.match(
        check.out,
        /Rolling upgrade: not possible: migration 0029-ticket-optional-site \(offline\) rewrites what the running release uses and cannot run while 1 process\(es\) of it serve the schema/,
      );
      const before = await appliedAt(schema);

      const refused = await server('REFUSED', schema, await freePort()).then(
        () => assert.fail('a process of this release started over a pending offline migration'),
        (error: Error) => error.message,
      );
      assert.match(refused, /exited with 4/);
      assert.match(refused, /eas: start-up refused: migration 0029-ticket-optional-site \(offline\)/);
      assert.deepEqual(
        [...(await appliedAt(schema)).keys()].sort(),
        [...before.keys()].sort(),
        'nothing migrated',
      );
    });
  });
}
