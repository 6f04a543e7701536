import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { generateKeyPair } from 'jose';
import { buildApp, type BuiltApp } from '../../app.js';
import { json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { startProvider, throughProvider, type TestProvider } from '../../../test/oidc/provider.js';
import { clientKeyOf } from './client-key.js';

/**
 * OpenID Connect back-channel logout and `private_key_jwt` client authentication against the real provider
 * (oidc-provider, test/oidc/provider.ts): docs/federated-login.md, "Single logout" and "Client authentication".
 */
const CLIENT = {
  clientId: 'eas-keyed',
  clientSecret: 'unused-by-private-key-jwt-clients',
  redirectUri: 'http://127.0.0.1:7002/maximo/oidc/callback',
  postLogoutRedirectUri: 'http://127.0.0.1:7002/maximo/signin',
};

function sessionCookie(response: LightMyRequestResponse): string {
  const cookies = [response.headers['set-cookie'] ?? []].flat().map((line) => line.split(';')[0]!);
  return cookies.filter((cookie) => !cookie.endsWith('=')).join('; ');
}

describe('OpenID Connect: private_key_jwt and back-channel logout', () => {
  let provider: TestProvider;
  let eas: TestApp;
  /** A second server on the same database: another process as far as sessions go. */
  let other: BuiltApp;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

  before(async () => {
    const publicJwk = (await clientKeyOf(pem)).publicJwk;
    provider = await startProvider({ ...CLIENT, jwks: { keys: [publicJwk] } });
    eas = await startTestApp({
      EAS_AUTH_MODE: 'oidc',
      EAS_OIDC_ISSUER: provider.issuer,
      EAS_OIDC_CLIENT_ID: CLIENT.clientId,
      EAS_OIDC_CLIENT_KEY: pem,
      EAS_OIDC_REDIRECT_URL: CLIENT.redirectUri,
    });
    other = await buildApp(eas.config, eas.storage);
    await other.app.ready();
  });
  after(async () => {
    await other.app.close();
    await eas.close();
    await provider.close();
  });

  /** Signs `login` in through the provider, on `app`: the cookies of the session. */
  async function signIn(app: BuiltApp['app'], login: string): Promise<string> {
    const start = await app.inject({ url: '/maximo/oidc/login' });
    assert.equal(start.statusCode, 302, start.body);
    const back = await throughProvider(String(start.headers.location), login, CLIENT.redirectUri);
    const done = await app.inject({
      url: `${back.pathname}${back.search}`,
      headers: { cookie: sessionCookie(start) },
    });
    assert.equal(done.statusCode, 302, done.body);
    return sessionCookie(done);
  }

  async function status(app: BuiltApp['app'], cookie: string): Promise<number> {
    return (await app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } })).statusCode;
  }

  function postLogoutToken(app: BuiltApp['app'], token: string) {
    return app.inject({
      method: 'POST',
      url: '/maximo/oidc/backchannel-logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ logout_token: token }).toString(),
    });
  }

  test('signs in with private_key_jwt client authentication; the public key is published, the private one not', async () => {
    const cookie = await signIn(eas.app, 'wilson');
    assert.equal(await status(eas.app, cookie), 200);
    const jwks = await eas.app.inject({ url: '/maximo/oidc/jwks' });
    assert.equal(jwks.statusCode, 200);
    const keys = (json(jwks) as unknown as { keys: Array<Record<string, unknown>> }).keys;
    assert.equal(keys.length, 1);
    assert.equal(keys[0]!.kty, 'RSA');
    assert.equal(keys[0]!.d, undefined, 'no private member');
  });

  test("the provider's logout token ends that user's sessions on every process, and only theirs", async () => {
    const here = await signIn(eas.app, 'wilson');
    const there = await signIn(other.app, 'wilson');
    const smith = await signIn(other.app, 'smith');
    const token = await provider.logoutToken('wilson');
    assert.ok(token, 'the provider sent a logout token');
    const answered = await postLogoutToken(eas.app, token);
    assert.equal(answered.statusCode, 200, answered.body);
    assert.equal(answered.headers['cache-control'], 'no-store');
    assert.equal(await status(other.app, here), 401, 'ended on the other process');
    assert.equal(await status(other.app, there), 401);
    assert.equal(await status(eas.app, there), 401);
    assert.equal(await status(eas.app, smith), 200, "another user's session stays");
  });

  test('an ID token, a token signed by another key or for another client is refused and ends nothing', async () => {
    const cookie = await signIn(eas.app, 'wilson');
    const { privateKey: stranger } = await generateKeyPair('RS256');
    const events = { 'http://schemas.openid.net/event/backchannel-logout': {} };
    const refusals = [
      await provider.craftIdToken({ sub: 'wilson', aud: CLIENT.clientId }),
      await provider.craftIdToken({ sub: 'wilson', events, jti: 'j1' }, { key: stranger }),
      await provider.craftIdToken({ sub: 'wilson', events, jti: 'j2', aud: 'another-client' }),
      await provider.craftIdToken({ sub: 'wilson', events, jti: 'j3', nonce: 'n' }),
    ];
    for (const token of refusals) {
      const response = await postLogoutToken(eas.app, token);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(json(response).Error?.reasonCode, 'EAS0194E');
    }
    assert.equal(await status(other.app, cookie), 200, 'the session stays');
  });

  test('a logout token is used once: replayed to any process it ends nothing, a fresh one still works', async () => {
    await signIn(eas.app, 'wilson');
    const token = await provider.logoutToken('wilson');
    assert.ok(token, 'the provider sent a logout token');
    assert.equal((await postLogoutToken(eas.app, token)).statusCode, 200);
    const since = await signIn(eas.app, 'wilson');
    for (const app of [eas.app, other.app]) {
      const replayed = await postLogoutToken(app, token);
      assert.equal(replayed.statusCode, 400, replayed.body);
      assert.equal(json(replayed).Error?.reasonCode, 'EAS0194E');
      assert.match(String(json(replayed).Error?.message), /used already/);
    }
    assert.equal(await status(other.app, since), 200, 'the session opened after the first use stays');
    const fresh = await provider.logoutToken('wilson');
    assert.equal((await postLogoutToken(other.app, fresh!)).statusCode, 200);
    assert.equal(await status(eas.app, since), 401);
  });

  test('a logout token issued in the future (beyond a minute of skew) or without jti is refused', async () => {
    const cookie = await signIn(eas.app, 'wilson');
    const events = { 'http://schemas.openid.net/event/backchannel-logout': {} };
    const now = Math.floor(Date.now() / 1000);
    const refusals = [
      await provider.craftIdToken({ sub: 'wilson', events, jti: 'future', iat: now + 3600, exp: now + 7200 }),
      await provider.craftIdToken({ sub: 'wilson', events, jti: 'ahead', iat: now + 120, exp: now + 600 }),
      await provider.craftIdToken({ sub: 'wilson', events }),
    ];
    for (const token of refusals) {
      const response = await postLogoutToken(eas.app, token);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(json(response).Error?.reasonCode, 'EAS0194E');
    }
    assert.equal(await status(other.app, cookie), 200, 'the session stays');
    const withinSkew = await provider.craftIdToken({ sub: 'wilson', events, jti: 'skewed', iat: now + 30 });
    assert.equal((await postLogoutToken(eas.app, withinSkew)).statusCode, 200);
    assert.equal(await status(other.app, cookie), 401);
  });
});
