import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { migrations } from '../db/migrations/index.js';

/**
 * Health checks for load balancers (docs/operations.md, "Health checks"): no credentials, liveness always, readiness
 * when the database answers and its migrations are current. The database unreachable: src/db/faults.test.ts.
 */
describe('health checks', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  test('live and ready answer without credentials, creating no session', async () => {
    const live = await t.app.inject({ url: '/maximo/health/live' });
    assert.equal(live.statusCode, 200, live.body);
    assert.equal(live.headers['content-type'], 'application/json');
    assert.equal(json(live).status, 'UP');
    const ready = await t.app.inject({ url: '/maximo/health/ready' });
    assert.equal(ready.statusCode, 200, ready.body);
    assert.deepEqual(json(ready), {
      status: 'UP',
      checks: [
        { name: 'database', status: 'UP' },
        { name: 'migrations', status: 'UP' },
      ],
    });
    assert.equal(ready.headers['set-cookie'], undefined);
  });

  /** Takes `name` out of the migration table while `check` runs. */
  async function without(name: string, check: () => Promise<void>): Promise<void> {
    const { rows } = await sql<{ timestamp: string }>`
      select timestamp from kysely_migration where name = ${name}`.execute(t.storage.db);
    await sql`delete from kysely_migration where name = ${name}`.execute(t.storage.db);
    try {
      await check();
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${name}, ${rows[0]!.timestamp})`.execute(
        t.storage.db,
      );
    }
  }

  test('a schema missing a migration of this build: not ready, 503 with Retry-After', async () => {
    const needed = migrations.filter((migration) => migration.phase !== 'contract').at(-1)!;
    await without(needed.name, async () => {
      const ready = await t.app.inject({ url: '/maximo/health/ready' });
      assert.equal(ready.statusCode, 503, ready.body);
      assert.equal(ready.headers['retry-after'], '5');
      assert.deepEqual(json(ready).checks, [
        { name: 'database', status: 'UP' },
        { name: 'migrations', status: 'DOWN' },
      ]);
      assert.equal((await t.app.inject({ url: '/maximo/health/live' })).statusCode, 200);
    });
    assert.equal((await t.app.inject({ url: '/maximo/health/ready' })).statusCode, 200);
  });

  test('a contract migration waiting for an earlier release to stop: ready (docs/deploy.md, Rolling upgrade)', async () => {
    const contract = migrations.filter((migration) => migration.phase === 'contract').at(-1)!;
    await without(contract.name, async () => {
      const ready = await t.app.inject({ url: '/maximo/health/ready' });
      assert.equal(ready.statusCode, 200, ready.body);
    });
    assert.equal((await t.app.inject({ url: '/maximo/health/ready' })).statusCode, 200);
  });
});
