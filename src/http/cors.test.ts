import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * Cross-origin requests from browser applications (docs/operations.md, "Cross-origin requests"): the preflight and
 * the headers of answers, configured by the `mxe.oslc.acl*` system properties; nothing is allowed by default.
 * Requests are sent as a browser sends them (a preflight has no credentials).
 */

const APP_ORIGIN = 'https://apps.example.com';
const OTHER_ORIGIN = 'https://evil.example.net';
const ASSET = '/maximo/oslc/os/mxapiasset?oslc.pageSize=1&lean=1';

describe('cross-origin requests (CORS)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const setProperty = async (propName: string, propValue: string | null) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
      headers: { ...maxauth('MAXADMIN'), 'content-type': 'application/json' },
      payload: { propName, propValue },
    });
    assert.equal(response.statusCode, 200, response.body);
  };

  /** The preflight a browser sends before a PUT-like call carrying maxauth and a JSON body. */
  const preflight = (origin: string, method = 'POST', url = '/maximo/oslc/os/mxapiasset') =>
    t.app.inject({
      method: 'OPTIONS',
      url,
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'content-type,maxauth',
      },
    });

  const corsHeaders = (response: LightMyRequestResponse) =>
    Object.fromEntries(
      Object.entries(response.headers).filter(([name]) => name.toLowerCase().startsWith('access-control-')),
    );

  test('by default no origin is allowed: the preflight is answered, without any CORS header', async () => {
    const response = await preflight(APP_ORIGIN);
    assert.equal(response.statusCode, 204, response.body);
    assert.deepEqual(corsHeaders(response), {});
    const read = await t.app.inject({ url: ASSET, headers: { ...maxauth('WILSON'), origin: APP_ORIGIN } });
    assert.equal(read.statusCode, 200);
    assert.deepEqual(corsHeaders(read), {});
  });

  test('a preflight from an allowed origin gets the configured methods and headers; any other origin none', async () => {
    await setProperty('mxe.oslc.aclalloworigin', `${APP_ORIGIN}, https://other-app.example.com`);
    await setProperty('mxe.oslc.aclallowmethods', 'GET,POST,PUT,DELETE,OPTIONS');
    await setProperty('mxe.oslc.aclallowheaders', 'accept,content-type,maxauth,apikey,patchtype,properties');
    await setProperty('mxe.oslc.aclexposeheaders', 'etag,location');

    const allowed = await preflight(APP_ORIGIN);
    assert.equal(allowed.statusCode, 204);
    assert.deepEqual(corsHeaders(allowed), {
      'access-control-allow-origin': APP_ORIGIN,
      'access-control-allow-methods': 'GET, POST, PUT, DELETE, OPTIONS',
      'access-control-allow-headers': 'accept, content-type, maxauth, apikey, patchtype, properties',
    });
    assert.match(String(allowed.headers.vary), /Origin/);
    // Any path below the context root, without credentials (browsers send none on a preflight).
    const member = await preflight(APP_ORIGIN, 'DELETE', '/maximo/api/os/mxapiasset/_QkVERk9SRC8xMTQzMA--');
    assert.equal(member.headers['access-control-allow-origin'], APP_ORIGIN);

    const other = await preflight(OTHER_ORIGIN);
    assert.equal(other.statusCode, 204);
    assert.deepEqual(corsHeaders(other), {});
    const methodNotAllowed = await preflight(APP_ORIGIN, 'PATCH');
    assert.deepEqual(corsHeaders(methodNotAllowed), {});
  });

  test('a simple cross-origin GET gets Access-Control-Allow-Origin and the exposed headers only when allowed', async () => {
    const allowed = await t.app.inject({ url: ASSET, headers: { ...maxauth('WILSON'), origin: APP_ORIGIN } });
    assert.equal(allowed.statusCode, 200);
    assert.deepEqual(corsHeaders(allowed), {
      'access-control-allow-origin': APP_ORIGIN,
      'access-control-expose-headers': 'etag, location',
    });
    const other = await t.app.inject({ url: ASSET, headers: { ...maxauth('WILSON'), origin: OTHER_ORIGIN } });
    assert.equal(other.statusCode, 200);
    assert.deepEqual(corsHeaders(other), {});
    const sameOrigin = await t.app.inject({ url: ASSET, headers: maxauth('WILSON') });
    assert.deepEqual(corsHeaders(sameOrigin), {}, 'no Origin, no CORS header');
  });

  test('a refusal reaches an allowed origin with its CORS headers, as the error object', async () => {
    const refused = await t.app.inject({ url: ASSET, headers: { origin: APP_ORIGIN } });
    assert.equal(refused.statusCode, 401);
    assert.ok(json(refused).Error);
    assert.equal(refused.headers['access-control-allow-origin'], APP_ORIGIN);
    const missing = await t.app.inject({ url: '/maximo/oslc/nothing-here', headers: { origin: APP_ORIGIN } });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['access-control-allow-origin'], APP_ORIGIN);
  });

  test('a change of the properties applies at once, without a restart', async () => {
    await setProperty('mxe.oslc.aclalloworigin', OTHER_ORIGIN);
    assert.deepEqual(corsHeaders(await preflight(APP_ORIGIN)), {});
    assert.equal((await preflight(OTHER_ORIGIN)).headers['access-control-allow-origin'], OTHER_ORIGIN);
    await setProperty('mxe.oslc.aclalloworigin', '*');
    assert.equal((await preflight(APP_ORIGIN)).headers['access-control-allow-origin'], APP_ORIGIN);
    await setProperty('mxe.oslc.aclalloworigin', null);
    assert.deepEqual(corsHeaders(await preflight(APP_ORIGIN)), {});
  });
});

describe('cross-origin requests on a key-only /api', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ EAS_API_KEY_ONLY: '1' });
  });
  after(() => t.close());

  test('the preflight needs no key; the call without one is refused with the CORS headers', async () => {
    const set = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
      headers: { ...maxauth('MAXADMIN'), 'content-type': 'application/json' },
      payload: { propName: 'mxe.oslc.aclalloworigin', propValue: APP_ORIGIN },
    });
    assert.equal(set.statusCode, 200, set.body);
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/maximo/api/os/mxapiasset',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'GET' },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], APP_ORIGIN);
    const refused = await t.app.inject({ url: '/maximo/api/os/mxapiasset', headers: { origin: APP_ORIGIN } });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['access-control-allow-origin'], APP_ORIGIN);
  });
});
