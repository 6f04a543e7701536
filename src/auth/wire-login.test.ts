import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { DEMO_PASSWORD } from '../../test/helpers/storage.js';

/**
 * Logins and logouts as existing clients send them (any content type, empty bodies), one session per login, the
 * bound on a user's sessions, and no session left by a refused request (docs/compatibility.md).
 */

function setCookies(response: LightMyRequestResponse): string[] {
  const header = response.headers['set-cookie'];
  return header === undefined ? [] : Array.isArray(header) ? header : [header];
}

function sessionCookie(response: LightMyRequestResponse): string {
  const line = setCookies(response).find((cookie) => cookie.startsWith('JSESSIONID='));
  assert.ok(line, `no session cookie: ${response.statusCode} ${response.body}`);
  return line.split(';')[0]!;
}

const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

/** Bodies and content types clients send with a login or logout. */
const BODIES: ReadonlyArray<{ name: string; headers: Record<string, string>; payload?: string }> = [
  {
    name: 'form, empty (axios)',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  },
  { name: 'JSON, empty', headers: { 'content-type': 'application/json' }, payload: '' },
  { name: 'JSON object', headers: { 'content-type': 'application/json' }, payload: '{}' },
  { name: 'JSON that is not JSON', headers: { 'content-type': 'application/json' }, payload: 'x' },
  { name: 'text', headers: { 'content-type': 'text/plain' }, payload: 'hello' },
  { name: 'XML', headers: { 'content-type': 'application/xml' }, payload: '<a/>' },
  { name: 'no content type, a body', headers: {}, payload: 'lean=1' },
  { name: 'nothing', headers: {} },
  { name: 'content type "null"', headers: { 'content-type': 'null' }, payload: '' },
  { name: 'content type empty', headers: { 'content-type': '' }, payload: '' },
];

describe('logins and logouts with any content type', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  for (const body of BODIES) {
    test(`${body.name}: login 200 with a cookie, logout 200`, async () => {
      for (const credentials of [maxauth('WILSON'), basic('wilson', DEMO_PASSWORD)]) {
        const login = await t.app.inject({
          method: 'POST',
          url: '/maximo/oslc/login?lean=1',
          headers: { ...credentials, ...body.headers },
          ...(body.payload !== undefined && { payload: body.payload }),
        });
        assert.equal(login.statusCode, 200, login.body);
        assert.equal(typeof json(login).maxupg, 'string');
        const cookie = sessionCookie(login);
        for (const method of ['POST', 'GET'] as const) {
          const logout = await t.app.inject({
            method,
            url: '/maximo/oslc/logout',
            headers: { cookie, ...(method === 'POST' && body.headers) },
            ...(method === 'POST' && body.payload !== undefined && { payload: body.payload }),
          });
          assert.equal(logout.statusCode, method === 'POST' ? 200 : 401, `${method}: ${logout.body}`);
        }
      }
    });
  }

  test('FORM login with the fields in a body of any content type', async () => {
    const fields = `j_username=wilson&j_password=${encodeURIComponent(DEMO_PASSWORD)}`;
    for (const headers of [
      { 'content-type': 'text/plain' },
      {},
      { 'content-type': 'application/x-www-form-urlencoded' },
    ]) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/maximo/j_security_check',
        headers,
        payload: fields,
      });
      assert.equal(response.statusCode, 302, response.body);
      sessionCookie(response);
    }
    const empty = await t.app.inject({
      method: 'POST',
      url: '/maximo/j_security_check',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    assert.equal(empty.statusCode, 401);
    assert.deepEqual(setCookies(empty), []);
  });

  test('a refused login sets no cookie and opens no session', async () => {
    const count = async () =>
      Number(
        (await sql<{ n: string }>`select count(*) as n from maxsession`.execute(t.storage.db)).rows[0]!.n,
      );
    const before = await count();
    const refused = [
      await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/login',
        headers: maxauth('WILSON', 'wrong-password'),
      }),
      await t.app.inject({ method: 'POST', url: '/maximo/oslc/login', headers: basic('nobody', 'x') }),
      await t.app.inject({
        method: 'POST',
        url: '/maximo/j_security_check',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'j_username=wilson&j_password=wrong',
      }),
      // The credentials are good, the request is refused: no session either.
      await t.app.inject({ url: '/maximo/oslc/os/mxapiapikey', headers: maxauth('WILSON') }),
      await t.app.inject({ url: '/maximo/oslc/os/nosuchstructure', headers: maxauth('WILSON') }),
      await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/os/mxapiasset',
        headers: { ...maxauth('MAXADMIN'), 'content-type': 'application/json' },
        payload: '{not json',
      }),
    ];
    for (const response of refused) {
      assert.ok(response.statusCode >= 400 && response.statusCode < 500, response.body);
      assert.deepEqual(setCookies(response), [], response.body);
      assert.equal(response.headers.csrftoken, undefined);
    }
    assert.equal(await count(), before);
  });
});

describe('one session per login', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ EAS_SESSIONS_PER_USER: '3' });
  });
  after(() => t.close());

  const login = async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login',
      headers: maxauth('SMITH'),
    });
    assert.equal(response.statusCode, 200);
    return sessionCookie(response);
  };
  const whoami = (cookie: string) => t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } });

  test('two logins of one user from one address: two sessions; a logout leaves the other working', async () => {
    const first = await login();
    const second = await login();
    assert.notEqual(first, second);
    const logout = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/logout',
      headers: { cookie: first },
    });
    assert.equal(logout.statusCode, 200);
    assert.equal((await whoami(first)).statusCode, 401);
    const other = await whoami(second);
    assert.equal(other.statusCode, 200);
    assert.equal(json(other).userid, 'SMITH');
  });

  test('a user holds at most EAS_SESSIONS_PER_USER sessions: a new login ends the oldest', async () => {
    const cookies = [await login(), await login(), await login(), await login()];
    const rows = await sql<{
      n: string;
    }>`select count(*) as n from maxsession where userid = 'SMITH'`.execute(t.storage.db);
    assert.equal(Number(rows.rows[0]!.n), 3);
    assert.equal((await whoami(cookies[0]!)).statusCode, 401, 'the oldest ended');
    for (const cookie of cookies.slice(1)) assert.equal((await whoami(cookie)).statusCode, 200);
    // Other users' sessions are not counted.
    const wilson = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login',
      headers: maxauth('WILSON'),
    });
    assert.equal((await whoami(sessionCookie(wilson))).statusCode, 200);
    assert.equal((await whoami(cookies[3]!)).statusCode, 200);
  });
});
