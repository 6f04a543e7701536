import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../app.js';
import { json, maxauth, patchUser, startTestApp, testConfig, type TestApp } from '../../test/helpers/app.js';
import { heardEverywhere } from '../../test/helpers/processes.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD } from '../../test/helpers/storage.js';

/**
 * Per-request credentials (`maxauth`, `Authorization: Basic`) are not logins: their answers carry a sealed session
 * cookie but they store nothing, are verified once and then found in memory, and can always reach admin mode's off
 * switch (docs/compatibility.md, "Sessions";
 * docs/adminmode.md). Two app instances on one database stand for two processes (the change bus delivers between
 * them); src/auth/multiprocess.test.ts repeats the cross-process points on real processes on PostgreSQL.
 */
const ROOT = '/maximo/oslc';
const PROPERTY = `${ROOT}/service/system?action=wsmethod:getProperty&propName=mxe.oslc.maxpagesize`;

function basic(userid: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${userid}:${password}`).toString('base64')}` };
}

function setCookies(response: LightMyRequestResponse): string[] {
  return ([] as string[]).concat(response.headers['set-cookie'] ?? []);
}

function sessionCookie(response: LightMyRequestResponse): string {
  const line = setCookies(response).find((cookie) => cookie.startsWith('JSESSIONID='));
  assert.ok(line, `a session cookie: ${response.statusCode} ${response.body}`);
  return line.split(';')[0]!;
}

function reasonCode(response: LightMyRequestResponse): unknown {
  return json(response).Error?.reasonCode;
}

describe('per-request credentials', () => {
  let t: TestApp;
  let other: FastifyInstance;

  const sessionRows = async (): Promise<number> => {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from maxsession`.execute(
      t.storage.db,
    );
    return Number(rows[0]!.n);
  };
  const patchSmith = (fields: Record<string, unknown>) => patchUser(t.app, 'SMITH', fields);

  before(async () => {
    t = await startTestApp({ EAS_MAX_FAILED_LOGINS: '3', EAS_SESSIONS_PER_USER: '5' });
    const built = await buildApp(
      testConfig({ EAS_SERVER_NAME: 'OTHER', EAS_MAX_FAILED_LOGINS: '3', EAS_SESSIONS_PER_USER: '5' }),
      t.storage,
    );
    other = built.app;
    await other.ready();
  });
  after(async () => {
    await other?.close();
    await t?.close();
  });

  test('1,000 maxauth and BASIC requests without a cookie each answer a session cookie and store no session', async () => {
    const before = await sessionRows();
    const cookies = new Set<string>();
    for (let call = 0; call < 1000; call += 1) {
      const headers = call % 2 === 0 ? maxauth('MAXADMIN') : basic('maxadmin', ADMIN_PASSWORD);
      const response = await t.app.inject({ url: PROPERTY, headers });
      assert.equal(response.statusCode, 200, response.body);
      cookies.add(sessionCookie(response));
    }
    assert.equal(cookies.size, 1000, 'a cookie of its own for every answer');
    assert.equal(await sessionRows(), before);
  });

  test('the password is hashed once per credential, not once per request', async () => {
    const verified = t.services.auth.credentials;
    verified.dropAll();
    for (let call = 0; call < 20; call += 1)
      assert.equal((await t.app.inject({ url: PROPERTY, headers: maxauth('WILSON') })).statusCode, 200);
    assert.equal(verified.size, 1, 'one verified credential, found by its keyed digest');
    assert.equal(
      (await t.app.inject({ url: PROPERTY, headers: maxauth('WILSON', 'wrong') })).statusCode,
      401,
    );
    assert.equal(verified.size, 1, 'a refusal is never cached');
  });

  test('only the login routes open sessions, and a login flood stays within the per-user bound', async () => {
    const perUser = 5; // EAS_SESSIONS_PER_USER of this file's apps
    for (let login = 0; login < perUser + 5; login += 1) {
      const response = await t.app.inject({
        method: 'POST',
        url: `${ROOT}/login`,
        headers: maxauth('WILSON'),
      });
      sessionCookie(response);
    }
    const { rows } = await sql<{ n: number | string }>`
      select count(*) as n from maxsession where userid = 'WILSON'`.execute(t.storage.db);
    assert.equal(Number(rows[0]!.n), perUser);
    sessionCookie(await t.app.inject({ url: `${ROOT}?lean=1`, headers: maxauth('SMITH') }));
  });

  test('a password changed on one process refuses the old maxauth on the other', async () => {
    const old = maxauth('SMITH');
    assert.equal((await other.inject({ url: PROPERTY, headers: old })).statusCode, 200);
    await patchSmith({ password: 'a-new-password-1' });
    try {
      await heardEverywhere('the old password refused', async () => {
        return (await other.inject({ url: PROPERTY, headers: old })).statusCode === 401;
      });
      const fresh = maxauth('SMITH', 'a-new-password-1');
      assert.equal((await other.inject({ url: PROPERTY, headers: fresh })).statusCode, 200);
    } finally {
      await patchSmith({ password: DEMO_PASSWORD });
    }
  });

  test('a user made inactive on one process is refused on the other', async () => {
    const headers = basic('smith', DEMO_PASSWORD);
    assert.equal((await other.inject({ url: PROPERTY, headers })).statusCode, 200);
    await patchSmith({ status: 'INACTIVE' });
    try {
      await heardEverywhere('the inactive user refused', async () => {
        return (await other.inject({ url: PROPERTY, headers })).statusCode === 401;
      });
    } finally {
      await patchSmith({ status: 'ACTIVE' });
    }
    assert.equal((await other.inject({ url: PROPERTY, headers })).statusCode, 200);
  });

  test('failed maxauth attempts still lock the user out, verified credential or not', async () => {
    const good = maxauth('SMITH');
    assert.equal((await t.app.inject({ url: PROPERTY, headers: good })).statusCode, 200);
    try {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const wrong = await t.app.inject({ url: PROPERTY, headers: maxauth('SMITH', `wrong-${attempt}`) });
        assert.equal(reasonCode(wrong), 'BMXAA7901E');
      }
      // The other process hears of the block through the change bus, as of any write to a user.
      await heardEverywhere('the block drops the verified credential everywhere', async () => {
        const blocked = await other.inject({ url: PROPERTY, headers: good });
        return blocked.statusCode === 401 && reasonCode(blocked) === 'BMXAA7901E';
      });
    } finally {
      await t.storage.db
        .updateTable('maxuser')
        .set({ failedlogins: 0, blockeduntil: null, status: 'ACTIVE' })
        .where('userid', '=', 'SMITH')
        .execute();
      t.services.auth.invalidate();
      await t.storage.bus.notify(t.storage.db, 'object', 'MAXUSER');
    }
  });

  test('admin mode with numsessions=1: 20 polls with maxauth, BASIC or an API key, then off, answer 200', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: `${ROOT}/apitoken/create`,
      headers: { ...maxauth('MAXADMIN'), 'content-type': 'application/json' },
      payload: JSON.stringify({ expiration: -1 }),
    });
    assert.equal(created.statusCode, 200, created.body);
    const schemes: Array<[string, Record<string, string>]> = [
      ['maxauth', maxauth('MAXADMIN')],
      ['BASIC', basic('MAXADMIN', ADMIN_PASSWORD)],
      ['API key', { apikey: String(json(created).apikey) }],
    ];
    for (const [scheme, headers] of schemes) {
      // The administrator's own login holds the one session allowed: per-request calls need none.
      const cookie = sessionCookie(
        await t.app.inject({ method: 'POST', url: `${ROOT}/login`, headers: maxauth('MAXADMIN') }),
      );
      const on = await t.app.inject({
        method: 'POST',
        url: `${ROOT}/adminmode/on`,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ numsessions: 1, logoutmin: 0 }),
      });
      assert.equal(on.statusCode, 200, `${scheme}: ${on.body}`);
      let polled = json(on);
      for (let poll = 0; poll < 20; poll += 1) {
        const state = await t.app.inject({ url: `${ROOT}/adminmode/state`, headers });
        assert.equal(state.statusCode, 200, `${scheme} poll ${poll}: ${state.body}`);
        // The polls' cookies are sealed and stored by nothing until replayed (docs/compatibility.md, "Sessions").
        if (scheme === 'API key')
          assert.deepEqual(setCookies(state), [], 'a key without enablesession: none');
        else sessionCookie(state);
        polled = json(state);
      }
      assert.equal(polled.adminsessions, 1, `${scheme}: only the login's session counts`);
      const ordinary = await t.app.inject({ url: PROPERTY, headers: maxauth('WILSON') });
      assert.equal(ordinary.statusCode, 401, 'a non-administrator is refused at once');
      assert.equal(reasonCode(ordinary), 'BMXAA7901E');
      const replayed = await t.app.inject({ url: `${ROOT}/adminmode/state`, headers: { cookie } });
      assert.equal(replayed.statusCode, 200, 'the login cookie still works');
      // Off through the other instance (a restarted process knows the state from the database).
      const off = await other.inject({ method: 'POST', url: `${ROOT}/adminmode/off`, headers });
      assert.equal(off.statusCode, 200, `${scheme}: ${off.body}`);
      assert.equal(json(off).state, 0);
      await t.app.inject({ method: 'POST', url: `${ROOT}/logout`, headers: { cookie } });
    }
  });

  test("the README's admin-mode curl sequence, run as printed, ends off with no session left over", async () => {
    const auth = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
    const sessions = await sessionRows();
    const on = await t.app.inject({
      method: 'POST',
      url: `${ROOT}/adminmode/on`,
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"numsessions": 5, "logoutmin": 5}',
    });
    assert.equal(on.statusCode, 200, on.body);
    for (let poll = 0; poll < 12; poll += 1) {
      const state = await t.app.inject({ url: `${ROOT}/adminmode/state`, headers: auth });
      assert.equal(state.statusCode, 200, state.body);
      assert.equal(json(state).adminsessions, 0);
    }
    const off = await t.app.inject({ method: 'POST', url: `${ROOT}/adminmode/off`, headers: auth });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(json(off).state, 0);
    assert.ok((await sessionRows()) <= sessions, 'no session left over');
  });

  test("the IBM Java client's connect-then-load sequence gets lean JSON throughout", async () => {
    const publicUri = { 'x-public-uri': 'http://localhost:80/maximo/oslc' };
    // MaximoConnector.connect: GET <root>?&lean=1 with the maxauth header; success is < 400 with a cookie.
    const connect = await t.app.inject({
      url: `${ROOT}?&lean=1`,
      headers: { ...maxauth('WILSON'), ...publicUri },
    });
    assert.ok(connect.statusCode < 400, connect.body);
    const cookie = sessionCookie(connect);
    const whoamiHref = new URL(String((json(connect).whoami as { href: string }).href)).pathname;
    // Then members and collections by the hrefs it was given, the cookie replayed, no lean.
    const later = { cookie, ...publicUri };
    const whoami = await t.app.inject({ url: whoamiHref, headers: later });
    assert.equal(json(whoami).userid, 'WILSON');
    const collection = await t.app.inject({
      url: `${ROOT}/os/mxapiasset?oslc.select=assetnum,status&oslc.pageSize=2`,
      headers: later,
    });
    assert.equal(collection.statusCode, 200, collection.body);
    const page = json(collection);
    assert.ok(Array.isArray(page.member) && page.member.length > 0, collection.body.slice(0, 200));
    assert.equal(page['rdfs:member'], undefined);
    const memberHref = new URL(String(page.member[0]!.href)).pathname;
    for (const headers of [later, { ...later, ...maxauth('WILSON') }]) {
      const member = json(await t.app.inject({ url: memberHref, headers }));
      assert.equal(typeof member.assetnum, 'string', JSON.stringify(member).slice(0, 200));
      assert.equal(member['spi:assetnum'], undefined);
    }
    // An explicit lean wins; without the session, /oslc is namespaced as before.
    const explicit = json(await t.app.inject({ url: `${memberHref}?lean=0`, headers: later }));
    assert.equal(typeof explicit['spi:assetnum'], 'string');
    const sessionless = json(await t.app.inject({ url: memberHref, headers: maxauth('WILSON') }));
    assert.equal(typeof sessionless['spi:assetnum'], 'string');
  });

  test('lean chosen at any login (POST login, FORM) is the session default', async () => {
    const namespaced = sessionCookie(
      await t.app.inject({
        method: 'POST',
        url: `${ROOT}/login?lean=0`,
        headers: basic('wilson', DEMO_PASSWORD),
      }),
    );
    const leanForm = sessionCookie(
      await t.app.inject({
        method: 'POST',
        url: '/maximo/j_security_check?lean=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `j_username=wilson&j_password=${encodeURIComponent(DEMO_PASSWORD)}`,
      }),
    );
    const assets = '/maximo/api/os/mxapiasset?oslc.select=assetnum&oslc.pageSize=1';
    const onApi = json(await t.app.inject({ url: assets, headers: { cookie: namespaced } }));
    assert.ok(Array.isArray(onApi['rdfs:member']), 'lean=0 at login: namespaced even on /api');
    const onOslc = json(
      await t.app.inject({ url: assets.replace('/api/', '/oslc/'), headers: { cookie: leanForm } }),
    );
    assert.ok(Array.isArray(onOslc.member), 'lean=1 at the FORM login: lean on /oslc');
  });
});
