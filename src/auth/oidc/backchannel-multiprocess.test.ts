import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  startServer,
  stopServersAndDropSchema,
  type ServerProcess,
} from '../../../test/helpers/processes.js';
import { startProvider, throughProvider, type TestProvider } from '../../../test/oidc/provider.js';

/**
 * OpenID Connect back-channel logout across two real server processes on one PostgreSQL schema
 * (docs/federated-login.md, "Back-channel logout (OIDC)"): the logout token posted to one process ends the user's
 * sessions on the other before the answer leaves. PGlite is one process by design: without EAS_TEST_DATABASE_URL
 * this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const CLIENT = {
  clientId: 'eas-processes',
  clientSecret: 'eas-processes-client-secret',
  redirectUri: 'http://127.0.0.1:7004/maximo/oidc/callback',
  postLogoutRedirectUri: 'http://127.0.0.1:7004/maximo/signin',
};

if (url) {
  describe('OIDC back-channel logout across two server processes', () => {
    const schema = `eas_test_bcl_${process.pid}_${randomBytes(3).toString('hex')}`;
    let provider: TestProvider;
    let first: ServerProcess;
    let second: ServerProcess;

    before(async () => {
      provider = await startProvider(CLIENT);
      const env = {
        EAS_AUTH_MODE: 'oidc',
        EAS_OIDC_ISSUER: provider.issuer,
        EAS_OIDC_CLIENT_ID: CLIENT.clientId,
        EAS_OIDC_CLIENT_SECRET: CLIENT.clientSecret,
        EAS_OIDC_REDIRECT_URL: CLIENT.redirectUri,
        // The sign-in state is sealed under a key both processes derive from the master key.
        EAS_MASTER_KEY: randomBytes(32).toString('hex'),
      };
      const settings = { databaseUrl: url, schema, adminPassword: 'bcl-admin-pw', env };
      first = await startServer({ name: 'BCLA', ...settings });
      second = await startServer({ name: 'BCLB', ...settings });
    });
    after(async () => {
      await stopServersAndDropSchema([first, second], url, schema);
      await provider.close();
    });

    /** Signs `login` in on `server` through the provider: the session's cookies. */
    async function signIn(server: ServerProcess, login: string): Promise<string> {
      const start = await fetch(`${server.base}/oidc/login`, { redirect: 'manual' });
      const state = start.headers.getSetCookie().map((line) => line.split(';')[0]!);
      const back = await throughProvider(start.headers.get('location')!, login, CLIENT.redirectUri);
      const done = await fetch(`${server.base}/oidc/callback${back.search}`, {
        headers: { cookie: state.join('; ') },
        redirect: 'manual',
      });
      assert.equal(done.status, 302, await done.text());
      return done.headers
        .getSetCookie()
        .map((line) => line.split(';')[0]!)
        .filter((cookie) => !cookie.endsWith('='))
        .join('; ');
    }

    async function whoami(server: ServerProcess, cookie: string): Promise<number> {
      const response = await fetch(`${server.base}/oslc/whoami`, { headers: { cookie } });
      await response.arrayBuffer();
      return response.status;
    }

    test("the provider's logout token posted to one process ends the user's sessions on the other at once", async () => {
      const onSecond = await signIn(second, 'maxadmin');
      const onFirst = await signIn(first, 'maxadmin');
      assert.equal(await whoami(first, onSecond), 200);
      const token = await provider.logoutToken('maxadmin');
      assert.ok(token);
      const answered = await fetch(`${first.base}/oidc/backchannel-logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ logout_token: token }).toString(),
      });
      assert.equal(answered.status, 200, await answered.text());
      assert.equal(await whoami(second, onSecond), 401, 'ended on the other process before the answer left');
      assert.equal(await whoami(second, onFirst), 401);
    });
  });
}
