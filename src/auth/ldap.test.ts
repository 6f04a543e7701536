import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { DEMO_PASSWORD } from '../../test/helpers/storage.js';
import {
  LDAP_PASSWORDS,
  LDAP_PEOPLE,
  LDAP_STRANGER,
  SLAPD,
  slapdForTests,
  startSlapd,
  type Slapd,
} from '../../test/ldap/slapd.js';
import { TcpProxy } from '../../test/helpers/tcp-proxy.js';
import { escapeDnValue } from './ldap.js';

/**
 * The `appserver` security mode against a real OpenLDAP server: BASIC and FORM logins bind as the user, the entry's
 * uid names the user record. CI must have slapd (.ci/run installs it): there a missing slapd fails this file.
 */
const installed = slapdForTests();
if (!installed && process.env.CI !== 'true') {
  // The runner's own skip: counted as skipped, never as passed.
  test('appserver mode against OpenLDAP', {
    skip: `${SLAPD} is not installed (apt-get install slapd ldap-utils)`,
  });
}

function basic(login: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}` };
}

function setCookies(response: LightMyRequestResponse): string[] {
  const header = response.headers['set-cookie'];
  return header === undefined ? [] : Array.isArray(header) ? header : [header];
}

function firstCookie(response: LightMyRequestResponse): string {
  return (setCookies(response)[0] ?? '').split(';')[0]!;
}

const form = (username: string, password: string) =>
  `j_username=${encodeURIComponent(username)}&j_password=${encodeURIComponent(password)}`;

if (installed) {
  let slapd: Slapd;
  before(async () => {
    slapd = await startSlapd();
  });
  after(() => slapd?.stop());

  describe('appserver mode: verified binds are cached (docs/compatibility.md, "Sessions")', () => {
    let t: TestApp;
    let proxy: TcpProxy;
    before(async () => {
      const directory = new URL(slapd.url);
      proxy = new TcpProxy(directory.hostname, Number(directory.port));
      await proxy.up();
      t = await startTestApp({
        EAS_AUTH_MODE: 'appserver',
        EAS_LDAP_URL: proxy.rewrite(slapd.url),
        EAS_LDAP_USER_DN_TEMPLATE: `uid={0},${LDAP_PEOPLE}`,
      });
    });
    after(async () => {
      await t?.close();
      await proxy?.down();
    });

    test('per-request BASIC binds once: a directory outage leaves it working, unverified credentials refused', async () => {
      const url = '/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=1';
      const verified = basic('wilson', LDAP_PASSWORDS.wilson);
      const first = await t.app.inject({ url, headers: verified });
      assert.equal(first.statusCode, 200, first.body);
      // Per-request credentials: a sealed cookie (and its token cookie), stored only if replayed.
      assert.deepEqual(
        setCookies(first).map((line) => line.slice(0, line.indexOf('=') + 3)),
        ['JSESSIONID=s.', 'LtpaToken2=t.'],
      );
      await proxy.down();
      try {
        for (let call = 0; call < 5; call += 1)
          assert.equal((await t.app.inject({ url, headers: verified })).statusCode, 200, `call ${call}`);
        const unverified = await t.app.inject({ url, headers: basic('smith', LDAP_PASSWORDS.smith) });
        assert.equal(unverified.statusCode, 401, 'never verified: the directory is asked, and is away');
      } finally {
        await proxy.up();
      }
    });
  });

  describe('appserver mode with a DN template', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({
        EAS_AUTH_MODE: 'appserver',
        EAS_LDAP_URL: slapd.url,
        EAS_LDAP_USER_DN_TEMPLATE: `uid={0},${LDAP_PEOPLE}`,
        EAS_MAX_FAILED_LOGINS: '5',
      });
    });
    after(() => t.close());

    test('BASIC with the directory password logs in as the user record of the uid', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/login',
        headers: basic('wilson', LDAP_PASSWORDS.wilson),
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(json(response).appserversecurity, true);
      const cookies = setCookies(response);
      assert.match(cookies[0]!, /^JSESSIONID=/, 'the session cookie first');
      assert.match(cookies[1]!, /^LtpaToken2=/, 'then the token cookie of the application server');
      const whoami = await t.app.inject({
        url: '/maximo/oslc/whoami',
        headers: { cookie: firstCookie(response) },
      });
      assert.equal(json(whoami).userid, 'WILSON');
      const onApi = await t.app.inject({
        url: '/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=1',
        headers: basic('smith', LDAP_PASSWORDS.smith),
      });
      assert.equal(onApi.statusCode, 200, 'a password with spaces, on any API call');
    });

    test('the database password is not the directory password', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/login',
        headers: basic('WILSON', DEMO_PASSWORD),
      });
      assert.equal(response.statusCode, 401);
      assert.equal(json(response).Error?.reasonCode, 'BMXAA7901E');
    });

    test('wrong password, unknown entry, entry without a user record, empty password: BMXAA7901E', async () => {
      for (const [login, password] of [
        ['wilson', 'wrong'],
        ['nobody', 'whatever'],
        [LDAP_STRANGER.uid, LDAP_STRANGER.password],
        ['wilson', ''],
        ['wilson,ou=people', LDAP_PASSWORDS.wilson],
        ['*', LDAP_PASSWORDS.wilson],
      ] as const) {
        const response = await t.app.inject({
          method: 'POST',
          url: '/maximo/oslc/login',
          headers: basic(login, password),
        });
        assert.equal(response.statusCode, 401, `${login}/${password}`);
        assert.equal(json(response).Error?.reasonCode, 'BMXAA7901E');
        assert.deepEqual(setCookies(response), []);
      }
    });

    test('native maxauth is not offered; a client sending both headers logs in by BASIC', async () => {
      const native = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/login',
        headers: maxauth('WILSON'),
      });
      assert.equal(native.statusCode, 401);
      assert.equal(json(native).Error?.reasonCode, 'EAS0041E');
      const both = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/login',
        headers: { ...maxauth('WILSON'), ...basic('wilson', LDAP_PASSWORDS.wilson) },
      });
      assert.equal(both.statusCode, 200, both.body);
    });

    test('FORM logins bind against the directory: 302 with JSESSIONID then LtpaToken2', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/maximo/j_security_check',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form('smith', LDAP_PASSWORDS.smith),
      });
      assert.equal(response.statusCode, 302, response.body);
      const cookies = setCookies(response);
      assert.match(cookies[0]!, /^JSESSIONID=/);
      assert.match(cookies[1]!, /^LtpaToken2=/);
      const token = cookies[1]!.split(';')[0]!;
      assert.equal(
        json(await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie: token } })).userid,
        'SMITH',
      );
      const refused = await t.app.inject({
        method: 'POST',
        url: '/maximo/j_security_check',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        payload: form('smith', 'wrong'),
      });
      assert.equal(refused.statusCode, 302);
      assert.match(String(refused.headers.location), /loginerror\.jsp$/);
    });

    test('admin mode: directory logins (BASIC, FORM) only for users with the admin-mode login right', async () => {
      await t.services.adminMode.turnOn('MAXADMIN', { logoutmin: 0, numsessions: 5 });
      try {
        for (const refused of [
          await t.app.inject({
            method: 'POST',
            url: '/maximo/oslc/login',
            headers: basic('wilson', LDAP_PASSWORDS.wilson),
          }),
          await t.app.inject({
            method: 'POST',
            url: '/maximo/j_security_check',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            payload: form('smith', LDAP_PASSWORDS.smith),
          }),
        ]) {
          assert.equal(refused.statusCode, 401, refused.body);
          assert.equal(json(refused).Error?.reasonCode, 'BMXAA7901E');
          assert.deepEqual(setCookies(refused), []);
        }
        const allowed = await t.app.inject({
          method: 'POST',
          url: '/maximo/oslc/login',
          headers: basic('maxadmin', LDAP_PASSWORDS.maxadmin),
        });
        assert.equal(allowed.statusCode, 200, allowed.body);
      } finally {
        await t.services.adminMode.turnOff('MAXADMIN');
      }
    });

    test('a blocked user record refuses the login although the directory accepts the password', async () => {
      await t.storage.db
        .updateTable('maxuser')
        .set({ status: 'BLOCKED' })
        .where('userid', '=', 'SMITH')
        .execute();
      // What the write path's notification does on every process: verified credentials and profiles go.
      t.services.auth.invalidate();
      try {
        const response = await t.app.inject({
          method: 'POST',
          url: '/maximo/oslc/login',
          headers: basic('smith', LDAP_PASSWORDS.smith),
        });
        assert.equal(response.statusCode, 401);
        assert.equal(json(response).Error?.reasonCode, 'BMXAA7901E');
      } finally {
        await t.storage.db
          .updateTable('maxuser')
          .set({ status: 'ACTIVE', failedlogins: 0 })
          .where('userid', '=', 'SMITH')
          .execute();
      }
    });

    test('directory failures are counted against the user like native ones', async () => {
      await t.storage.db
        .updateTable('maxuser')
        .set({ failedlogins: 0 })
        .where('userid', '=', 'MAXADMIN')
        .execute();
      for (let attempt = 0; attempt < 2; attempt += 1) {
        await t.app.inject({
          method: 'POST',
          url: '/maximo/oslc/login',
          headers: basic('maxadmin', 'wrong'),
        });
      }
      const row = await t.storage.db
        .selectFrom('maxuser')
        .select('failedlogins')
        .where('userid', '=', 'MAXADMIN')
        .executeTakeFirstOrThrow();
      assert.equal(row.failedlogins, 2);
      const ok = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/login',
        headers: basic('maxadmin', LDAP_PASSWORDS.maxadmin),
      });
      assert.equal(ok.statusCode, 200);
    });
  });

  describe('appserver mode with a search', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({
        EAS_AUTH_MODE: 'appserver',
        EAS_LDAP_URL: slapd.url,
        EAS_LDAP_SEARCH_BASE: LDAP_PEOPLE,
        EAS_LDAP_SEARCH_FILTER: '(&(objectClass=inetOrgPerson)(uid={0}))',
      });
    });
    after(() => t.close());

    test('the entry is found by the filter, then bound as', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/login',
        headers: basic('WILSON', LDAP_PASSWORDS.wilson),
      });
      assert.equal(response.statusCode, 200, response.body);
      const whoami = await t.app.inject({
        url: '/maximo/oslc/whoami',
        headers: { cookie: firstCookie(response) },
      });
      assert.equal(json(whoami).userid, 'WILSON');
    });

    test('filter syntax in the login name matches nothing', async () => {
      for (const login of ['*', 'wil*', 'wilson)(uid=*', '*)(objectClass=*']) {
        const response = await t.app.inject({
          method: 'POST',
          url: '/maximo/oslc/login',
          headers: basic(login, LDAP_PASSWORDS.wilson),
        });
        assert.equal(response.statusCode, 401, login);
      }
    });
  });

  describe('appserver mode with the directory down', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({
        EAS_AUTH_MODE: 'appserver',
        EAS_LDAP_URL: 'ldap://127.0.0.1:9',
        EAS_LDAP_USER_DN_TEMPLATE: `uid={0},${LDAP_PEOPLE}`,
      });
    });
    after(() => t.close());

    test('logins are refused, and not counted against the user', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/login',
        headers: basic('wilson', LDAP_PASSWORDS.wilson),
      });
      assert.equal(response.statusCode, 401);
      assert.equal(json(response).Error?.reasonCode, 'BMXAA7901E');
      const row = await t.storage.db
        .selectFrom('maxuser')
        .select('failedlogins')
        .where('userid', '=', 'WILSON')
        .executeTakeFirstOrThrow();
      assert.equal(row.failedlogins, 0);
    });
  });
}

describe('DN escaping', () => {
  test('a login name stays one attribute value', () => {
    assert.equal(escapeDnValue('wilson'), 'wilson');
    assert.equal(escapeDnValue('a,ou=x'), 'a\\,ou\\=x');
    assert.equal(escapeDnValue('#lead'), '\\#lead');
    assert.equal(escapeDnValue(' both '), '\\ both\\ ');
    assert.equal(escapeDnValue('q"<>;+\\'), 'q\\"\\<\\>\\;\\+\\\\');
  });
});
