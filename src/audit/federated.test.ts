import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { startProvider, throughProvider, type TestProvider } from '../../test/oidc/provider.js';
import { SAML_ENV, requestIdOfRedirect, samlResponse, tampered } from '../../test/helpers/saml-idp.js';
import type { AuditRow } from './repository.js';

/**
 * Sign-ins through an identity provider in the audit trail (docs/audit.md, "Events"): OpenID Connect (a sign-in, a
 * refused one: a user the service does not know, a tampered state; the logout) and SAML (a sign-in, a forged
 * response), each exactly one record with the scheme, the name and the client's address.
 */
const CLIENT = {
  clientId: 'eas-audit',
  clientSecret: 'eas-audit-client-secret',
  redirectUri: 'http://127.0.0.1:7001/maximo/oidc/callback',
  postLogoutRedirectUri: 'http://127.0.0.1:7001/maximo/signin',
};

function cookiesOf(response: LightMyRequestResponse): string {
  const raw = response.headers['set-cookie'];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list
    .map((line) => line.split(';')[0]!)
    .filter((pair) => !pair.endsWith('='))
    .join('; ');
}

/** The login records `cause` left on `app` (every login written, every record sealed). */
async function loginRecordsOf(app: TestApp, cause: () => Promise<unknown>): Promise<AuditRow[]> {
  const last = async () => {
    const row = await app.storage.db
      .selectFrom('easaudit')
      .select((eb) => eb.fn.max('auditid').as('id'))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  };
  const since = await last();
  await cause();
  await app.services.logins.flush();
  await app.services.audit.seal();
  const rows = await app.storage.db
    .selectFrom('easaudit')
    .selectAll()
    .where('auditid', '>', since)
    .orderBy('auditid')
    .execute();
  for (const row of rows) assert.ok(row.chainseq !== null, 'sealed');
  return rows.filter((row) => row.eventtype.startsWith('login.') || row.eventtype === 'logout');
}

const summary = (rows: AuditRow[]) =>
  rows.map((row) => [row.eventtype, row.outcome, row.userid, row.authscheme, row.clientaddr]);

describe('audit trail: OpenID Connect sign-ins', () => {
  let provider: TestProvider;
  let eas: TestApp;

  before(async () => {
    provider = await startProvider(CLIENT);
    eas = await startTestApp({
      EAS_AUTH_MODE: 'oidc',
      EAS_OIDC_ISSUER: provider.issuer,
      EAS_OIDC_CLIENT_ID: CLIENT.clientId,
      EAS_OIDC_CLIENT_SECRET: CLIENT.clientSecret,
      EAS_OIDC_REDIRECT_URL: CLIENT.redirectUri,
    });
  });
  after(async () => {
    await eas?.close();
    await provider?.close();
  });

  const loginRecords = (cause: () => Promise<unknown>) => loginRecordsOf(eas, cause);

  /** A sign-in as `login` at the provider, up to the service's answer to the callback. */
  async function signIn(login: string, tamper = false) {
    const start = await eas.app.inject({ method: 'GET', url: '/maximo/oidc/login?returnTo=/maximo/signin' });
    assert.equal(start.statusCode, 302, start.body);
    const back = await throughProvider(String(start.headers.location), login, CLIENT.redirectUri);
    if (tamper) back.searchParams.set('state', `${back.searchParams.get('state')}x`);
    return eas.app.inject({
      method: 'GET',
      url: `${back.pathname}${back.search}`,
      headers: { cookie: cookiesOf(start) },
    });
  }

  test('a sign-in, then its logout: one record each', async () => {
    let cookie = '';
    const signedIn = await loginRecords(async () => {
      const response = await signIn('wilson');
      assert.equal(response.statusCode, 302, response.body);
      cookie = cookiesOf(response);
    });
    assert.deepEqual(summary(signedIn), [['login.success', 'SUCCESS', 'WILSON', 'OIDC', '127.0.0.1']]);

    const loggedOut = await loginRecords(async () => {
      const response = await eas.app.inject({
        method: 'GET',
        url: '/maximo/oidc/logout',
        headers: { cookie },
      });
      assert.equal(response.statusCode, 302, response.body);
    });
    assert.deepEqual(summary(loggedOut), [['logout', 'SUCCESS', 'WILSON', 'OIDC', '127.0.0.1']]);
  });

  test('refused sign-ins: a user the service does not know, a tampered state; one failure each', async () => {
    const stranger = await loginRecords(async () => {
      assert.equal((await signIn('stranger')).statusCode, 401);
    });
    assert.equal(stranger.length, 1, JSON.stringify(stranger));
    assert.deepEqual(
      [stranger[0]!.eventtype, stranger[0]!.outcome, stranger[0]!.authscheme, stranger[0]!.clientaddr],
      ['login.failure', 'FAILURE', 'OIDC', '127.0.0.1'],
    );
    assert.match(String(stranger[0]!.objectkey), /STRANGER/);

    const tampered = await loginRecords(async () => {
      assert.equal((await signIn('wilson', true)).statusCode, 401);
    });
    assert.deepEqual(summary(tampered), [['login.failure', 'FAILURE', '', 'OIDC', '127.0.0.1']]);
  });
});

describe('audit trail: SAML sign-ins', () => {
  let eas: TestApp;
  before(async () => {
    eas = await startTestApp(SAML_ENV);
  });
  after(() => eas?.close());

  /** Posts the provider's answer to a sign-in this service started (HTTP-Redirect binding, then HTTP-POST). */
  async function acs(answer: (requestId: string) => string) {
    const start = await eas.app.inject({ url: '/maximo/saml/login?returnTo=%2Fmaximo%2Fsignin' });
    assert.equal(start.statusCode, 302, start.body);
    const requestId = requestIdOfRedirect(String(start.headers.location));
    return eas.app.inject({
      method: 'POST',
      url: '/maximo/saml/acs',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookiesOf(start) },
      payload: new URLSearchParams({ SAMLResponse: answer(requestId) }).toString(),
    });
  }

  test('a sign-in, and a forged response: one record each', async () => {
    const signedIn = await loginRecordsOf(eas, async () => {
      const response = await acs((requestId) => samlResponse({ requestId }));
      assert.equal(response.statusCode, 302, response.body);
    });
    assert.deepEqual(summary(signedIn), [['login.success', 'SUCCESS', 'WILSON', 'SAML', '127.0.0.1']]);

    const forged = await loginRecordsOf(eas, async () => {
      const response = await acs((requestId) =>
        tampered(samlResponse({ requestId, nameId: 'smith' }), '>smith<', '>maxadmin<'),
      );
      assert.equal(response.statusCode, 401, response.body);
    });
    assert.deepEqual(summary(forged), [['login.failure', 'FAILURE', '', 'SAML', '127.0.0.1']]);
  });
});
