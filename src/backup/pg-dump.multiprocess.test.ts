import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import {
  startServer,
  stopServer,
  stopServersAndDropSchema,
  type ServerProcess,
} from '../../test/helpers/processes.js';
import { TEST_DATABASE_URL } from '../../test/helpers/storage.js';

/**
 * A PostgreSQL deployment backed up by `pg_dump` of its schema while it serves and restored by `pg_restore` into a
 * fresh database, exactly as docs/operations.md ("PostgreSQL: pg_dump of the schema") tells an operator: the restored
 * servers answer the original's API keys, its stored sessions and its sealed cookies, with the master key, and refuse
 * to start without it.
 */
const runFile = promisify(execFile);
const ADMIN_PASSWORD = 'pgdump-admin-pw';
const MASTER_KEY = 'pgdump-test-master-key-0123456789abcdef';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
/** A first start runs every migration and loads the demo data: slow on a loaded machine. */
const STARTUP_MS = 180_000;
const SKIP = TEST_DATABASE_URL
  ? false
  : 'PostgreSQL only: the pg_dump/pg_restore round trip runs when EAS_TEST_DATABASE_URL is set';

/** `name=value` of the response's cookie `name`. */
function cookieOf(response: Response, name: string): string {
  const line = response.headers.getSetCookie().find((cookie) => cookie.startsWith(`${name}=`));
  assert.ok(line, `the answer sets ${name}`);
  return line.split(';')[0]!;
}

/** The major version a client binary reports (`pg_dump (PostgreSQL) 15.20 ...`). */
async function binaryMajor(binary: string): Promise<number> {
  const { stdout } = await runFile(binary, ['--version']);
  const major = /\(PostgreSQL\)\s+(\d+)/.exec(stdout)?.[1];
  assert.ok(major, `${binary} --version: ${stdout}`);
  return Number(major);
}

async function onDatabase<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function whoami(server: ServerProcess, headers: Record<string, string>): Promise<Response> {
  return fetch(`${server.base}/oslc/whoami`, { headers });
}

async function deploymentOf(server: ServerProcess): Promise<string> {
  const response = await fetch(`${server.base}/oslc/systeminfo?lean=1`, { headers: admin });
  assert.equal(response.status, 200);
  return ((await response.json()) as { deployment: { id: string } }).deployment.id;
}

async function assetDescription(server: ServerProcess, assetnum: string): Promise<string | undefined> {
  const where = encodeURIComponent(`assetnum="${assetnum}"`);
  const response = await fetch(
    `${server.base}/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,description&oslc.where=${where}`,
    { headers: admin },
  );
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { member: Array<{ description?: string }> }).member[0]?.description;
}

describe('PostgreSQL: pg_dump of the schema, pg_restore into a fresh database', { skip: SKIP }, () => {
  const url = TEST_DATABASE_URL!;
  const schema = `eas_pgdump_${process.pid}_${Date.now().toString(36)}`;
  // The same schema name in another database of the same server: the name is part of the dump.
  const restoredDatabase = `${schema}_restored`;
  const restoredUrl = (() => {
    const target = new URL(url);
    target.pathname = `/${restoredDatabase}`;
    return target.toString();
  })();
  let work: string;
  const servers: Array<ServerProcess | undefined> = [];

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'eas-pgdump-'));
  });
  after(async () => {
    await stopServersAndDropSchema(servers, url, schema);
    await onDatabase(url, (client) =>
      client.query(`drop database if exists "${restoredDatabase}" with (force)`),
    );
    await rm(work, { recursive: true, force: true });
  });

  test('the restored deployment serves its API keys, sessions and records with the master key, and not without', async () => {
    const serverMajor = await onDatabase(url, async (client) =>
      Number(
        (
          await client.query<{ num: string }>('select current_setting($1) as num', ['server_version_num'])
        ).rows[0]!.num.slice(0, -4),
      ),
    );
    for (const binary of ['pg_dump', 'pg_restore'])
      assert.equal(
        await binaryMajor(binary),
        serverMajor,
        `${binary} of the server's release (${serverMajor})`,
      );

    const source = await startServer({
      name: 'PGDSOURCE',
      databaseUrl: url,
      schema,
      adminPassword: ADMIN_PASSWORD,
      startupTimeoutMs: STARTUP_MS,
      env: { EAS_DEMO: '1', EAS_MASTER_KEY: MASTER_KEY, EAS_DATA_DIR: join(work, 'source') },
    });
    servers.push(source);
    const created = await fetch(`${source.base}/oslc/apitoken/create`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: '{"expiration": -1}',
    });
    assert.equal(created.status, 200, await created.clone().text());
    const { apikey } = (await created.json()) as { apikey: string };
    // A login's session (stored), used once before the dump; and a sealed cookie of a per-request answer, never
    // replayed before it (it opens only with the master key).
    const login = await fetch(`${source.base}/oslc/login`, { method: 'POST', headers: admin });
    assert.equal(login.status, 200);
    const session = cookieOf(login, 'JSESSIONID');
    assert.equal((await whoami(source, { cookie: session })).status, 200);
    const sealed = cookieOf(await whoami(source, admin), 'JSESSIONID');
    assert.match(sealed, /^JSESSIONID=s\./);
    const asset = await fetch(`${source.base}/oslc/os/mxapiasset?lean=1`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ assetnum: 'PGDUMP1', siteid: 'BEDFORD', description: 'before the dump' }),
    });
    assert.equal(asset.status, 201, await asset.clone().text());
    const identity = await deploymentOf(source);

    // The dump is taken while the source serves; written after it, nothing is in it.
    const dump = join(work, 'eas.dump');
    await runFile('pg_dump', [
      '--format=custom',
      `--schema=${schema}`,
      '--no-owner',
      '--no-privileges',
      `--file=${dump}`,
      url,
    ]);
    const later = await fetch(`${source.base}/oslc/os/mxapiasset?lean=1`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ assetnum: 'PGDUMP2', siteid: 'BEDFORD', description: 'after the dump' }),
    });
    assert.equal(later.status, 201);

    await onDatabase(url, (client) => client.query(`create database "${restoredDatabase}"`));
    await runFile('pg_restore', [
      '--no-owner',
      '--no-privileges',
      '--exit-on-error',
      `--dbname=${restoredUrl}`,
      dump,
    ]);

    // Without the master key (a data directory of its own, where a new key file is made) the restored deployment
    // does not start: its sealed keys would not open.
    await assert.rejects(
      startServer({
        name: 'PGDNOKEY',
        databaseUrl: restoredUrl,
        schema,
        adminPassword: ADMIN_PASSWORD,
        startupTimeoutMs: STARTUP_MS,
        env: { EAS_DATA_DIR: join(work, 'nokey') },
      }),
      /EAS_MASTER_KEY.*does not match the master key that sealed the stored API keys/s,
    );
    const restored = await startServer({
      name: 'PGDRESTORED',
      databaseUrl: restoredUrl,
      schema,
      adminPassword: ADMIN_PASSWORD,
      startupTimeoutMs: STARTUP_MS,
      env: { EAS_MASTER_KEY: MASTER_KEY, EAS_DATA_DIR: join(work, 'restored') },
    });
    servers.push(restored);

    const byKey = await whoami(restored, { apikey });
    assert.equal(byKey.status, 200, 'the original API key is answered');
    for (const cookie of [session, sealed]) {
      const bySession = await whoami(restored, { cookie });
      assert.equal(bySession.status, 200, `${cookie.slice(0, 14)}... answers after the restore`);
      assert.equal(((await bySession.json()) as { userid: string }).userid, 'MAXADMIN');
    }
    assert.equal(await deploymentOf(restored), identity, 'the deployment identity is kept');
    assert.equal(await assetDescription(restored, 'PGDUMP1'), 'before the dump');
    assert.equal(
      await assetDescription(restored, 'PGDUMP2'),
      undefined,
      'written after the dump: not restored',
    );

    // The restored copy is a deployment of its own: a logout there leaves the original's session alone.
    const logout = await fetch(`${restored.base}/oslc/logout`, {
      method: 'POST',
      headers: { cookie: session },
    });
    assert.ok(logout.status < 300, `logout answered ${logout.status}`);
    assert.equal((await whoami(restored, { cookie: session })).status, 401);
    assert.equal((await whoami(source, { cookie: session })).status, 200);
    await stopServer(restored);
  });
});
