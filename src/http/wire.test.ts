import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import {
  headerValues,
  httpRequest,
  listenOnFreePort,
  rawRequest,
  type RawResponse,
} from '../../test/helpers/raw-http.js';
import { CanonicalHeadersResponse, canonicalHeaderName } from './wire.js';

/**
 * Header names on the socket, spelled as the deployed systems spell them (a client that looks up `"Set-Cookie"`
 * case-sensitively finds it), and parser refusals answered with the error object. Raw bytes, no client library.
 */

/** Every header name of the response is in its canonical spelling. */
function assertCanonical(response: RawResponse): void {
  for (const line of response.headerLines) {
    const name = line.slice(0, line.indexOf(':'));
    assert.equal(name, canonicalHeaderName(name.toLowerCase()), `header ${name}`);
  }
}

describe('header names on the wire', () => {
  let harness: TestApp;
  let port: number;
  let site: string;

  before(async () => {
    harness = await startTestApp();
    port = await listenOnFreePort(harness.app);
    const row = await sql<{ siteid: string }>`select siteid from asset limit 1`.execute(harness.storage.db);
    site = row.rows[0]!.siteid;
  });
  after(() => harness.close());

  test('login: Set-Cookie and Content-Type as spelled by the application server', async () => {
    const response = await rawRequest(
      port,
      httpRequest('POST', '/maximo/oslc/login?lean=1', maxauth('WILSON')),
    );
    assert.equal(response.status, 200);
    const cookies = headerValues(response, 'Set-Cookie');
    assert.ok(cookies[0]?.startsWith('JSESSIONID='), response.headerLines.join('\n'));
    assert.deepEqual(headerValues(response, 'Content-Type'), ['application/json']);
    assert.equal(headerValues(response, 'set-cookie').length, 0);
    assertCanonical(response);
  });

  test('login with csrf=1: the csrftoken header keeps its lower-case name', async () => {
    const response = await rawRequest(
      port,
      httpRequest('POST', '/maximo/oslc/login?csrf=1', maxauth('WILSON')),
    );
    assert.equal(response.status, 200);
    assert.equal(headerValues(response, 'csrftoken').length, 1);
  });

  test('FORM login: Location and Set-Cookie', async () => {
    const body = `j_username=wilson&j_password=${encodeURIComponent('demo-test-pw')}`;
    const response = await rawRequest(
      port,
      httpRequest(
        'POST',
        '/maximo/j_security_check',
        { 'Content-Type': 'application/x-www-form-urlencoded' },
        body,
      ),
    );
    assert.equal(response.status, 302);
    assert.equal(headerValues(response, 'Location').length, 1);
    assert.ok(headerValues(response, 'Set-Cookie')[0]?.startsWith('JSESSIONID='));
    assertCanonical(response);
  });

  test('create: Location', async () => {
    const response = await rawRequest(
      port,
      httpRequest(
        'POST',
        '/maximo/oslc/os/mxasset',
        { ...maxauth('MAXADMIN'), 'Content-Type': 'application/json' },
        JSON.stringify({ assetnum: 'WIRE1', siteid: site }),
      ),
    );
    assert.equal(response.status, 201, response.body);
    const [location] = headerValues(response, 'Location');
    assert.match(location ?? '', /^http:\/\/127\.0\.0\.1\/maximo\/oslc\/os\/mxasset\/_/);
    assertCanonical(response);
  });

  test('lookups and errors: every header name canonical', async () => {
    const lookup = await rawRequest(
      port,
      httpRequest('GET', '/maximo/oslc/os/mxasset?oslc.pageSize=1&lean=1', maxauth('MAXADMIN')),
    );
    assert.equal(lookup.status, 200);
    assert.deepEqual(headerValues(lookup, 'Content-Type'), ['application/json']);
    assertCanonical(lookup);
    const refused = await rawRequest(port, httpRequest('GET', '/maximo/oslc/os/mxasset', {}));
    assert.equal(refused.status, 401);
    assertCanonical(refused);
  });

  test('stray bytes after a body: 400 with the error object', async () => {
    const bytes =
      httpRequest(
        'POST',
        '/maximo/oslc/login',
        { ...maxauth('WILSON'), 'Content-Type': 'application/json' },
        '{}',
      ) + '\u0001\u0002 garbage\r\n\r\n';
    const response = await rawRequest(port, bytes.replace('Connection: close', 'Connection: keep-alive'));
    // The login may be answered first (or not, when the parser reads both at once); the refusal is the last answer.
    const second = response.raw.slice(response.raw.lastIndexOf('HTTP/1.1 '));
    assert.match(second, /^HTTP\/1\.1 400 /);
    assert.match(second, /\r\nContent-Type: application\/json\r\n/);
    const payload = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)) as {
      Error: { reasonCode: string; statusCode: string };
    };
    assert.equal(payload.Error.statusCode, '400');
    assert.equal(payload.Error.reasonCode, 'EAS0004E');
  });
});

describe('canonical header names of any route', () => {
  test('ETag, WWW-Authenticate and unknown names', async () => {
    const app = Fastify({ http: { ServerResponse: CanonicalHeadersResponse } });
    app.get('/', async (_request, reply) =>
      reply
        .header('etag', '"1"')
        .header('www-authenticate', 'Basic')
        .header('x-custom-thing', 'a')
        .header('csrftoken', 't')
        .send('ok'),
    );
    try {
      const port = await listenOnFreePort(app);
      const response = await rawRequest(port, httpRequest('GET', '/', {}));
      assert.deepEqual(headerValues(response, 'ETag'), ['"1"']);
      assert.deepEqual(headerValues(response, 'WWW-Authenticate'), ['Basic']);
      assert.deepEqual(headerValues(response, 'X-Custom-Thing'), ['a']);
      assert.deepEqual(headerValues(response, 'csrftoken'), ['t']);
      assert.deepEqual(headerValues(response, 'Content-Type'), ['text/plain; charset=utf-8']);
    } finally {
      await app.close();
    }
  });
});
