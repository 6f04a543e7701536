import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../app.js';
import { openStorage, type Storage } from './database.js';
import { describeFault, isDatabaseUnavailable, serializeError } from './faults.js';
import { json, maxauth, testConfig } from '../../test/helpers/app.js';
import { openTestStorage, TEST_DATABASE_URL } from '../../test/helpers/storage.js';
import { TcpProxy } from '../../test/helpers/tcp-proxy.js';

describe('database faults: classification and logging', () => {
  test('lost or refused connections are "unavailable"; SQL errors are not', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5432'), {
      code: 'ECONNREFUSED',
      address: '10.1.2.3',
      port: 5432,
    });
    assert.equal(isDatabaseUnavailable(refused), true);
    assert.equal(isDatabaseUnavailable(new AggregateError([refused], '')), true);
    assert.equal(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect')), true);
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('terminating'), { code: '57P01' })), true);
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('no'), { code: '08006' })), true);
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('dup'), { code: '23505' })), false);
    assert.equal(isDatabaseUnavailable(new Error('disk on fire')), false);
  });

  test('the logged form names no host, port, user, password or client object', () => {
    const client = { host: 'db.internal', user: 'eas', password: 'hunter2', database: 'prod' };
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5432'), {
      code: 'ECONNREFUSED',
      address: '10.1.2.3',
      port: 5432,
      client,
    });
    for (const text of [JSON.stringify(serializeError(refused)), describeFault(refused)]) {
      for (const secret of ['10.1.2.3', '5432', 'db.internal', 'hunter2', 'prod', '"user"']) {
        assert.ok(!text.includes(secret), `${secret} in ${text}`);
      }
      assert.match(text, /ECONNREFUSED/);
    }
  });
});

/**
 * The service on PostgreSQL through a relay the test can cut (the database unreachable) and whose backends it
 * can terminate (what a restart, a failover or a proxy's idle timeout does).
 */
describe('database faults on PostgreSQL', { skip: !TEST_DATABASE_URL }, () => {
  let fixtures: Storage;
  let storage: Storage;
  let app: FastifyInstance;
  let admin: pg.Client;
  const proxy = TcpProxy.forUrl(TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/x');
  const applicationName = `eas_faults_${process.pid}`;
  const log: string[] = [];
  const faults: string[] = [];

  before(async () => {
    fixtures = await openTestStorage();
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(fixtures.db);
    await proxy.up();
    const url = new URL(proxy.rewrite(TEST_DATABASE_URL!));
    url.searchParams.set('application_name', applicationName);
    storage = await openStorage({
      kind: 'postgres',
      url: url.toString(),
      schema: rows[0]!.schema,
      poolSize: 4,
      connectTimeoutMs: 1000,
      onFault: (description) => faults.push(description),
    });
    ({ app } = await buildApp(testConfig({ EAS_LOG_LEVEL: 'warn' }), storage, {
      write: (line) => void log.push(line),
    }));
    await app.ready();
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
  });
  after(async () => {
    await app?.close();
    await storage?.close();
    await proxy.down();
    await admin?.end();
    await fixtures?.close();
  });

  const list = () =>
    app.inject({ url: '/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=2', headers: maxauth('MAXADMIN') });

  async function until(what: string, check: () => Promise<boolean>): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.fail(`${what} did not happen`);
  }

  test('terminated backends: the process stays up and the pool replaces the connections', async () => {
    assert.equal((await list()).statusCode, 200);
    const { rows } = await admin.query<{ count: string }>(
      'select count(*)::text as count from (select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1) t',
      [applicationName],
    );
    assert.ok(Number(rows[0]!.count) >= 1, 'backends were terminated');
    const statuses: number[] = [];
    await until('a 200 after the termination', async () => {
      const status = (await list()).statusCode;
      statuses.push(status);
      return status === 200;
    });
    assert.ok(
      statuses.every((status) => status === 200 || status === 503),
      statuses.join(','),
    );
    assert.ok(faults.length >= 1, 'the lost connections were reported');
  });

  test('unreachable database: 503 EAS0503E, then recovery without restart; no write lost', async () => {
    await proxy.down();
    const down = await list();
    assert.equal(down.statusCode, 503, down.body);
    assert.equal(json(down).Error?.reasonCode, 'EAS0503E');
    assert.equal(down.headers['retry-after'], '5', 'the client is told when to come back');
    const ready = await app.inject({ url: '/maximo/health/ready' });
    assert.equal(ready.statusCode, 503, ready.body);
    assert.equal(ready.headers['retry-after'], '5');
    assert.deepEqual(json(ready).checks, [
      { name: 'database', status: 'DOWN' },
      { name: 'migrations', status: 'DOWN' },
    ]);
    assert.equal((await app.inject({ url: '/maximo/health/live' })).statusCode, 200, 'alive all the same');
    const refusedWrite = await app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset?lean=1',
      headers: { ...maxauth('MAXADMIN'), 'content-type': 'application/json' },
      payload: { assetnum: 'FAULT-DOWN', siteid: 'BEDFORD' },
    });
    assert.equal(refusedWrite.statusCode, 503, refusedWrite.body);

    await proxy.up();
    await until('a 200 after the database returned', async () => (await list()).statusCode === 200);
    assert.equal((await app.inject({ url: '/maximo/health/ready' })).statusCode, 200, 'ready again');
    const created = await app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset?lean=1',
      headers: { ...maxauth('MAXADMIN'), 'content-type': 'application/json' },
      payload: { assetnum: 'FAULT-UP', siteid: 'BEDFORD', description: 'after the outage' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const { rows } = await sql<{ description: string }>`
      select description from asset where assetnum = 'FAULT-UP'`.execute(fixtures.db);
    assert.equal(rows[0]?.description, 'after the outage');
  });

  test('notifications missed while the listener was away: caches are dropped when it is back', async () => {
    const wilson = () =>
      app.inject({ url: '/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=1', headers: maxauth('WILSON') });
    assert.equal((await wilson()).statusCode, 200);
    await proxy.down();
    // Changed by someone else while this process hears nothing.
    await sql`update maxuser set status = 'INACTIVE' where userid = 'WILSON'`.execute(fixtures.db);
    await proxy.up();
    await until('the change to be seen', async () => (await wilson()).statusCode === 401);
  });

  test('no log line carries connection details or an object dump', () => {
    const text = [...log, ...faults].join('\n');
    const port = new URL(TEST_DATABASE_URL!).port || '5432';
    for (const secret of [`:${port}`, `:${proxy.port}`, applicationName, '"client"', 'Client {']) {
      assert.ok(!text.includes(secret), `${secret} in the log:\n${text}`);
    }
  });
});
