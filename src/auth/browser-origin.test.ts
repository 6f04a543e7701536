import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { SAML_ENV } from '../../test/helpers/saml-idp.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD } from '../../test/helpers/storage.js';
import type { RouteSummary } from '../app.js';

/**
 * Requests a page of another origin makes a browser send with its session cookie (docs/compatibility.md, "CSRF"):
 * the headers are the ones Chromium sends (src/auth/browser-forgery.test.ts sends them from a real one). Every
 * write route is walked from the app's own route list, as access.test.ts does.
 */

const SERVICE = 'http://127.0.0.1:7001';
/** Another port of the same host: the same site, another origin (the cookie goes with the request). */
const SAME_SITE = 'http://127.0.0.1:7999';

/** What Chromium sends with a form another page of the same site submits to this service. */
const FORM_FROM_SAME_SITE = {
  host: '127.0.0.1:7001',
  origin: SAME_SITE,
  'sec-fetch-site': 'same-site',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
};
/** An image of such a page: no `Origin` on a GET. */
const IMAGE_FROM_SAME_SITE = {
  host: '127.0.0.1:7001',
  'sec-fetch-site': 'same-site',
  'sec-fetch-mode': 'no-cors',
  'sec-fetch-dest': 'image',
};
/** A `fetch` of this service's own pages (the console's). */
const OWN_SCRIPT = {
  host: '127.0.0.1:7001',
  origin: SERVICE,
  'sec-fetch-site': 'same-origin',
  'sec-fetch-mode': 'cors',
  'sec-fetch-dest': 'empty',
};

const ATTACK_BODY = '{"numsessions":1,"logoutmin":0,"x":"="}';
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Refusals of the access hook: what a request the hook lets through never answers. */
const HOOK_REFUSALS: ReadonlySet<string> = new Set(['BMXAA7901E', 'BMXAA0021E', 'EAS0040E', 'EAS0042E']);

function reasonCode(response: LightMyRequestResponse): unknown {
  try {
    return json(response).Error?.reasonCode;
  } catch {
    return undefined;
  }
}

function assertRefused(response: LightMyRequestResponse, what: string): void {
  assert.equal(response.statusCode, 403, `${what}: ${response.body}`);
  assert.equal(reasonCode(response), 'EAS0042E', `${what}: ${response.body}`);
  assert.equal(response.headers['set-cookie'], undefined, `${what}: no cookie is set or cleared`);
}

/** A route's URL with every parameter filled in (the router matches it; the hook decides before validation). */
function urlOf(route: RouteSummary): string {
  return route.url
    .replace(/:([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?/g, (_match, name: string) =>
      name === 'os' ? 'mxapiasset' : '1',
    )
    .replace(/\*/g, 'any');
}

describe('browser requests from pages of other origins', () => {
  let t: TestApp;

  /** A FORM login without `csrf=1`, as a browser's login form and cookie-replaying clients make it. */
  async function formLogin(user = 'MAXADMIN', password = ADMIN_PASSWORD): Promise<string> {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/j_security_check',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ j_username: user, j_password: password }).toString(),
    });
    assert.equal(response.statusCode, 302, response.body);
    const cookie = response.cookies.find((entry) => entry.name === 'JSESSIONID');
    assert.ok(cookie, 'the login sets the session cookie');
    return `JSESSIONID=${cookie.value}`;
  }

  async function whoami(cookie: string): Promise<unknown> {
    const response = await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } });
    return response.statusCode === 200 ? json(response).userid : response.statusCode;
  }

  async function adminModeState(): Promise<unknown> {
    const response = await t.app.inject({
      url: '/maximo/oslc/adminmode/state',
      headers: maxauth('MAXADMIN'),
    });
    return json(response).state;
  }

  async function sessionsOf(userid: string): Promise<number> {
    const rows = await t.storage.db
      .selectFrom('maxsession')
      .select('userid')
      .where('userid', '=', userid)
      .execute();
    return rows.length;
  }

  before(async () => {
    t = await startTestApp({ EAS_PUBLIC_URL: 'https://eas.example.com/maximo' });
  });
  after(() => t.close());

  test('the attack of the report: a same-site text/plain form turns admin mode on → refused, nothing changes', async () => {
    const cookie = await formLogin();
    const other = await formLogin('WILSON', DEMO_PASSWORD);
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/adminmode/on',
      headers: { cookie, 'content-type': 'text/plain', ...FORM_FROM_SAME_SITE },
      payload: ATTACK_BODY,
    });
    assertRefused(response, 'adminmode/on from a same-site page');
    assert.equal(await adminModeState(), 0, 'admin mode stays off');
    assert.equal(await whoami(other), 'WILSON', "the other user's session lives on");
    assert.equal(await whoami(cookie), 'MAXADMIN');
  });

  test('with mxe.allowexternalapikey=1, a same-site page cannot give MAXADMIN a key of its choosing', async () => {
    const set = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
      headers: maxauth('MAXADMIN'),
      payload: { propName: 'mxe.allowexternalapikey', serverName: 'COMMON', propValue: '1' },
    });
    assert.equal(set.statusCode, 200, set.body);
    const cookie = await formLogin();
    const chosen = 'attacker-chosen-key-0123456789abcdefghijklmnop';
    for (const headers of [FORM_FROM_SAME_SITE, { host: '127.0.0.1:7001', origin: SAME_SITE }]) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/apitoken/create',
        headers: { cookie, 'content-type': 'text/plain', ...headers },
        payload: `{"apikey":"${chosen}","expiration":-1,"x":"="}`,
      });
      assertRefused(response, 'apitoken/create from a same-site page');
    }
    const withKey = await t.app.inject({ url: '/maximo/api/whoami', headers: { apikey: chosen } });
    assert.notEqual(withKey.statusCode, 200, `the chosen key authenticates nobody: ${withKey.body}`);
  });

  test('every write route refuses a session cookie sent by a browser from elsewhere, or as a form or text', async () => {
    const cookie = await formLogin();
    const writes = t.services.routes.filter(
      (route) => WRITES.has(route.method) && route.access !== undefined && route.access.kind !== 'public',
    );
    assert.ok(writes.length > 20, `the write routes are in the list (${writes.length})`);
    const variants: Array<[string, Record<string, string>]> = [
      ['a text/plain form of a same-site page', { 'content-type': 'text/plain', ...FORM_FROM_SAME_SITE }],
      [
        'a form of another origin from a browser without Fetch Metadata',
        { 'content-type': 'application/x-www-form-urlencoded', host: '127.0.0.1:7001', origin: SAME_SITE },
      ],
      [
        'JSON by a script of a same-site page',
        { 'content-type': 'application/json', ...FORM_FROM_SAME_SITE },
      ],
      ['JSON from an opaque origin', { 'content-type': 'application/json', origin: 'null' }],
      ['a text/plain form of this service’s own origin', { 'content-type': 'text/plain', ...OWN_SCRIPT }],
      [
        'a multipart form of this service’s own origin',
        { 'content-type': 'multipart/form-data; boundary=x', ...OWN_SCRIPT },
      ],
    ];
    const problems: string[] = [];
    for (const route of writes) {
      for (const [what, headers] of variants) {
        const response = await t.app.inject({
          method: route.method as InjectOptions['method'],
          url: urlOf(route),
          headers: { cookie, ...headers },
          payload: ATTACK_BODY,
        });
        if (response.statusCode !== 403 || reasonCode(response) !== 'EAS0042E')
          problems.push(
            `${route.method} ${route.url}, ${what}: ${response.statusCode} ${response.body.slice(0, 120)}`,
          );
      }
    }
    assert.deepEqual(problems, []);
    assert.equal(await whoami(cookie), 'MAXADMIN', 'the session lives on');
    assert.equal(await adminModeState(), 0);
  });

  test('every write route still takes the same session cookie from a client that is not a browser', async () => {
    const writes = t.services.routes.filter(
      (route) => WRITES.has(route.method) && route.access !== undefined && route.access.kind !== 'public',
    );
    const problems: string[] = [];
    for (const route of writes) {
      // A session of its own for each route: some writes end sessions (logout, admin mode).
      const opened = await t.services.sessions.open({
        userid: 'MAXADMIN',
        scheme: 'FORM',
        csrfRequired: false,
        withToken: false,
        address: '127.0.0.1',
      });
      const response = await t.app.inject({
        method: route.method as InjectOptions['method'],
        url: urlOf(route),
        headers: { cookie: `JSESSIONID=${opened.sessionCookie}`, 'content-type': 'application/json' },
        payload: '{}',
      });
      if (response.statusCode === 401 || HOOK_REFUSALS.has(String(reasonCode(response))))
        problems.push(`${route.method} ${route.url}: ${response.statusCode} ${response.body.slice(0, 120)}`);
      // Admin mode, turned on by the walk, would refuse the next sessions.
      if ((await adminModeState()) !== 0) {
        const off = await t.app.inject({
          method: 'POST',
          url: '/maximo/oslc/adminmode/off',
          headers: maxauth('MAXADMIN'),
        });
        assert.equal(off.statusCode, 200, off.body);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('clients that are not browsers write as before, text/plain included; the session token lets browsers write', async () => {
    const cookie = await formLogin();
    const on = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/adminmode/on',
      headers: { cookie, 'content-type': 'text/plain' },
      payload: '{"numsessions":5,"logoutmin":30}',
    });
    assert.equal(on.statusCode, 200, `curl's text/plain, as today: ${on.body}`);
    assert.notEqual(await adminModeState(), 0, 'admin mode is on');
    const off = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/adminmode/off',
      headers: { cookie },
    });
    assert.equal(off.statusCode, 200, off.body);

    const create = (assetnum: string, headers: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/os/mxapiasset',
        headers: { cookie, 'content-type': 'application/json', ...headers },
        payload: { assetnum, siteid: 'BEDFORD' },
      });
    assert.equal((await create('BROWSER1', OWN_SCRIPT)).statusCode, 201, 'a script of the own origin');
    assert.equal(
      (await create('BROWSER2', { host: '127.0.0.1:7001', origin: SERVICE })).statusCode,
      201,
      'the own origin, without Fetch Metadata',
    );
    assert.equal(
      (await create('BROWSER3', { host: '10.0.0.11:7001', origin: 'https://eas.example.com' })).statusCode,
      201,
      'the public address (EAS_PUBLIC_URL) behind a proxy that rewrites Host',
    );
    assert.equal(
      (await create('BROWSER4', { host: '127.0.0.1:7001', origin: 'https://eas.example.com:8443' }))
        .statusCode,
      403,
      'another port of the public address',
    );
    assert.equal(
      (await create('BROWSER5', { ...maxauth('WILSON'), ...FORM_FROM_SAME_SITE })).statusCode,
      201,
      'maxauth',
    );

    const token = await t.app.inject({ method: 'POST', url: '/maximo/oslc/login', headers: { cookie } });
    assert.equal(token.statusCode, 200, token.body);
    const csrf = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login?csrf=1',
      headers: { cookie },
    });
    const sessionToken = String(csrf.headers.csrftoken);
    assert.equal(
      (await create('BROWSER6', { ...FORM_FROM_SAME_SITE, csrftoken: sessionToken })).statusCode,
      201,
    );
    assertRefused(
      await create('BROWSER7', { ...FORM_FROM_SAME_SITE, csrftoken: 'not-the-token' }),
      'wrong token',
    );
  });

  test('login forgery: a j_security_check post of another page opens no session and ends none', async () => {
    const victim = await formLogin();
    const smithBefore = await sessionsOf('SMITH');
    const forged = (headers: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/maximo/j_security_check',
        headers: { cookie: victim, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: new URLSearchParams({ j_username: 'SMITH', j_password: DEMO_PASSWORD }).toString(),
      });
    for (const [what, headers] of [
      ['same-site', FORM_FROM_SAME_SITE],
      [
        'cross-site',
        { ...FORM_FROM_SAME_SITE, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      ],
      ['another origin, no Fetch Metadata', { host: '127.0.0.1:7001', origin: SAME_SITE }],
      ['an opaque origin', { origin: 'null' }],
    ] as const) {
      assertRefused(await forged(headers), `a login posted by a ${what} page`);
    }
    assert.equal(await whoami(victim), 'MAXADMIN', "the victim's session lives on");
    assert.equal(await sessionsOf('SMITH'), smithBefore, 'no session of SMITH');

    // This service's own sign-in (a form of its page, or the console's fetch) and clients log in as before.
    for (const headers of [
      { ...OWN_SCRIPT, 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      OWN_SCRIPT,
      {},
    ]) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/maximo/j_security_check',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: new URLSearchParams({ j_username: 'SMITH', j_password: DEMO_PASSWORD }).toString(),
      });
      assert.equal(response.statusCode, 302, response.body);
    }
  });

  test('logout forgery: an image or another page ends nothing; the plain GET of clients still logs out', async () => {
    const cookie = await formLogin();
    for (const path of ['/maximo/oslc/logout']) {
      for (const [what, method, headers] of [
        ['an image of a same-site page', 'GET', IMAGE_FROM_SAME_SITE],
        [
          'an image of this service’s own origin',
          'GET',
          { ...IMAGE_FROM_SAME_SITE, 'sec-fetch-site': 'same-origin' },
        ],
        [
          'a script of this service’s own origin',
          'GET',
          { ...IMAGE_FROM_SAME_SITE, 'sec-fetch-dest': 'script', 'sec-fetch-site': 'same-origin' },
        ],
        ['a link of a cross-site page', 'GET', { ...FORM_FROM_SAME_SITE, 'sec-fetch-site': 'cross-site' }],
        ['a form of a same-site page', 'POST', FORM_FROM_SAME_SITE],
        [
          'a form of another origin, no Fetch Metadata',
          'POST',
          { host: '127.0.0.1:7001', origin: SAME_SITE },
        ],
      ] as const) {
        const response = await t.app.inject({ method, url: path, headers: { cookie, ...headers } });
        assertRefused(response, `${path}, ${what}`);
        assert.equal(await whoami(cookie), 'MAXADMIN', `${path}, ${what}: the session lives on`);
      }
    }
    const plain = await t.app.inject({ url: '/maximo/oslc/logout', headers: { cookie } });
    assert.equal(plain.statusCode, 200, plain.body);
    assert.equal(await whoami(cookie), 401, 'the plain GET ended the session');

    const console = await formLogin();
    const own = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/logout',
      headers: { cookie: console, ...OWN_SCRIPT },
    });
    assert.equal(own.statusCode, 200, own.body);
    assert.equal(await whoami(console), 401, "the console's sign-out ended the session");

    const typed = await formLogin();
    const navigation = await t.app.inject({
      url: '/maximo/oslc/logout',
      headers: {
        cookie: typed,
        'sec-fetch-site': 'none',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-dest': 'document',
      },
    });
    assert.equal(navigation.statusCode, 200, 'an address typed in the browser');
    assert.equal(await whoami(typed), 401);
  });
});

describe('the federated logout routes, from pages of other origins', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(SAML_ENV);
  });
  after(() => t.close());

  test('saml/logout for an image or another page ends nothing; the sign-in page’s own link still signs out', async () => {
    const opened = await t.services.sessions.open({
      userid: 'WILSON',
      scheme: 'SAML',
      csrfRequired: true,
      withToken: false,
      address: '127.0.0.1',
    });
    const cookie = `JSESSIONID=${opened.sessionCookie}`;
    const alive = async () =>
      (await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } })).statusCode === 200;
    for (const [method, headers] of [
      ['GET', IMAGE_FROM_SAME_SITE],
      ['GET', { ...FORM_FROM_SAME_SITE, 'sec-fetch-site': 'cross-site' }],
      ['POST', FORM_FROM_SAME_SITE],
    ] as const) {
      const response = await t.app.inject({
        method,
        url: '/maximo/saml/logout',
        headers: { cookie, ...headers },
      });
      assertRefused(response, `saml/logout ${method} ${headers['sec-fetch-dest']}`);
      assert.ok(await alive(), 'the session lives on');
    }
    const own = await t.app.inject({
      url: '/maximo/saml/logout',
      headers: { cookie, ...OWN_SCRIPT, 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
    });
    assert.equal(own.statusCode, 302, own.body);
    assert.equal(await alive(), false, 'the link of this service’s page signed out');
  });
});
