import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../../app.js';
import { MAX_REQUESTS, MAX_REQUESTS_PER_ADDRESS } from './service.js';
import { ConfigError, loadConfig } from '../../config.js';
import { json, maxauth, startTestApp, testConfig, type TestApp } from '../../../test/helpers/app.js';
import {
  ACS_URL,
  IDP_CERT_PATH,
  IDP_SSO_URL,
  SAML_ENV,
  SP_ENTITY_ID,
  requestIdOf,
  requestIdOfRedirect,
  samlResponse,
  tampered,
  type ResponseOptions,
} from '../../../test/helpers/saml-idp.js';
import {
  HOSTILE_RETURN_ADDRESSES,
  REVIEWED_RETURN_ADDRESSES,
} from '../../../test/helpers/return-addresses.js';

const ASSETS = '/maximo/oslc/os/mxapiasset?oslc.select=assetnum&oslc.pageSize=1&lean=1';
/** Where a browser goes when it asked for nothing acceptable: the sign-in page. */
const SIGN_IN = '/maximo/signin';

function assertRefused(response: LightMyRequestResponse, reasonCode: string, text?: RegExp): void {
  assert.equal(response.statusCode, 401, response.body);
  const error = json(response).Error;
  assert.equal(error?.reasonCode, reasonCode, response.body);
  if (text) assert.match(String(error?.message), text);
  assert.equal(response.headers['set-cookie'], undefined, 'a refused response opens no session');
}

function sessionCookie(response: LightMyRequestResponse): string {
  const cookies = [response.headers['set-cookie'] ?? []].flat();
  const session = cookies.find((cookie) => cookie.startsWith('JSESSIONID='));
  assert.ok(session, `a session cookie in ${JSON.stringify(cookies)}`);
  return session.split(';')[0]!;
}

/** The browser's cookie of started sign-ins (`EAS_SAML_REQUESTS`), as the last start left it. */
let startedCookie = '';

/** Keeps the request cookie a sign-in start sets, as the browser would. */
function keepStartedCookie(response: LightMyRequestResponse): void {
  const set = [response.headers['set-cookie'] ?? []]
    .flat()
    .find((cookie) => cookie.startsWith('EAS_SAML_REQUESTS='));
  assert.ok(set, 'the start sets the request cookie');
  assert.match(set, /; SameSite=None/i);
  assert.match(set, /; Secure/i);
  startedCookie = set.split(';')[0]!;
}

/** Starts a sign-in on `app` (HTTP-Redirect binding) and returns the request id the provider would answer. */
async function startLogin(app: FastifyInstance, returnTo = '/maximo/oslc/whoami'): Promise<string> {
  const response = await app.inject({
    url: `/maximo/saml/login?returnTo=${encodeURIComponent(returnTo)}`,
    headers: startedCookie === '' ? {} : { cookie: startedCookie },
  });
  assert.equal(response.statusCode, 302, response.body);
  keepStartedCookie(response);
  return requestIdOfRedirect(String(response.headers.location));
}

/** Posts the response to the ACS as the browser would, with the cookie of the sign-ins it started. */
function postResponse(
  app: FastifyInstance,
  samlResponseValue: string,
  relayState?: string,
  cookie = startedCookie,
) {
  const form = new URLSearchParams({ SAMLResponse: samlResponseValue });
  if (relayState !== undefined) form.set('RelayState', relayState);
  return app.inject({
    method: 'POST',
    url: '/maximo/saml/acs',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie !== '' && { cookie }) },
    payload: form.toString(),
  });
}

describe('SAML service provider', () => {
  let t: TestApp;
  /** A second instance on the same database: another process as far as the service is concerned. */
  let other: FastifyInstance;

  before(async () => {
    t = await startTestApp(SAML_ENV);
    other = (await buildApp(testConfig({ ...SAML_ENV, EAS_SERVER_NAME: 'OTHER' }), t.storage)).app;
    await other.ready();
  });
  after(async () => {
    await other.close();
    await t.close();
  });

  /** A response to a fresh request of this service, as the provider would sign it. */
  async function answer(options: ResponseOptions = {}): Promise<string> {
    return samlResponse({ requestId: await startLogin(t.app), ...options });
  }

  test('serves the SP metadata: entity id and the ACS with the HTTP-POST binding', async () => {
    const response = await t.app.inject({ url: '/maximo/saml/metadata' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/samlmetadata\+xml/);
    assert.match(response.body, new RegExp(`entityID="${SP_ENTITY_ID}"`));
    assert.match(
      response.body,
      new RegExp(
        `AssertionConsumerService[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"[^>]*Location="${ACS_URL}"`,
      ),
    );
  });

  test('starts sign-in with a redirect to the provider carrying the request and the return address', async () => {
    const response = await t.app.inject({ url: '/maximo/saml/login?returnTo=%2Fmaximo%2Foslc%2Fwhoami' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers['cache-control'], 'no-store');
    const location = new URL(String(response.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, IDP_SSO_URL);
    assert.equal(location.searchParams.get('RelayState'), '/maximo/oslc/whoami');
    assert.match(requestIdOfRedirect(location.href), /^_/);
  });

  test('a return address on another origin is replaced by the sign-in page; one on this origin becomes a path', async () => {
    const relayOf = async (returnTo: string) => {
      const response = await t.app.inject({
        url: `/maximo/saml/login?returnTo=${encodeURIComponent(returnTo)}`,
      });
      assert.equal(response.statusCode, 302);
      return new URL(String(response.headers.location)).searchParams.get('RelayState');
    };
    for (const returnTo of [
      ...REVIEWED_RETURN_ADDRESSES,
      'https://evil.example/',
      '//evil.example/x',
      '/\\evil.example',
      '/\t/evil.example',
    ]) {
      assert.equal(await relayOf(returnTo), SIGN_IN, returnTo);
    }
    assert.equal(await relayOf('https://eas.test/maximo/oslc/whoami?lean=1'), '/maximo/oslc/whoami?lean=1');
  });

  test('a valid signed assertion signs in: FORM-login cookies, redirect to the page asked, session works on /oslc', async () => {
    const requestId = await startLogin(t.app, '/maximo/oslc/whoami');
    const response = await postResponse(
      t.app,
      samlResponse({ requestId, nameId: 'wilson' }),
      '/maximo/oslc/whoami',
    );
    assert.equal(response.statusCode, 302, response.body);
    assert.equal(response.headers.location, '/maximo/oslc/whoami');
    const cookies = [response.headers['set-cookie'] ?? []].flat();
    assert.ok(cookies[0]?.startsWith('JSESSIONID='), 'the session cookie first');
    assert.ok(
      cookies.some((cookie) => cookie.startsWith('LtpaToken2=')),
      'and the token cookie',
    );
    const cookie = sessionCookie(response);
    const whoami = await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } });
    assert.equal(whoami.statusCode, 200, whoami.body);
    assert.equal(json(whoami).userid, 'WILSON');
    const assets = await t.app.inject({ url: ASSETS, headers: { cookie } });
    assert.equal(assets.statusCode, 200, assets.body);
    assert.equal(json(assets).member?.length, 1);
    const api = await t.app.inject({ url: ASSETS.replace('/oslc/', '/api/'), headers: { cookie } });
    assert.equal(api.statusCode, 401, '/api takes API keys only');
  });

  test('a response signed as a whole (assertion unsigned) is accepted too', async () => {
    const response = await postResponse(t.app, await answer({ sign: 'response' }));
    assert.equal(response.statusCode, 302, response.body);
    sessionCookie(response);
  });

  test('password logins are not offered in saml mode', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login',
      headers: maxauth('WILSON'),
    });
    assert.equal(response.statusCode, 401);
    assert.equal(json(response).Error?.reasonCode, 'EAS0041E');
  });

  test('an unsigned response is refused', async () => {
    assertRefused(await postResponse(t.app, await answer({ sign: 'none' })), 'EAS0150E', /not signed/);
  });

  test('a response signed by another key is refused', async () => {
    assertRefused(await postResponse(t.app, await answer({ key: 'other' })), 'EAS0150E', /not signed/);
  });

  test('an assertion changed after signing is refused', async () => {
    const forged = tampered(await answer({ nameId: 'smith' }), '>smith<', '>maxadmin<');
    assertRefused(await postResponse(t.app, forged), 'EAS0150E', /not signed/);
  });

  test('an assertion for another audience is refused', async () => {
    const response = await postResponse(t.app, await answer({ audience: 'https://other-sp.test/saml' }));
    assertRefused(response, 'EAS0150E', /another audience/);
  });

  test('an expired assertion is refused, and one not valid yet', async () => {
    const past = Date.now() - 10 * 60_000;
    const expired = await answer({ notBefore: new Date(past - 60_000), notOnOrAfter: new Date(past) });
    assertRefused(await postResponse(t.app, expired), 'EAS0150E', /expired/);
    const future = Date.now() + 10 * 60_000;
    const early = await answer({ notBefore: new Date(future), notOnOrAfter: new Date(future + 60_000) });
    assertRefused(await postResponse(t.app, early), 'EAS0150E', /not valid yet/);
  });

  test('an assertion within the clock skew is accepted', async () => {
    // 30 s past its end, within the default skew of 60 s.
    const now = Date.now();
    const late = await answer({ notBefore: new Date(now - 120_000), notOnOrAfter: new Date(now - 30_000) });
    assert.equal((await postResponse(t.app, late)).statusCode, 302);
  });

  test('an assertion for another recipient is refused', async () => {
    const response = await postResponse(t.app, await answer({ recipient: 'https://other-sp.test/acs' }));
    assertRefused(response, 'EAS0150E', /another recipient/);
  });

  test('a response addressed to another destination is refused', async () => {
    const response = await postResponse(t.app, await answer({ destination: 'https://other-sp.test/acs' }));
    assertRefused(response, 'EAS0150E', /addressed to https:\/\/other-sp\.test\/acs/);
  });

  test('a response from another issuer is refused', async () => {
    const response = await postResponse(t.app, await answer({ issuer: 'https://other-idp.test' }));
    assertRefused(response, 'EAS0150E', /another identity provider/);
  });

  test('a response to no request of this service, or to none at all, is refused', async () => {
    assertRefused(
      await postResponse(t.app, samlResponse({ requestId: '_never-sent' })),
      'EAS0150E',
      /no sign-in request/,
    );
    assertRefused(await postResponse(t.app, samlResponse({})), 'EAS0150E', /no sign-in request/);
  });

  test('a response brought by a browser that did not start its sign-in is refused (login CSRF)', async () => {
    const response = await answer();
    assertRefused(
      await postResponse(t.app, response, undefined, ''),
      'EAS0150E',
      /this browser did not start/,
    );
    const mine = startedCookie;
    startedCookie = '';
    await startLogin(t.app);
    const otherBrowser = startedCookie;
    startedCookie = mine;
    assertRefused(await postResponse(t.app, response, undefined, otherBrowser), 'EAS0150E', /did not start/);
    assert.equal(
      (await postResponse(t.app, response)).statusCode,
      302,
      'the browser that started it signs in',
    );
  });

  test('the request cookie remembers the latest sign-ins, and a successful one clears it', async () => {
    const first = await startLogin(t.app);
    const second = await startLogin(t.app);
    assert.match(startedCookie, new RegExp(`${first}~${second}$`));
    const response = await postResponse(t.app, samlResponse({ requestId: first }));
    assert.equal(response.statusCode, 302, response.body);
    const cleared = [response.headers['set-cookie'] ?? []].flat();
    assert.ok(cleared[0]!.startsWith('JSESSIONID='), 'the session cookie first');
    assert.ok(cleared.some((cookie) => /^EAS_SAML_REQUESTS=;.*Max-Age=0/i.test(cookie)));
  });

  test('a replayed assertion is refused, on this instance and on another one', async () => {
    const response = await answer();
    assert.equal((await postResponse(t.app, response)).statusCode, 302);
    assertRefused(await postResponse(t.app, response), 'EAS0151E');
    assertRefused(await postResponse(other, response), 'EAS0151E');
  });

  test('the same assertion sent to two instances at once signs in exactly once', async () => {
    const response = await answer();
    const results = await Promise.all([postResponse(t.app, response), postResponse(other, response)]);
    assert.deepEqual(results.map((result) => result.statusCode).sort(), [302, 401]);
    assert.equal(results.find((result) => result.statusCode === 401)!.json().Error.reasonCode, 'EAS0151E');
  });

  test('a request started on one instance is answered on the other', async () => {
    const requestId = await startLogin(other);
    const response = await postResponse(t.app, samlResponse({ requestId }));
    assert.equal(response.statusCode, 302, response.body);
  });

  test('the sign-in page offers the provider; sign-out ends the session here and returns to the page', async () => {
    const page = await t.app.inject({ url: SIGN_IN });
    assert.equal(page.statusCode, 200);
    assert.match(
      page.body,
      /href="\/maximo\/saml\/login\?returnTo=%2Fmaximo%2Fsignin">Sign in with SAML single sign-on</,
    );
    const signedIn = await postResponse(t.app, await answer());
    const cookie = sessionCookie(signedIn);
    assert.equal((await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } })).statusCode, 200);
    const logout = await t.app.inject({
      method: 'POST',
      url: '/maximo/saml/logout',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    assert.equal(logout.statusCode, 302);
    assert.equal(logout.headers.location, SIGN_IN);
    const after = await other.inject({ url: '/maximo/oslc/whoami', headers: { cookie } });
    assert.equal(after.statusCode, 401, 'the session ended for every instance');
  });

  test('a user the service does not know is refused (EAS_FEDERATED_CREATE_USERS off)', async () => {
    assertRefused(await postResponse(t.app, await answer({ nameId: 'nobody' })), 'EAS0191E', /NOBODY/);
  });

  test('a RelayState that is not a path on this server returns to the landing page', async () => {
    for (const relay of ['https://evil.example/', '//evil.example', ...HOSTILE_RETURN_ADDRESSES]) {
      const response = await postResponse(t.app, await answer(), relay);
      assert.equal(response.statusCode, 302, response.body);
      assert.equal(response.headers.location, SIGN_IN, relay);
    }
  });

  test('consumed assertions and requests are deleted once their validity ended', async () => {
    await sql`insert into samlassertion (assertionid, userid, consumed, expires)
              values ('_old-assertion', 'WILSON', now() - interval '2 hours', now() - interval '1 hour')`.execute(
      t.storage.db,
    );
    await sql`insert into samlrequest (requestid, issued, expires)
              values ('_old-request', now() - interval '2 hours', now() - interval '1 hour')`.execute(
      t.storage.db,
    );
    assert.equal((await postResponse(t.app, await answer())).statusCode, 302);
    const left = await sql<{ id: string }>`
      select assertionid as id from samlassertion where assertionid = '_old-assertion'
      union all select requestid from samlrequest where requestid = '_old-request'`.execute(t.storage.db);
    assert.deepEqual(left.rows, []);
  });

  test('a response signed with SHA-1 is refused; accepted only where EAS_SAML_ALLOW_SHA1 is set', async () => {
    for (const sign of ['assertion', 'response'] as const) {
      const refused = await postResponse(t.app, await answer({ sign, algorithm: 'sha1' }));
      assertRefused(refused, 'EAS0150E', /SHA-1/);
    }
    const lenient = (await buildApp(testConfig({ ...SAML_ENV, EAS_SAML_ALLOW_SHA1: '1' }), t.storage)).app;
    try {
      const requestId = await startLogin(lenient);
      const accepted = await postResponse(lenient, samlResponse({ requestId, algorithm: 'sha1' }));
      assert.equal(accepted.statusCode, 302, accepted.body);
      assert.equal(accepted.headers.location, SIGN_IN);
    } finally {
      await lenient.close();
    }
  });

  /** Requests waiting for an answer, from `address`. */
  async function outstanding(address: string): Promise<number> {
    const { rows } = await sql<{ count: string }>`
      select count(*) as count from samlrequest where address = ${address} and expires > now()`.execute(
      t.storage.db,
    );
    return Number(rows[0]!.count);
  }

  test("300 unauthenticated starts from one address store at most a minute's worth of requests; the rest are 429", async () => {
    // The default bound (the shared settings raise it for the other tests).
    const { EAS_FEDERATED_STARTS_PER_MINUTE: _raised, ...defaults } = SAML_ENV;
    const bounded = (await buildApp(testConfig(defaults), t.storage)).app;
    try {
      const address = '192.0.2.30';
      const before = await outstanding(address);
      const statuses = new Map<number, number>();
      let refusal: LightMyRequestResponse | undefined;
      for (let index = 0; index < 300; index += 1) {
        const response = await bounded.inject({ url: '/maximo/saml/login', remoteAddress: address });
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        if (response.statusCode === 429) refusal ??= response;
      }
      assert.equal(statuses.get(302), 60, JSON.stringify([...statuses]));
      assert.equal(statuses.get(429), 240);
      assert.equal((await outstanding(address)) - before, 60, 'one row per admitted start only');
      assert.equal(json(refusal!).Error?.reasonCode, 'EAS0195E');
      assert.equal(json(refusal!).Error?.statusCode, '429');
      assert.match(String(refusal!.headers['retry-after']), /^\d+$/);
      const elsewhere = await bounded.inject({ url: '/maximo/saml/login', remoteAddress: '192.0.2.31' });
      assert.equal(elsewhere.statusCode, 302, 'another address is not held back');
    } finally {
      await bounded.close();
    }
  });

  test("an address's unanswered requests are bounded across processes: its oldest are forgotten", async () => {
    const address = '192.0.2.40';
    await sql`insert into samlrequest (requestid, issued, expires, address)
              select '_flood' || n, now() - n * interval '1 second', now() + interval '1 hour', ${address}
              from generate_series(1, 150) as n`.execute(t.storage.db);
    const response = await t.app.inject({ url: '/maximo/saml/login', remoteAddress: address });
    assert.equal(response.statusCode, 302, response.body);
    assert.equal(await outstanding(address), MAX_REQUESTS_PER_ADDRESS);
    const newest = requestIdOfRedirect(String(response.headers.location));
    const kept = await sql<{ id: string }>`
      select requestid as id from samlrequest where requestid in (${newest}, '_flood1', '_flood150')`.execute(
      t.storage.db,
    );
    assert.deepEqual(kept.rows.map((row) => row.id).sort(), [newest, '_flood1'].sort(), 'the newest kept');
  });

  test('when every address together leaves too many requests unanswered, new starts are refused 429', async () => {
    await sql`insert into samlrequest (requestid, issued, expires, address)
              select '_many' || n, now(), now() + interval '1 hour', '198.51.100.' || (n % 200)
              from generate_series(1, ${MAX_REQUESTS}) as n`.execute(t.storage.db);
    try {
      const refused = await t.app.inject({ url: '/maximo/saml/login', remoteAddress: '192.0.2.50' });
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(json(refused).Error?.reasonCode, 'EAS0195E');
    } finally {
      await sql`delete from samlrequest where requestid like '_many%'`.execute(t.storage.db);
    }
    const admitted = await t.app.inject({ url: '/maximo/saml/login', remoteAddress: '192.0.2.50' });
    assert.equal(admitted.statusCode, 302, admitted.body);
  });
});

describe('SAML settings', () => {
  test('the user id may come from an attribute, the request may travel by the HTTP-POST binding, unknown users may be created', async () => {
    const t = await startTestApp({
      ...SAML_ENV,
      EAS_SAML_USER_ATTRIBUTE: 'uid',
      EAS_SAML_REQUEST_BINDING: 'post',
      EAS_FEDERATED_CREATE_USERS: '1',
      EAS_FEDERATED_DEFAULT_GROUP: 'viewer',
    });
    try {
      const start = await t.app.inject({ url: '/maximo/saml/login' });
      assert.equal(start.statusCode, 200);
      keepStartedCookie(start);
      assert.match(start.body, new RegExp(`<form method="post" action="${IDP_SSO_URL}">`));
      const field = /name="SAMLRequest" value="([^"]+)"/.exec(start.body)?.[1];
      assert.ok(field, 'the request as a form field');
      const requestId = requestIdOf(Buffer.from(field, 'base64').toString('utf8'));
      const relay = /name="RelayState" value="([^"]+)"/.exec(start.body)?.[1];
      const response = await postResponse(
        t.app,
        samlResponse({ requestId, nameId: 'someone@idp.test', attributes: { uid: 'smith' } }),
        relay,
      );
      assert.equal(response.statusCode, 302, response.body);
      assert.equal(response.headers.location, SIGN_IN);
      const whoami = await t.app.inject({
        url: '/maximo/oslc/whoami',
        headers: { cookie: sessionCookie(response) },
      });
      assert.equal(json(whoami).userid, 'SMITH');
      const without = samlResponse({ requestId, nameId: 'smith' });
      assertRefused(await postResponse(t.app, without), 'EAS0150E', /no value for the attribute uid/);
      const newcomer = await postResponse(
        t.app,
        samlResponse({ requestId, attributes: { uid: 'newcomer', displayName: 'New Comer' } }),
      );
      assert.equal(newcomer.statusCode, 302, newcomer.body);
      const created = await t.app.inject({
        url: '/maximo/oslc/whoami',
        headers: { cookie: sessionCookie(newcomer) },
      });
      assert.equal(json(created).userid, 'NEWCOMER');
      assert.deepEqual(json(created).groups, ['VIEWER']);
      assert.equal(json(created).displayname, 'New Comer');
    } finally {
      await t.close();
    }
  });

  test('saml mode names each missing setting; the SAML routes exist in saml mode only', async () => {
    const base = {
      EAS_AUTH_MODE: 'saml',
      EAS_SAML_IDP_CERT: IDP_CERT_PATH,
      EAS_SAML_IDP_SSO_URL: IDP_SSO_URL,
    };
    assert.throws(
      () => loadConfig(base),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        return error.variable === 'EAS_SAML_ACS_URL';
      },
    );
    assert.throws(
      () => loadConfig({ ...SAML_ENV, EAS_SAML_IDP_CERT: '/no/such/file.pem' }),
      /EAS_SAML_IDP_CERT/,
    );
    const explicit = loadConfig({
      ...base,
      EAS_SAML_ACS_URL: 'https://eas.example/maximo/saml/acs',
      EAS_SAML_SP_ENTITY_ID: 'urn:eas',
    });
    assert.equal(explicit.saml?.spEntityId, 'urn:eas');
    assert.equal(explicit.saml?.idpCertificates.length, 1);
    const native = await startTestApp();
    try {
      assert.equal((await native.app.inject({ url: '/maximo/saml/metadata' })).statusCode, 404);
    } finally {
      await native.close();
    }
  });
});
