import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ConfigError, loadConfig } from '../../config.js';
import { LOGOUT_REQUEST_WINDOW_MS } from './service.js';
import { buildApp } from '../../app.js';
import { json, startTestApp, testConfig, type TestApp } from '../../../test/helpers/app.js';
import { IDP_SSO_URL } from '../../../test/helpers/saml-idp.js';
import {
  IDP_SLO_URL,
  SAML_KEYED_ENV,
  SP_CERT_PATH,
  SP_KEY_PATH,
  SP_NEXT_CERT_PATH,
  SP_NEXT_KEY_PATH,
  answerLogin,
  logoutRequestUrl,
  redirectRequest,
  schemaErrors,
  testProvider,
  type TestProvider,
} from '../../../test/helpers/samlify-idp.js';

/**
 * The service provider against a real identity provider implementation (samlify, test/helpers/samlify-idp.ts):
 * registered from the metadata, signed requests, encrypted assertions, single logout both ways
 * (docs/federated-login.md).
 */

function sessionCookie(response: LightMyRequestResponse): string {
  const cookies = [response.headers['set-cookie'] ?? []].flat();
  const session = cookies.find((cookie) => cookie.startsWith('JSESSIONID='));
  assert.ok(session, `a session cookie in ${JSON.stringify(cookies)}`);
  return session.split(';')[0]!;
}

describe('SAML with an enterprise identity provider (samlify)', () => {
  let t: TestApp;
  let provider: TestProvider;
  let metadata: string;

  before(async () => {
    t = await startTestApp(SAML_KEYED_ENV);
    metadata = (await t.app.inject({ url: '/maximo/saml/metadata' })).body;
    provider = testProvider(metadata);
  });
  after(() => t.close());

  /** A sign-in start: the browser's redirect to the provider and its request cookie. */
  async function start(): Promise<{ location: string; cookie: string }> {
    const response = await t.app.inject({ url: '/maximo/saml/login?returnTo=%2Fmaximo%2Foslc%2Fwhoami' });
    assert.equal(response.statusCode, 302, response.body);
    const set = [response.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('EAS_SAML_REQUESTS='));
    return { location: String(response.headers.location), cookie: set!.split(';')[0]! };
  }

  function post(response: string, cookie: string) {
    return t.app.inject({
      method: 'POST',
      url: '/maximo/saml/acs',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      payload: new URLSearchParams({ SAMLResponse: response, RelayState: '/maximo/oslc/whoami' }).toString(),
    });
  }

  /** Signs `nameId` in through the provider; the session cookie and the provider's session index. */
  async function signIn(nameId = 'wilson'): Promise<{ cookie: string; sessionIndex: string }> {
    const started = await start();
    const answer = await answerLogin(provider, started.location, nameId);
    const response = await post(answer.response, started.cookie);
    assert.equal(response.statusCode, 302, response.body);
    return { cookie: sessionCookie(response), sessionIndex: answer.sessionIndex };
  }

  test('the metadata is valid against the SAML metadata schema and carries keys, logout and NameID formats', async () => {
    assert.deepEqual(await schemaErrors(metadata, 'saml-schema-metadata-2.0.xsd'), []);
    assert.match(metadata, /AuthnRequestsSigned="true"/);
    assert.match(metadata, /<md:KeyDescriptor use="signing">/);
    assert.match(metadata, /<md:KeyDescriptor use="encryption">/);
    assert.match(
      metadata,
      /SingleLogoutService Binding="[^"]*HTTP-Redirect" Location="https:\/\/eas.test\/maximo\/saml\/slo"/,
    );
    assert.match(
      metadata,
      /<md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified<\/md:NameIDFormat>/,
    );
    // Not a document the schema happens to accept whatever it holds: a misplaced element is reported.
    const broken = metadata.replace(/(<md:NameIDFormat>[^<]*<\/md:NameIDFormat>)/, '<md:Bogus/>$1');
    assert.notDeepEqual(await schemaErrors(broken, 'saml-schema-metadata-2.0.xsd'), []);
  });

  test('the authentication request is signed (the provider checks it) and valid against the protocol schema', async () => {
    const { location } = await start();
    assert.ok(location.startsWith(IDP_SSO_URL));
    const { query } = redirectRequest(location);
    assert.equal(query.SigAlg, 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    assert.ok(query.Signature);
    await provider.idp.parseLoginRequest(provider.sp, 'redirect', redirectRequest(location));
    const forged = location.replace(/RelayState=[^&]*/, 'RelayState=https%3A%2F%2Fevil.example%2F');
    await assert.rejects(provider.idp.parseLoginRequest(provider.sp, 'redirect', redirectRequest(forged)));
  });

  test('signs in with a signed request and an encrypted, signed assertion', async () => {
    const started = await start();
    const answer = await answerLogin(provider, started.location, 'wilson');
    const xml = Buffer.from(answer.response, 'base64').toString('utf8');
    assert.match(xml, /EncryptedAssertion/);
    assert.doesNotMatch(xml, /<saml:NameID/, 'the user id travels encrypted');
    const response = await post(answer.response, started.cookie);
    assert.equal(response.statusCode, 302, response.body);
    const whoami = await t.app.inject({
      url: '/maximo/oslc/whoami',
      headers: { cookie: sessionCookie(response) },
    });
    assert.equal(json(whoami).userid, 'WILSON');
  });

  test('SP-initiated logout: the session ends and the provider gets a signed LogoutRequest naming it', async () => {
    const { cookie, sessionIndex } = await signIn();
    const logout = await t.app.inject({ url: '/maximo/saml/logout', headers: { cookie } });
    assert.equal(logout.statusCode, 302, logout.body);
    const location = String(logout.headers.location);
    assert.ok(location.startsWith(IDP_SLO_URL), location);
    const parsed = await provider.idp.parseLogoutRequest(provider.sp, 'redirect', redirectRequest(location));
    const extract = parsed.extract as { nameID?: string; sessionIndex?: string };
    assert.equal(extract.nameID, 'wilson');
    assert.equal(extract.sessionIndex, sessionIndex);
    const whoami = await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } });
    assert.equal(whoami.statusCode, 401);

    // The provider's signed answer lands the browser on the sign-in page.
    const answer = provider.idp.createLogoutResponse(
      provider.sp,
      { extract: parsed.extract },
      'redirect',
      '',
    );
    const back = new URL(answer.context);
    const landed = await t.app.inject({ url: `${back.pathname}${back.search}` });
    assert.equal(landed.statusCode, 302, landed.body);
    assert.equal(landed.headers.location, '/maximo/signin');
  });

  test('IdP-initiated logout: the sessions of that user end and the provider gets a signed LogoutResponse', async () => {
    const first = await signIn();
    const second = await signIn();
    const other = await signIn('smith');
    const request = provider.idp.createLogoutRequest(provider.sp, 'redirect', { logoutNameID: 'wilson' });
    const url = new URL(request.context);
    assert.equal(`${url.origin}${url.pathname}`, 'https://eas.test/maximo/saml/slo');
    const answered = await t.app.inject({ url: `${url.pathname}${url.search}` });
    assert.equal(answered.statusCode, 302, answered.body);
    const location = String(answered.headers.location);
    assert.ok(location.startsWith(IDP_SLO_URL), location);
    await provider.idp.parseLogoutResponse(provider.sp, 'redirect', redirectRequest(location));
    for (const { cookie } of [first, second]) {
      const whoami = await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } });
      assert.equal(whoami.statusCode, 401, 'every session of the user ended');
    }
    const untouched = await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie: other.cookie } });
    assert.equal(untouched.statusCode, 200, "another user's session stays");
  });

  test('a LogoutRequest that is not signed, or signed by another key, ends nothing', async () => {
    const { cookie } = await signIn();
    const request = new URL(
      provider.idp.createLogoutRequest(provider.sp, 'redirect', { logoutNameID: 'wilson' }).context,
    );
    const unsigned = new URLSearchParams(request.search);
    unsigned.delete('Signature');
    unsigned.delete('SigAlg');
    const refused = await t.app.inject({ url: `${request.pathname}?${unsigned.toString()}` });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(json(refused).Error?.reasonCode, 'EAS0193E');
    const tampered = await t.app.inject({
      url: `${request.pathname}${request.search.replace(/Signature=[A-Za-z0-9%]{8}/, 'Signature=AAAAAAAA')}`,
    });
    assert.equal(tampered.statusCode, 400, tampered.body);
    const whoami = await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } });
    assert.equal(whoami.statusCode, 200, 'the session stays');
  });

  async function status(cookie: string): Promise<number> {
    return (await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } })).statusCode;
  }

  function assertLogoutRefused(response: LightMyRequestResponse, why: RegExp): void {
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(json(response).Error?.reasonCode, 'EAS0193E');
    assert.match(String(json(response).Error?.message), why);
  }

  test('a LogoutRequest is used once: replayed, it ends nothing (a session opened since stays); a fresh one works', async () => {
    const first = await signIn();
    const request = logoutRequestUrl(provider, 'wilson');
    const used = await t.app.inject({ url: `${request.pathname}${request.search}` });
    assert.equal(used.statusCode, 302, used.body);
    assert.equal(await status(first.cookie), 401);
    const since = await signIn();
    assertLogoutRefused(await t.app.inject({ url: `${request.pathname}${request.search}` }), /used already/);
    assert.equal(await status(since.cookie), 200, 'the session opened after the first use stays');
    const fresh = logoutRequestUrl(provider, 'wilson');
    assert.equal((await t.app.inject({ url: `${fresh.pathname}${fresh.search}` })).statusCode, 302);
    assert.equal(await status(since.cookie), 401, 'a fresh LogoutRequest still ends it');
  });

  test('a LogoutRequest without NotOnOrAfter is accepted only within its window after IssueInstant', async () => {
    const { cookie } = await signIn();
    const now = Date.now();
    const twoDaysOld = logoutRequestUrl(provider, 'wilson', { issued: new Date(now - 2 * 86_400_000) });
    assertLogoutRefused(await t.app.inject({ url: `${twoDaysOld.pathname}${twoDaysOld.search}` }), /expired/);
    // Past the window plus the default skew of 60 s.
    const late = logoutRequestUrl(provider, 'wilson', {
      issued: new Date(now - LOGOUT_REQUEST_WINDOW_MS - 61_000),
    });
    assertLogoutRefused(await t.app.inject({ url: `${late.pathname}${late.search}` }), /expired/);
    const future = logoutRequestUrl(provider, 'wilson', { issued: new Date(now + 3_600_000) });
    assertLogoutRefused(await t.app.inject({ url: `${future.pathname}${future.search}` }), /future/);
    assert.equal(await status(cookie), 200, 'none of them ended the session');
    // An old IssueInstant with a NotOnOrAfter still ahead: the provider's own window counts.
    const windowed = logoutRequestUrl(provider, 'wilson', {
      issued: new Date(now - 30 * 60_000),
      notOnOrAfter: new Date(now + 60_000),
    });
    assert.equal((await t.app.inject({ url: `${windowed.pathname}${windowed.search}` })).statusCode, 302);
    assert.equal(await status(cookie), 401);
  });

  test('a LogoutRequest signed with RSA-SHA1 is refused; accepted only where EAS_SAML_ALLOW_SHA1 is set', async () => {
    const { cookie } = await signIn();
    const sha1 = testProvider(metadata, { sha1: true });
    const refused = logoutRequestUrl(sha1, 'wilson');
    assert.match(refused.searchParams.get('SigAlg') ?? '', /rsa-sha1$/);
    assertLogoutRefused(await t.app.inject({ url: `${refused.pathname}${refused.search}` }), /SHA-1/);
    assert.equal(await status(cookie), 200);
    const lenient = (await buildApp(testConfig({ ...SAML_KEYED_ENV, EAS_SAML_ALLOW_SHA1: '1' }), t.storage))
      .app;
    try {
      const allowed = logoutRequestUrl(sha1, 'wilson');
      const answered = await lenient.inject({ url: `${allowed.pathname}${allowed.search}` });
      assert.equal(answered.statusCode, 302, answered.body);
    } finally {
      await lenient.close();
    }
    assert.equal(await status(cookie), 401);
  });
});

describe('SAML key rollover (two key pairs, the new one first)', () => {
  let t: TestApp;

  before(async () => {
    const pem = (path: string) => readFileSync(path, 'utf8');
    t = await startTestApp({
      ...SAML_KEYED_ENV,
      EAS_SAML_SP_KEY: pem(SP_NEXT_KEY_PATH) + pem(SP_KEY_PATH),
      EAS_SAML_SP_CERT: pem(SP_NEXT_CERT_PATH) + pem(SP_CERT_PATH),
    });
  });
  after(() => t.close());

  test('both certificates are published; an assertion still encrypted for the old one is decrypted', async () => {
    const metadata = (await t.app.inject({ url: '/maximo/saml/metadata' })).body;
    assert.deepEqual(await schemaErrors(metadata, 'saml-schema-metadata-2.0.xsd'), []);
    assert.equal(metadata.match(/<md:KeyDescriptor use="signing">/g)?.length, 2);
    assert.equal(metadata.match(/<md:KeyDescriptor use="encryption">/g)?.length, 2);
    // The provider checks signatures with the new certificate (samlify takes one signing certificate) but has not
    // switched its encryption yet: it encrypts for the old certificate only.
    const descriptors =
      /(<md:KeyDescriptor use="signing">[\s\S]*?<\/md:KeyDescriptor>)<md:KeyDescriptor use="signing">[\s\S]*?<\/md:KeyDescriptor><md:KeyDescriptor use="encryption">[\s\S]*?<\/md:KeyDescriptor>/;
    const provider = testProvider(metadata.replace(descriptors, '$1'));
    const start = await t.app.inject({ url: '/maximo/saml/login' });
    const cookie = [start.headers['set-cookie'] ?? []].flat()[0]!.split(';')[0]!;
    const answer = await answerLogin(provider, String(start.headers.location), 'wilson');
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/saml/acs',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      payload: new URLSearchParams({ SAMLResponse: answer.response }).toString(),
    });
    assert.equal(response.statusCode, 302, response.body);
    sessionCookie(response);
  });

  test('a certificate that is not the first key’s is refused at start-up', () => {
    assert.throws(
      () => loadConfig({ ...SAML_KEYED_ENV, EAS_SAML_SP_CERT: SP_NEXT_CERT_PATH }),
      (error: unknown) => error instanceof ConfigError && /EAS_SAML_SP_CERT/.test(error.message),
    );
    assert.throws(() => loadConfig({ ...SAML_KEYED_ENV, EAS_SAML_SP_CERT: undefined as unknown as string }));
  });
});

describe('SAML signed request by the HTTP-POST binding', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ ...SAML_KEYED_ENV, EAS_SAML_REQUEST_BINDING: 'post' });
  });
  after(() => t.close());

  test('the posted AuthnRequest carries an XML signature the provider verifies', async () => {
    const provider = testProvider((await t.app.inject({ url: '/maximo/saml/metadata' })).body);
    const form = await t.app.inject({ url: '/maximo/saml/login' });
    assert.equal(form.statusCode, 200, form.body);
    const request = /name="SAMLRequest" value="([^"]+)"/.exec(form.body)?.[1];
    assert.ok(request, 'the form carries the request');
    assert.match(Buffer.from(request, 'base64').toString('utf8'), /<(ds:)?Signature\b/);
    await provider.idp.parseLoginRequest(provider.sp, 'post', { body: { SAMLRequest: request } });
    const altered = Buffer.from(
      Buffer.from(request, 'base64').toString('utf8').replace(/ID="_/, 'ID="_x'),
    ).toString('base64');
    await assert.rejects(
      provider.idp.parseLoginRequest(provider.sp, 'post', { body: { SAMLRequest: altered } }),
    );
  });
});
