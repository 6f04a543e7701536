import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startServer, stopServersAndDropSchema, type ServerProcess } from '../../test/helpers/processes.js';

/**
 * `mxe.oslc.collectioncount` set through one server process changes the collection answers of another on the same
 * PostgreSQL schema (live, as every property). PGlite is one process by design: without EAS_TEST_DATABASE_URL this
 * file registers nothing (the single-process case is in system.test.ts).
 */
const url = process.env.EAS_TEST_DATABASE_URL;
const ADMIN_PASSWORD = 'multiprocess-admin-pw';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };

async function totalCount(server: ServerProcess): Promise<unknown> {
  const response = await fetch(`${server.base}/oslc/os/mxapiasset?lean=1&oslc.pageSize=1`, {
    headers: admin,
  });
  assert.equal(response.status, 200);
  return ((await response.json()) as { responseInfo: { totalCount?: number } }).responseInfo.totalCount;
}

if (url) {
  describe('mxe.oslc.collectioncount across two server processes', () => {
    const schema = `eas_test_sys_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;

    before(async () => {
      first = await startServer({ name: 'SRVA', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
      second = await startServer({ name: 'SRVB', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
    });
    after(() => stopServersAndDropSchema([first, second], url, schema));

    test('set on one process, the other answers totalCount', async () => {
      assert.equal(await totalCount(second), undefined);
      const response = await fetch(`${first.base}/oslc/service/system?action=wsmethod:setProperty`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ propName: 'mxe.oslc.collectioncount', serverName: 'COMMON', propValue: '1' }),
      });
      assert.equal(response.status, 200, await response.clone().text());
      // The other process applies it when the change notification arrives (within a second, see properties).
      const started = performance.now();
      while ((await totalCount(second)) === undefined) {
        assert.ok(performance.now() - started < 1000, 'not applied by the other process within 1 s');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.equal(typeof (await totalCount(second)), 'number');
      assert.equal(typeof (await totalCount(first)), 'number');
    });
  });
}
