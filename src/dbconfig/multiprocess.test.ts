import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  startServer,
  stopServer,
  stopServersAndDropSchema,
  type ServerProcess,
} from '../../test/helpers/processes.js';

/**
 * Database configuration on two real server processes sharing one PostgreSQL schema: a custom attribute applied
 * through one is filtered, sorted, selected and written through MXAPIASSET on both, and a restarted process still
 * serves it. PGlite is one process by design, so without EAS_TEST_DATABASE_URL this file registers nothing (the
 * same points on two app instances of one database run on both engines in dbconfig.test.ts).
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'dbconfig-admin-pw';
const maxauth = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };

interface Member {
  assetnum?: string;
  xmpcode?: string;
  href?: string;
}

/** Logs in once: admin mode admits a limited number of administrator sessions, so requests reuse this one. */
async function login(server: ServerProcess): Promise<string> {
  const response = await fetch(`${server.base}/oslc/login`, { method: 'POST', headers: maxauth });
  await response.arrayBuffer();
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith('JSESSIONID='));
  assert.ok(cookie, `a session from ${server.name}: ${response.status}`);
  return cookie.split(';')[0]!;
}

async function call(
  server: ServerProcess,
  cookie: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.base}/oslc${path}`, {
    method,
    headers: { cookie, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function eventually(check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 2000;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

if (url) {
  describe('database configuration across two server processes on one PostgreSQL', () => {
    const schema = `eas_test_dbconfig_${process.pid}_${randomBytes(3).toString('hex')}`;
    const settings = (name: string) => ({
      name,
      databaseUrl: url,
      schema,
      adminPassword: ADMIN_PASSWORD,
      env: { EAS_DEMO: '1', EAS_DEMO_PASSWORD: 'dbconfig-demo-pw' },
    });
    let first: ServerProcess;
    let second: ServerProcess;
    let firstCookie: string;
    let secondCookie: string;

    before(async () => {
      // One after the other: the first creates the schema, migrates it and loads the demo data.
      first = await startServer(settings('SRVA'));
      second = await startServer(settings('SRVB'));
      firstCookie = await login(first);
      secondCookie = await login(second);
    });

    after(() => stopServersAndDropSchema([first, second], url, schema));

    test('an attribute applied on one process is read and written through MXAPIASSET on both, and after a restart', async () => {
      const staged = await call(first, firstCookie, 'POST', '/os/mxapimaxattributecfg', {
        objectname: 'ASSET',
        attributename: 'XMPCODE',
        changetype: 'ADD',
        maxtype: 'UPPER',
        length: 10,
      });
      assert.equal(staged.status, 201, JSON.stringify(staged.body));
      const refused = await call(first, firstCookie, 'POST', '/dbconfig/apply');
      assert.equal((refused.body.Error as Record<string, unknown>).reasonCode, 'BMXAA0578E');

      const on = await call(first, firstCookie, 'POST', '/adminmode/on', {});
      assert.equal(on.body.state, 1, JSON.stringify(on.body));
      // Admin mode reaches the second process through the bus; apply there once it knows.
      await eventually(async () => {
        const state = await call(second, secondCookie, 'GET', '/adminmode/state');
        assert.equal(state.body.state, 1);
      });
      const applied = await call(second, secondCookie, 'POST', '/dbconfig/apply');
      assert.equal(applied.status, 200, JSON.stringify(applied.body));

      // The first process knows the attribute once it has heard of the apply: a filter on it is answered. Before
      // that, a create naming it could be accepted without it, as a body's unknown attributes are.
      await eventually(async () => {
        const known = await call(
          first,
          firstCookie,
          'GET',
          '/os/mxapiasset?lean=1&oslc.select=assetnum&oslc.where=xmpcode="%25"',
        );
        assert.equal(known.status, 200, JSON.stringify(known.body));
      });
      await eventually(async () => {
        const created = await call(first, firstCookie, 'POST', '/os/mxapiasset?lean=1', {
          assetnum: 'MPCFG1',
          siteid: 'BEDFORD',
          xmpcode: 'alpha',
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
      });
      const listed = await call(
        first,
        firstCookie,
        'GET',
        '/os/mxapiasset?lean=1&oslc.select=assetnum&oslc.pageSize=1',
      );
      const href = String((listed.body.member as Member[])[0]!.href);
      const id = href.split('/').pop()!;
      const patched = await fetch(`${second.base}/oslc/os/mxapiasset/${id}?lean=1`, {
        method: 'POST',
        headers: { cookie: secondCookie, 'content-type': 'application/json', 'x-method-override': 'PATCH' },
        body: JSON.stringify({ xmpcode: 'beta' }),
      });
      assert.equal(patched.status, 204, await patched.text());

      const query =
        '/os/mxapiasset?lean=1&oslc.select=assetnum,xmpcode&oslc.where=xmpcode="%25"&oslc.orderBy=-xmpcode';
      for (const [server, cookie] of [
        [first, firstCookie],
        [second, secondCookie],
      ] as const) {
        const found = await call(server, cookie, 'GET', query);
        assert.equal(found.status, 200, JSON.stringify(found.body));
        assert.deepEqual(
          (found.body.member as Member[]).map((member) => member.xmpcode),
          ['BETA', 'ALPHA'],
          server.name,
        );
      }

      await stopServer(second);
      second = await startServer(settings('SRVB'));
      secondCookie = await login(second);
      const afterRestart = await call(second, secondCookie, 'GET', query);
      assert.deepEqual(
        (afterRestart.body.member as Member[]).map((member) => member.xmpcode),
        ['BETA', 'ALPHA'],
      );
      const off = await call(second, secondCookie, 'POST', '/adminmode/off', {});
      assert.equal(off.body.state, 0);
    });
  });
}
