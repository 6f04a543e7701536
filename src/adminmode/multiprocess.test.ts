import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  startServer,
  stopServer,
  stopServersAndDropSchema,
  type ServerProcess,
  type ServerSettings,
} from '../../test/helpers/processes.js';

/**
 * Admin mode across two real server processes (`src/server.ts`) on one PostgreSQL schema: turned on by one, pending
 * on the other within a second; an ordinary user's session on the other ends after `logoutmin`; refusals on both;
 * `numsessions`; off on one opens logins on the other; the state and the pending state's timer survive a restart.
 * PGlite is one process by design (adminmode.test.ts runs two app instances on one database instead), so without
 * EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'adminmode-multiprocess-pw';
const DEMO_PASSWORD = 'adminmode-demo-pw';
const MASTER_KEY = 'adminmode-multiprocess-master-key-0123456789';
const credentials = (userid: string, password: string) => ({
  maxauth: Buffer.from(`${userid}:${password}`).toString('base64'),
});
const admin = credentials('MAXADMIN', ADMIN_PASSWORD);
const wilson = credentials('WILSON', DEMO_PASSWORD);

function cookieOf(response: Response): string {
  const line = response.headers.getSetCookie().find((cookie) => cookie.startsWith('JSESSIONID='));
  assert.ok(line, `a session cookie (${response.status})`);
  return line.split(';')[0]!;
}

interface Answer {
  status: number;
  body: Record<string, unknown> & { Error?: { reasonCode?: string } };
  warning: string | null;
}

async function call(
  base: string,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${base}/oslc${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text === '' ? {} : (JSON.parse(text) as Answer['body']),
    warning: response.headers.get('warning'),
  };
}

async function login(base: string, headers: Record<string, string>): Promise<Response> {
  const response = await fetch(`${base}/oslc/login`, { method: 'POST', headers });
  await response.arrayBuffer();
  return response;
}

async function until(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) assert.fail(`${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Date.now() - started;
}

if (url) {
  describe('admin mode across two server processes', () => {
    const schema = `eas_test_adminmode_${process.pid}_${randomBytes(3).toString('hex')}`;
    const settings: Omit<ServerSettings, 'name'> = {
      databaseUrl: url,
      schema,
      adminPassword: ADMIN_PASSWORD,
      env: { EAS_MASTER_KEY: MASTER_KEY, EAS_DEMO_PASSWORD: DEMO_PASSWORD },
    };
    let first: ServerProcess;
    let second: ServerProcess;
    let adminCookie: string;
    let wilsonKey: string;

    before(async () => {
      // One after the other: the first creates the schema, migrates it and loads the demo users.
      first = await startServer({ name: 'ADMA', ...settings, env: { ...settings.env, EAS_DEMO: '1' } });
      second = await startServer({ name: 'ADMB', ...settings });
      adminCookie = cookieOf(await login(first.base, admin));
      // In a session that ends: the ordinary sessions counted below are the tests' own.
      const session = { cookie: cookieOf(await login(second.base, wilson)) };
      const created = await call(second.base, '/apitoken/create', session, 'POST', { expiration: -1 });
      assert.equal(created.status, 200);
      wilsonKey = String(created.body.apikey);
      await call(second.base, '/logout', session, 'POST');
    });
    after(() => stopServersAndDropSchema([first, second], url, schema));

    const state = async (base: string) => {
      const answer = await call(base, '/adminmode/state', { cookie: adminCookie });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body;
    };

    test('on from one process: pending on the other, its ordinary session ends after logoutmin, then on; refusals on both; numsessions; off', async () => {
      const wilsonCookie = cookieOf(await login(second.base, wilson));
      const logoutmin = 0.05; // 3 s
      const on = await call(first.base, '/adminmode/on', { cookie: adminCookie }, 'POST', {
        numsessions: 2,
        logoutmin,
      });
      assert.equal(on.status, 200);
      assert.equal(on.body.state, 2);
      const logoutAt = Date.parse(String(on.body.logoutdate));

      // The other process refuses the ordinary user's key within a second: it has heard of the change. (A key, not a
      // login: a login admitted before that would open a session, and the count below would include it.)
      const heard = await until(
        async () => (await call(second.base, '/whoami', { apikey: wilsonKey })).status === 401,
        1000,
        'the other process refuses the ordinary API key',
      );
      assert.ok(heard < 1000);
      const pending = await state(second.base);
      assert.equal(pending.state, 2);
      assert.equal(pending.servername, 'ADMA');
      assert.equal(pending.changeby, 'MAXADMIN');
      assert.equal(pending.remainingsessions, 1);

      const warned = await call(second.base, '/whoami', { cookie: wilsonCookie });
      assert.equal(warned.status, 200);
      assert.match(String(warned.warning), /BMXAA4030I/);
      for (const base of [first.base, second.base]) {
        const refusedLogin = await call(base, '/login', wilson, 'POST');
        assert.equal(refusedLogin.status, 401);
        assert.equal(refusedLogin.body.Error?.reasonCode, 'BMXAA7901E');
        const refusedKey = await call(base, '/whoami', { apikey: wilsonKey });
        assert.equal(refusedKey.status, 401);
        assert.equal(refusedKey.body.Error?.reasonCode, 'BMXAA7901E');
      }

      await until(
        async () => (await call(second.base, '/whoami', { cookie: wilsonCookie })).status === 401,
        logoutmin * 60_000 + 3000,
        'the ordinary session on the other process ends',
      );
      assert.ok(Date.now() >= logoutAt - 200, 'not before logoutmin');
      const ended = await call(second.base, '/whoami', { cookie: wilsonCookie });
      assert.equal(ended.body.Error?.reasonCode, 'BMXAA0021E');
      assert.equal((await state(second.base)).state, 1);
      assert.equal((await state(first.base)).state, 1);
      for (const base of [first.base, second.base]) {
        assert.equal((await call(base, '/login', wilson, 'POST')).body.Error?.reasonCode, 'BMXAA7901E');
        assert.equal((await call(base, '/whoami', { apikey: wilsonKey })).status, 401);
      }

      // numsessions 2: adminCookie and one more.
      assert.equal((await login(second.base, admin)).status, 200);
      const third = await call(first.base, '/login', admin, 'POST');
      assert.equal(third.status, 401);
      assert.equal(third.body.Error?.reasonCode, 'BMXAA7901E');

      const off = await call(second.base, '/adminmode/off', { cookie: adminCookie }, 'POST');
      assert.equal(off.body.state, 0);
      // The other process lets the ordinary user's key in within a second: it has heard of the change. (Timed with a
      // key, not a login: a login's password check alone can take a second on a loaded machine.)
      const opened = await until(
        async () => (await call(first.base, '/whoami', { apikey: wilsonKey })).status === 200,
        1000,
        'the other process lets the ordinary API key in',
      );
      assert.ok(opened < 1000);
      assert.equal((await login(first.base, wilson)).status, 200);
      assert.equal((await login(second.base, wilson)).status, 200);

      const history = await call(first.base, '/adminmode/history', { cookie: adminCookie });
      assert.deepEqual(
        (history.body.member as Array<Record<string, unknown>>).map((change) => [
          change.action,
          change.changeby,
        ]),
        [
          ['OFF', 'MAXADMIN'],
          ['ACTIVE', null],
          ['ON', 'MAXADMIN'],
        ],
      );
    });

    test('a pending state whose time passed while every process was down turns on when one starts', async () => {
      const wilsonCookie = cookieOf(await login(second.base, wilson));
      const on = await call(first.base, '/adminmode/on', { cookie: adminCookie }, 'POST', {
        numsessions: 3,
        logoutmin: 0.02,
      });
      assert.equal(on.body.state, 2);
      await Promise.all([stopServer(first), stopServer(second)]);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      first = await startServer({ name: 'ADMA', ...settings });
      // Not through GET state, which would make the transition itself: the restarted process's timer does.
      await until(
        async () => (await call(first.base, '/whoami', { cookie: wilsonCookie })).status === 401,
        2000,
        'the ordinary session ends after the restart',
      );
      const ended = await call(first.base, '/whoami', { cookie: wilsonCookie });
      assert.equal(ended.body.Error?.reasonCode, 'BMXAA0021E');
      assert.equal((await state(first.base)).state, 1);
      assert.equal((await call(first.base, '/login', wilson, 'POST')).body.Error?.reasonCode, 'BMXAA7901E');
      await call(first.base, '/adminmode/off', { cookie: adminCookie }, 'POST');
    });
  });
}
