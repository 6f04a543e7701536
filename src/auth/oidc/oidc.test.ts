import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { generateKeyPair } from 'jose';
import { buildApp, type BuiltApp } from '../../app.js';
import { json, maxauth, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { PROVIDER_PASSWORD, startProvider, type TestProvider } from '../../../test/oidc/provider.js';
import { REVIEWED_RETURN_ADDRESSES } from '../../../test/helpers/return-addresses.js';

const CLIENT = {
  clientId: 'eas-test',
  clientSecret: 'eas-test-client-secret',
  redirectUri: 'http://127.0.0.1:7001/maximo/oidc/callback',
  postLogoutRedirectUri: 'http://127.0.0.1:7001/maximo/signin',
};

/** `name=value` pairs of a response's Set-Cookie headers, in order. */
function setCookies(response: LightMyRequestResponse): Array<{ name: string; value: string }> {
  const raw = response.headers['set-cookie'];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.map((line) => {
    const pair = line.split(';')[0]!;
    const equals = pair.indexOf('=');
    return { name: pair.slice(0, equals), value: pair.slice(equals + 1) };
  });
}

function cookieHeader(cookies: Array<{ name: string; value: string }>): string {
  return cookies
    .filter((cookie) => cookie.value !== '')
    .map((cookie) => `${cookie.name}=${cookie.value}`)
    .join('; ');
}

describe('OpenID Connect sign-in', () => {
  let provider: TestProvider;
  let eas: TestApp;
  /** A second server on the same database: the callback may reach another process than the login. */
  let other: BuiltApp;

  before(async () => {
    provider = await startProvider(CLIENT);
    const settings = {
      EAS_AUTH_MODE: 'oidc',
      EAS_OIDC_ISSUER: provider.issuer,
      EAS_OIDC_CLIENT_ID: CLIENT.clientId,
      EAS_OIDC_CLIENT_SECRET: CLIENT.clientSecret,
      EAS_OIDC_REDIRECT_URL: CLIENT.redirectUri,
      EAS_OIDC_PROVIDER_NAME: 'Test provider',
    };
    eas = await startTestApp(settings);
    other = await buildApp(eas.config, eas.storage);
    await other.app.ready();
  });
  after(async () => {
    await other.app.close();
    await eas.close();
    await provider.close();
  });

  /** Starts a sign-in at the service: the provider's URL and the state cookie. */
  async function begin(returnTo = '/maximo/oslc/whoami?lean=1') {
    const start = await eas.app.inject({
      method: 'GET',
      url: `/maximo/oidc/login?returnTo=${encodeURIComponent(returnTo)}`,
    });
    assert.equal(start.statusCode, 302, start.body);
    const authorizationUrl = new URL(start.headers.location as string);
    assert.equal(authorizationUrl.origin, provider.issuer);
    return { authorizationUrl, stateCookie: cookieHeader(setCookies(start)) };
  }

  /** Drives the provider as a browser would (its login form included), up to the redirect back to the service. */
  async function throughProvider(authorizationUrl: URL, login: string): Promise<URL> {
    const jar = new Map<string, string>();
    let url = authorizationUrl.href;
    let init: RequestInit = {};
    for (let step = 0; step < 10; step += 1) {
      const response = await fetch(url, {
        ...init,
        redirect: 'manual',
        headers: {
          ...(init.headers as Record<string, string>),
          cookie: [...jar].map(([n, v]) => `${n}=${v}`).join('; '),
        },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const equals = pair!.indexOf('=');
        jar.set(pair!.slice(0, equals), pair!.slice(equals + 1));
      }
      const location = response.headers.get('location');
      if (location) {
        const next = new URL(location, url);
        if (next.href.startsWith(CLIENT.redirectUri)) return next;
        url = next.href;
        init = {};
        continue;
      }
      const page = await response.text();
      const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
      assert.ok(action, `a login form at the provider: ${page.slice(0, 300)}`);
      url = new URL(action, url).href;
      init = {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ login, password: PROVIDER_PASSWORD }).toString(),
      };
    }
    throw new Error('the provider did not send the browser back');
  }

  async function callback(app: BuiltApp['app'], url: URL, cookie: string) {
    return app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: { cookie } });
  }

  async function signIn(login = 'wilson', returnTo?: string) {
    const { authorizationUrl, stateCookie } = await begin(returnTo);
    const back = await throughProvider(authorizationUrl, login);
    return { response: await callback(other.app, back, stateCookie), authorizationUrl, stateCookie, back };
  }

  test('the code flow with PKCE signs the browser in with the FORM login cookies, on any process', async () => {
    const { response, authorizationUrl } = await signIn();
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(authorizationUrl.searchParams.get('nonce'));
    assert.equal(response.statusCode, 302, response.body);
    assert.equal(response.headers.location, '/maximo/oslc/whoami?lean=1');
    const cookies = setCookies(response);
    assert.deepEqual(
      cookies.map((cookie) => cookie.name),
      ['JSESSIONID', 'LtpaToken2', 'EAS_OIDC_STATE'],
    );
    assert.equal(cookies[2]!.value, '', 'the spent state cookie is cleared');
    const whoami = await eas.app.inject({
      method: 'GET',
      url: '/maximo/oslc/whoami?lean=1',
      headers: { cookie: cookieHeader(cookies) },
    });
    assert.equal(whoami.statusCode, 200, whoami.body);
    assert.equal(json(whoami).userid, 'WILSON');
  });

  test('a return address on another origin lands on the sign-in page', async () => {
    const { response } = await signIn('wilson', 'https://evil.example/steal');
    assert.equal(response.statusCode, 302, response.body);
    assert.equal(response.headers.location, '/maximo/signin');
  });

  test('a return address that normalises to another host lands on the sign-in page after the callback', async () => {
    for (const returnTo of [
      ...REVIEWED_RETURN_ADDRESSES,
      '/%2fevil.com',
      '/\\evil.com',
      'javascript:alert(1)',
    ]) {
      const { response } = await signIn('wilson', returnTo);
      assert.equal(response.statusCode, 302, response.body);
      assert.equal(response.headers.location, '/maximo/signin', returnTo);
    }
  });

  test("sign-in starts are bounded per client address: 429 with Retry-After past a minute's worth", async () => {
    const start = (remoteAddress: string) => other.app.inject({ url: '/maximo/oidc/login', remoteAddress });
    for (let index = 0; index < 60; index += 1) assert.equal((await start('192.0.2.70')).statusCode, 302);
    const refused = await start('192.0.2.70');
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(json(refused).Error?.reasonCode, 'EAS0195E');
    assert.match(String(refused.headers['retry-after']), /^\d+$/);
    assert.equal((await start('192.0.2.71')).statusCode, 302, 'another address is not held back');
  });

  test('/oslc takes the browser session and creates the user its key; /api takes only that key', async () => {
    const { response } = await signIn('smith');
    const cookie = cookieHeader(setCookies(response));
    const page = await eas.app.inject({ method: 'GET', url: '/maximo/signin', headers: { cookie } });
    const csrftoken = /<meta name="csrftoken" content="([^"]+)">/.exec(page.body)?.[1];
    assert.ok(csrftoken, 'the sign-in page hands the session its CSRF token');

    const withoutToken = await eas.app.inject({
      method: 'POST',
      url: '/maximo/oslc/apitoken/create',
      headers: { cookie, 'content-type': 'application/json' },
      payload: { expiration: -1 },
    });
    assert.equal(json(withoutToken).Error?.reasonCode, 'EAS0040E');
    const created = await eas.app.inject({
      method: 'POST',
      url: '/maximo/oslc/apitoken/create',
      headers: { cookie, csrftoken, 'content-type': 'application/json' },
      payload: { expiration: -1 },
    });
    assert.equal(created.statusCode, 200, created.body);
    const apikey = json(created).apikey as string;

    const bySession = await eas.app.inject({ method: 'GET', url: '/maximo/api/whoami', headers: { cookie } });
    assert.equal(bySession.statusCode, 401);
    const byKey = await eas.app.inject({ method: 'GET', url: '/maximo/api/whoami', headers: { apikey } });
    assert.equal(byKey.statusCode, 200, byKey.body);
    assert.equal(json(byKey).userid, 'SMITH');
  });

  test('password logins are not offered in the oidc mode', async () => {
    const login = await eas.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login',
      headers: maxauth('WILSON'),
    });
    assert.equal(login.statusCode, 401);
    assert.equal(json(login).Error?.reasonCode, 'EAS0041E');
  });

  test('a user the service does not know is refused, without a session', async () => {
    const { response } = await signIn('stranger');
    assert.equal(response.statusCode, 401);
    assert.equal(json(response).Error?.reasonCode, 'EAS0191E');
    assert.deepEqual(
      setCookies(response).filter((cookie) => cookie.name === 'JSESSIONID'),
      [],
    );
  });

  test('a tampered state, a missing or altered state cookie are refused', async () => {
    const { authorizationUrl, stateCookie } = await begin();
    const back = await throughProvider(authorizationUrl, 'wilson');
    const tampered = new URL(back);
    tampered.searchParams.set('state', `${back.searchParams.get('state')}x`);
    const altered = stateCookie.replace(/=(.)/, (_match, first: string) => `=${first === 'A' ? 'B' : 'A'}`);
    for (const [url, cookie] of [
      [tampered, stateCookie],
      [back, ''],
      [back, altered],
    ] as const) {
      const response = await callback(eas.app, url, cookie);
      assert.equal(response.statusCode, 401, response.body);
      assert.equal(json(response).Error?.reasonCode, 'EAS0190E');
      assert.equal(setCookies(response).length, 0, 'no session');
    }
  });

  describe('ID tokens the provider would not issue', () => {
    after(() => {
      provider.answerTokenRequest = undefined;
    });

    /** The callback answered with a crafted ID token; `nonce` is the one the service sent with the request. */
    async function withIdToken(craft: (nonce: string) => Promise<string>) {
      const { authorizationUrl, stateCookie } = await begin();
      const nonce = authorizationUrl.searchParams.get('nonce')!;
      const state = authorizationUrl.searchParams.get('state')!;
      provider.answerTokenRequest = async () => ({
        access_token: 'crafted',
        token_type: 'Bearer',
        expires_in: 300,
        id_token: await craft(nonce),
      });
      const back = new URL(
        `${CLIENT.redirectUri}?code=crafted&state=${encodeURIComponent(state)}&iss=${encodeURIComponent(provider.issuer)}`,
      );
      return callback(eas.app, back, stateCookie);
    }

    test('a well-formed one is accepted (the harness itself signs in)', async () => {
      const response = await withIdToken((nonce) => provider.craftIdToken({ nonce }));
      assert.equal(response.statusCode, 302, response.body);
    });

    const refusals: Array<[string, RegExp, (nonce: string) => Promise<string>]> = [
      ['wrong nonce', /"nonce"/, () => provider.craftIdToken({ nonce: 'another-nonce' })],
      [
        'expired',
        /"exp"/,
        (nonce) =>
          provider.craftIdToken({
            nonce,
            iat: Math.floor(Date.now() / 1000) - 3600,
            exp: Math.floor(Date.now() / 1000) - 1800,
          }),
      ],
      [
        'issued an hour in the future',
        /"iat"/,
        (nonce) =>
          provider.craftIdToken({
            nonce,
            iat: Math.floor(Date.now() / 1000) + 3600,
            exp: Math.floor(Date.now() / 1000) + 7200,
          }),
      ],
      [
        'issued beyond the skew in the future',
        /"iat"/,
        (nonce) => provider.craftIdToken({ nonce, iat: Math.floor(Date.now() / 1000) + 120 }),
      ],
      ['wrong audience', /"aud"/, (nonce) => provider.craftIdToken({ nonce, aud: 'another-client' })],
      ['wrong issuer', /"iss"/, (nonce) => provider.craftIdToken({ nonce, iss: 'http://127.0.0.1:1' })],
      [
        'wrong signature',
        /signature/,
        async (nonce) =>
          provider.craftIdToken({ nonce }, { key: (await generateKeyPair('RS256')).privateKey }),
      ],
    ];
    for (const [name, check, craft] of refusals) {
      test(`${name}: refused`, async () => {
        const response = await withIdToken(craft);
        assert.equal(response.statusCode, 401, response.body);
        assert.equal(json(response).Error?.reasonCode, 'EAS0190E');
        assert.match(String(json(response).Error?.message), check, 'refused for that reason');
        assert.equal(setCookies(response).length, 0, 'no session');
      });
    }
  });

  test('logout ends the session everywhere and offers the provider logout', async () => {
    const { response } = await signIn();
    const cookie = cookieHeader(setCookies(response));
    const logout = await eas.app.inject({ method: 'GET', url: '/maximo/oidc/logout', headers: { cookie } });
    assert.equal(logout.statusCode, 302);
    const atProvider = new URL(logout.headers.location as string);
    assert.equal(atProvider.origin, provider.issuer);
    assert.equal(atProvider.searchParams.get('client_id'), CLIENT.clientId);
    assert.ok(
      setCookies(logout).every((set) => set.value === ''),
      'cookies cleared',
    );
    const after = await other.app.inject({ method: 'GET', url: '/maximo/oslc/whoami', headers: { cookie } });
    assert.equal(after.statusCode, 401);
  });

  test('the sign-in page offers the provider to a browser without a session', async () => {
    const page = await eas.app.inject({ method: 'GET', url: '/maximo/signin' });
    assert.equal(page.statusCode, 200);
    assert.match(
      page.body,
      /href="\/maximo\/oidc\/login\?returnTo=%2Fmaximo%2Fsignin">Sign in with Test provider</,
    );
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
    assert.doesNotMatch(page.body, /https?:\/\//, 'no external assets');
  });
});
