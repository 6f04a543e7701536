import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  startServer,
  stopServersAndDropSchema,
  type ServerProcess,
} from '../../../test/helpers/processes.js';
import {
  IDP_SLO_URL,
  SAML_KEYED_ENV,
  answerLogin,
  redirectRequest,
  testProvider,
  type TestProvider,
} from '../../../test/helpers/samlify-idp.js';

/**
 * Single logout across two real server processes on one PostgreSQL schema (docs/federated-login.md, "Single
 * logout"): a logout answered by one process has ended the session on the other before the answer leaves
 * (`ChangeBus.confirm`), so the very next request there is refused. PGlite is one process by design: without
 * EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

if (url) {
  describe('SAML single logout across two server processes', () => {
    const schema = `eas_test_slo_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;
    let provider: TestProvider;

    before(async () => {
      const settings = { databaseUrl: url, schema, adminPassword: 'saml-slo-admin-pw', env: SAML_KEYED_ENV };
      first = await startServer({ name: 'SLOA', ...settings });
      second = await startServer({ name: 'SLOB', ...settings });
      provider = testProvider(await (await fetch(`${first.base}/saml/metadata`)).text());
    });
    after(() => stopServersAndDropSchema([first, second], url, schema));

    /** Signs MAXADMIN in on `server` through the provider: the session cookie. */
    async function signIn(server: ServerProcess): Promise<string> {
      const start = await fetch(`${server.base}/saml/login`, { redirect: 'manual' });
      const started = start.headers.getSetCookie().find((set) => set.startsWith('EAS_SAML_REQUESTS='))!;
      const answer = await answerLogin(provider, start.headers.get('location')!, 'maxadmin');
      const response = await fetch(`${server.base}/saml/acs`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: started.split(';')[0]! },
        body: new URLSearchParams({ SAMLResponse: answer.response }).toString(),
        redirect: 'manual',
      });
      assert.equal(response.status, 302, await response.text());
      return response.headers.getSetCookie()[0]!.split(';')[0]!;
    }

    async function whoami(server: ServerProcess, cookie: string): Promise<number> {
      const response = await fetch(`${server.base}/oslc/whoami`, { headers: { cookie } });
      await response.arrayBuffer();
      return response.status;
    }

    /** A path and query of this service, from an absolute URL the provider addresses it by. */
    const local = (server: ServerProcess, address: string) => {
      const target = new URL(address);
      return `${server.base}${target.pathname.replace(/^\/maximo/, '')}${target.search}`;
    };

    test('a LogoutRequest from the provider to one process ends the session on the other at once', async () => {
      const cookie = await signIn(first);
      assert.equal(await whoami(second, cookie), 200);
      const request = provider.idp.createLogoutRequest(provider.sp, 'redirect', { logoutNameID: 'maxadmin' });
      const answered = await fetch(local(first, request.context), { redirect: 'manual' });
      assert.equal(answered.status, 302, await answered.text());
      const location = answered.headers.get('location')!;
      assert.ok(location.startsWith(IDP_SLO_URL));
      await provider.idp.parseLogoutResponse(provider.sp, 'redirect', redirectRequest(location));
      assert.equal(await whoami(second, cookie), 401, 'ended on the other process before the answer left');
    });

    test('a logout started at one process ends the session on the other at once and reaches the provider', async () => {
      const cookie = await signIn(second);
      assert.equal(await whoami(first, cookie), 200);
      const logout = await fetch(`${second.base}/saml/logout`, { headers: { cookie }, redirect: 'manual' });
      assert.equal(logout.status, 302);
      const location = logout.headers.get('location')!;
      assert.ok(location.startsWith(IDP_SLO_URL));
      await provider.idp.parseLogoutRequest(provider.sp, 'redirect', redirectRequest(location));
      assert.equal(await whoami(first, cookie), 401);
    });
  });
}
