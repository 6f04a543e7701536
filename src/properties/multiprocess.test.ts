import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  startServer,
  stopServer,
  stopServersAndDropSchema,
  within,
  type ServerProcess,
} from '../../test/helpers/processes.js';

/**
 * Two real server processes (`src/server.ts`) on one PostgreSQL schema: what one sets, the other applies through
 * LISTEN/NOTIFY. PGlite is one process by design, so without EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'multiprocess-admin-pw';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
const LIVE_REFRESH_DEADLINE_MS = 1000;

async function getProperty(server: ServerProcess, name: string): Promise<string> {
  const response = await fetch(
    `${server.base}/oslc/service/system?action=wsmethod:getProperty&propName=${encodeURIComponent(name)}`,
    { headers: admin },
  );
  assert.equal(response.status, 200);
  return ((await response.json()) as { return: string }).return;
}

async function setProperty(server: ServerProcess, propName: string, propValue: string): Promise<void> {
  const response = await fetch(`${server.base}/oslc/service/system?action=wsmethod:setProperty`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json' },
    body: JSON.stringify({ propName, serverName: 'COMMON', propValue }),
  });
  assert.equal(response.status, 200, await response.clone().text());
}

async function pageStatus(server: ServerProcess, pageSize: number): Promise<number> {
  const response = await fetch(`${server.base}/oslc/os/mxapiasset?lean=1&oslc.pageSize=${pageSize}`, {
    headers: admin,
  });
  await response.arrayBuffer();
  return response.status;
}

if (url) {
  describe('system properties across two server processes on one PostgreSQL', () => {
    const schema = `eas_test_props_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;

    before(async () => {
      // One after the other: the first creates the schema, migrates it and creates the administrator.
      first = await startServer({ name: 'SRVA', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
      second = await startServer({ name: 'SRVB', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
    });

    after(() => stopServersAndDropSchema([first, second], url, schema));

    test('a live property set through one process is answered by the other within 1 s', async (t) => {
      assert.equal(await getProperty(second, 'mxe.oslc.idleexiry'), '300');
      await setProperty(first, 'mxe.oslc.idleexiry', '420');
      const took = await within(
        LIVE_REFRESH_DEADLINE_MS,
        async () => (await getProperty(second, 'mxe.oslc.idleexiry')) === '420',
      );
      assert.ok(took <= LIVE_REFRESH_DEADLINE_MS, `${took} ms`);
      t.diagnostic(`answered by the other process after ${took.toFixed(1)} ms`);
      assert.equal(await getProperty(first, 'mxe.oslc.idleexiry'), '420');

      // Each process acknowledged the refresh with the value it applied.
      const response = await fetch(
        `${first.base}/oslc/service/system?action=wsmethod:describeProperty&propName=mxe.oslc.idleexiry`,
        { headers: admin },
      );
      const description = (await response.json()) as {
        maxpropapplied: Array<{ servername: string; propvalue: string; pending: boolean }>;
      };
      const applied = new Map(description.maxpropapplied.map((row) => [row.servername, row]));
      assert.equal(applied.get('SRVA')?.propvalue, '420');
      assert.equal(applied.get('SRVB')?.propvalue, '420');
      assert.equal(applied.get('SRVB')?.pending, false);
    });

    test('mxe.oslc.maxpagesize set through one process changes the collection limit of both', async () => {
      assert.equal(await pageStatus(first, 8), 200);
      assert.equal(await pageStatus(second, 8), 200);
      await setProperty(second, 'mxe.oslc.maxpagesize', '7');
      await within(LIVE_REFRESH_DEADLINE_MS, async () => (await pageStatus(first, 8)) === 400);
      assert.equal(await pageStatus(second, 8), 400);
      assert.equal(await pageStatus(first, 7), 200);
      assert.equal(await pageStatus(second, 7), 200);
    });

    test('the CORS properties set through one process apply on the other without a restart', async () => {
      const origin = 'https://apps.example.com';
      const preflightOrigin = async (server: ServerProcess) => {
        const response = await fetch(`${server.base}/oslc/os/mxapiasset`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'PUT' },
        });
        await response.arrayBuffer();
        assert.equal(response.status, 204);
        return response.headers.get('access-control-allow-origin');
      };
      assert.equal(await preflightOrigin(second), null, 'nothing allowed by default');
      await setProperty(first, 'mxe.oslc.aclalloworigin', origin);
      await setProperty(first, 'mxe.oslc.aclallowmethods', 'GET,PUT');
      await within(LIVE_REFRESH_DEADLINE_MS, async () => (await preflightOrigin(second)) === origin);
      assert.equal(await preflightOrigin(first), origin);
    });

    test('a property without live refresh keeps its value on the other process until it restarts', async () => {
      const name = 'mxe.adminmode.stopstartclusters';
      assert.equal(await getProperty(second, name), '1');
      await setProperty(first, name, '0');
      // Longer than a live refresh takes: the stored value must still not be applied.
      await new Promise((resolve) => setTimeout(resolve, 2 * LIVE_REFRESH_DEADLINE_MS));
      assert.equal(await getProperty(second, name), '1');
      assert.equal(await getProperty(first, name), '1');

      await stopServer(second);
      second = await startServer({ name: 'SRVB', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
      assert.equal(await getProperty(second, name), '0');
      assert.equal(await getProperty(first, name), '1', 'the process that was not restarted keeps its value');
    });
  });
}
