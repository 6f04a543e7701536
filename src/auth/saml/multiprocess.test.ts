import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  startServer,
  stopServersAndDropSchema,
  type ServerProcess,
} from '../../../test/helpers/processes.js';
import { SAML_ENV, requestIdOfRedirect, samlResponse } from '../../../test/helpers/saml-idp.js';

/**
 * SAML sign-in across two real server processes (`src/server.ts`) on one PostgreSQL schema: requests and consumed
 * assertions live in the database. PGlite is one process by design (saml.test.ts runs two app instances on one
 * database instead), so without EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'saml-multiprocess-admin-pw';

/** A sign-in started on `server`: the request id to answer and the browser's request cookie. */
async function startLogin(server: ServerProcess): Promise<{ requestId: string; cookie: string }> {
  const response = await fetch(`${server.base}/saml/login`, { redirect: 'manual' });
  assert.equal(response.status, 302);
  const cookie = response.headers.getSetCookie().find((set) => set.startsWith('EAS_SAML_REQUESTS='));
  assert.ok(cookie, 'the request cookie');
  return { requestId: requestIdOfRedirect(response.headers.get('location')!), cookie: cookie.split(';')[0]! };
}

function postResponse(server: ServerProcess, samlResponseValue: string, cookie: string): Promise<Response> {
  return fetch(`${server.base}/saml/acs`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ SAMLResponse: samlResponseValue }).toString(),
    redirect: 'manual',
  });
}

async function reasonCode(response: Response): Promise<unknown> {
  return ((await response.json()) as { Error?: { reasonCode?: unknown } }).Error?.reasonCode;
}

if (url) {
  describe('SAML sign-in across two server processes on one PostgreSQL', () => {
    const schema = `eas_test_saml_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;

    before(async () => {
      // The created administrator is MAXADMIN; the NameID names it.
      const settings = { databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD, env: SAML_ENV };
      first = await startServer({ name: 'SAMLA', ...settings });
      second = await startServer({ name: 'SAMLB', ...settings });
    });

    after(() => stopServersAndDropSchema([first, second], url, schema));

    test('an assertion consumed on one process is refused as a replay on the other', async () => {
      const started = await startLogin(first);
      const response = samlResponse({ requestId: started.requestId, nameId: 'maxadmin' });
      const signedIn = await postResponse(first, response, started.cookie);
      assert.equal(signedIn.status, 302, await signedIn.text());
      const cookie = signedIn.headers.getSetCookie()[0]!.split(';')[0]!;
      const whoami = await fetch(`${second.base}/oslc/whoami`, { headers: { cookie } });
      assert.equal(whoami.status, 200, 'the session works on the other process');
      assert.equal(((await whoami.json()) as { userid: string }).userid, 'MAXADMIN');

      const replayed = await postResponse(second, response, started.cookie);
      assert.equal(replayed.status, 401);
      assert.equal(await reasonCode(replayed), 'EAS0151E');
      assert.equal(replayed.headers.getSetCookie().length, 0);
    });

    test('a request started on one process is answered on the other; sent to both at once, it signs in once', async () => {
      const started = await startLogin(second);
      const response = samlResponse({ requestId: started.requestId, nameId: 'maxadmin' });
      const results = await Promise.all([
        postResponse(first, response, started.cookie),
        postResponse(second, response, started.cookie),
      ]);
      assert.deepEqual(results.map((result) => result.status).sort(), [302, 401]);
      const [signedIn, refused] = results.sort((one, other) => one.status - other.status);
      assert.equal(await reasonCode(refused!), 'EAS0151E');
      await signedIn!.arrayBuffer();
    });
  });
}
