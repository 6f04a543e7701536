import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { SAML_ENV } from '../../test/helpers/saml-idp.js';
import { DEFAULT_PAGE_CSP, HSTS } from './security-headers.js';

/**
 * The security headers of answers (docs/security.md, "Security headers"): nosniff, HSTS behind an https public
 * address, no-store on authenticated JSON (conditional requests still answered 304), HTML pages framed by nobody,
 * and `x-public-uri` used only when it is a valid absolute address.
 */

const PAGE = { accept: 'text/html,application/xhtml+xml' };
const ASSETS = '/maximo/oslc/os/mxapiasset?oslc.pageSize=1&lean=1';
const LOOKUP = '/maximo/oslc/os/mxapiitem/zombie/getlist~status?lean=1&oslc.select=value';

function assertFramedByNobody(response: LightMyRequestResponse, url: string): void {
  assert.match(String(response.headers['content-type']), /^text\/html/, url);
  assert.equal(response.headers['x-frame-options'], 'DENY', url);
  const policy = String(response.headers['content-security-policy']);
  assert.match(policy, /frame-ancestors 'none'/, url);
  assert.equal(policy.match(/frame-ancestors/g)?.length, 1, `${url}: one framing rule (${policy})`);
  assert.equal(response.headers['x-content-type-options'], 'nosniff', url);
}

describe('security headers', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('authenticated JSON answers carry nosniff and no-store; no HSTS without an https public address', async () => {
    const response = await t.app.inject({ url: ASSETS, headers: maxauth('MAXADMIN') });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], 'application/json');
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.headers['strict-transport-security'], undefined);
    // An authenticated error answer too.
    const missing = await t.app.inject({
      url: '/maximo/oslc/os/nosuchstructure',
      headers: maxauth('MAXADMIN'),
    });
    assert.ok(missing.statusCode >= 400, missing.body);
    assert.equal(missing.headers['cache-control'], 'no-store');
    assert.equal(missing.headers['x-content-type-options'], 'nosniff');
  });

  test('unauthenticated answers get nosniff but no no-store', async () => {
    const refused = await t.app.inject({ url: ASSETS });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['x-content-type-options'], 'nosniff');
    assert.equal(refused.headers['cache-control'], undefined);
  });

  test('a route that chose its own Cache-Control keeps it', async () => {
    const asset = await t.app.inject({ url: '/maximo/console/assets/app.js', headers: maxauth('MAXADMIN') });
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.headers['cache-control'], 'no-cache');
    assert.equal(asset.headers['x-content-type-options'], 'nosniff');
  });

  test('no-store keeps conditional requests: If-None-Match with the tag answers 304, with no-store', async () => {
    const first = await t.app.inject({ url: LOOKUP, headers: maxauth('MAXADMIN') });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['cache-control'], 'no-store');
    const tag = String(first.headers.etag);
    assert.match(tag, /^"[A-Za-z0-9_-]+"$/);
    const cached = await t.app.inject({
      url: LOOKUP,
      headers: { ...maxauth('MAXADMIN'), 'if-none-match': tag },
    });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.body, '');
    assert.equal(cached.headers.etag, tag);
    assert.equal(cached.headers['cache-control'], 'no-store');
    const stale = await t.app.inject({
      url: LOOKUP,
      headers: { ...maxauth('MAXADMIN'), 'if-none-match': '"stale"' },
    });
    assert.equal(stale.statusCode, 200);
  });

  test('landing.jsp and the login error page are framed by nobody, with the default policy', async () => {
    for (const url of ['/maximo/webclient/login/landing.jsp', '/maximo/webclient/login/loginerror.jsp']) {
      const response = await t.app.inject({ url });
      assert.equal(response.statusCode, 200, url);
      assertFramedByNobody(response, url);
      assert.equal(response.headers['content-security-policy'], DEFAULT_PAGE_CSP, url);
    }
  });

  test('the console shell keeps its own policy, framed by nobody', async () => {
    const response = await t.app.inject({ url: '/maximo/console/', headers: PAGE });
    assert.equal(response.statusCode, 200);
    assertFramedByNobody(response, '/maximo/console/');
    assert.match(String(response.headers['content-security-policy']), /script-src 'self'/);
    assert.equal(response.headers['cache-control'], 'no-store');
  });

  test("Swagger UI's own policy gets frame-ancestors 'none' in place of its 'self'", async () => {
    const url = '/maximo/oslc/oas/ui/';
    const response = await t.app.inject({ url, headers: { ...maxauth('MAXADMIN'), ...PAGE } });
    assert.equal(response.statusCode, 200, response.body.slice(0, 200));
    assertFramedByNobody(response, url);
    const policy = String(response.headers['content-security-policy']);
    assert.doesNotMatch(policy, /frame-ancestors 'self'/);
    assert.match(policy, /script-src 'self'/, 'the rest of its policy is kept');
  });

  describe('x-public-uri', () => {
    const HOSTILE = [
      'http://a//evil.com/oslc',
      'https://gateway.example//evil.com/maximo/oslc',
      'http://a/maximo//oslc',
      'http://a\\\\evil.com/oslc',
      'http:/a/oslc',
      'http:///evil.com/oslc',
      '//evil.com/maximo/oslc',
      'javascript:alert(1)//oslc',
      'https://a/maximo/oslc?x=//evil.com',
    ];

    test('an address whose path has an empty segment is ignored: GET /maximo does not lead to //evil.com', async () => {
      for (const publicUri of HOSTILE) {
        const response = await t.app.inject({
          url: '/maximo',
          headers: { ...PAGE, 'x-public-uri': publicUri },
        });
        assert.equal(response.statusCode, 302, publicUri);
        assert.equal(response.headers.location, '/maximo/console/', publicUri);
      }
    });

    test('the console shell does not load its script from //evil.com', async () => {
      for (const publicUri of HOSTILE) {
        const response = await t.app.inject({
          url: '/maximo/console/',
          headers: { ...PAGE, 'x-public-uri': publicUri },
        });
        assert.equal(response.statusCode, 200, publicUri);
        assert.match(response.body, /src="\/maximo\/console\/assets\/app\.js"/, publicUri);
        assert.doesNotMatch(response.body, /evil\.com/, publicUri);
      }
    });

    test('hrefs of API answers ignore it too', async () => {
      for (const publicUri of HOSTILE) {
        const response = await t.app.inject({
          url: ASSETS,
          headers: { ...maxauth('MAXADMIN'), 'x-public-uri': publicUri },
        });
        assert.equal(response.statusCode, 200, publicUri);
        assert.doesNotMatch(response.body, /evil\.com|\/\/oslc/, publicUri);
        assert.match(
          response.body,
          /"href":"http:\/\/localhost(:\d+)?\/maximo\/oslc\/os\/mxapiasset/,
          publicUri,
        );
      }
    });

    test('a valid address still works, trailing slash included', async () => {
      for (const publicUri of [
        'https://gateway.example/eas/maximo/oslc',
        'https://gateway.example/eas/maximo/oslc/',
      ]) {
        const root = await t.app.inject({ url: '/maximo', headers: { ...PAGE, 'x-public-uri': publicUri } });
        assert.equal(root.headers.location, '/eas/maximo/console/', publicUri);
        const assets = await t.app.inject({
          url: ASSETS,
          headers: { ...maxauth('MAXADMIN'), 'x-public-uri': publicUri },
        });
        assert.match(
          assets.body,
          /"href":"https:\/\/gateway\.example\/eas\/maximo\/oslc\/os\/mxapiasset/,
          publicUri,
        );
      }
    });
  });
});

describe('security headers behind an https public address, x-public-uri from the proxy only', () => {
  const PROXY = '10.9.8.7';
  let t: TestApp;
  before(async () => {
    t = await startTestApp({
      EAS_PUBLIC_URL: 'https://eas.example.com',
      EAS_PUBLIC_URI_FROM: `192.0.2.1, ${PROXY}`,
    });
  });
  after(() => t.close());

  test('every answer carries Strict-Transport-Security', async () => {
    for (const [url, headers] of [
      [ASSETS, maxauth('MAXADMIN')],
      [ASSETS, {}],
      ['/maximo/console/', PAGE],
      ['/maximo/webclient/login/landing.jsp', {}],
    ] as const) {
      const response = await t.app.inject({ url, headers });
      assert.equal(response.headers['strict-transport-security'], HSTS, url);
    }
  });

  test('x-public-uri is used from the addresses EAS_PUBLIC_URI_FROM lists, ignored from any other', async () => {
    const publicUri = 'https://gateway.example/eas/maximo/oslc';
    const headers = { ...maxauth('MAXADMIN'), 'x-public-uri': publicUri };
    const fromProxy = await t.app.inject({ url: ASSETS, headers, remoteAddress: PROXY });
    assert.match(fromProxy.body, /"href":"https:\/\/gateway\.example\/eas\/maximo\/oslc\/os\/mxapiasset/);
    const fromClient = await t.app.inject({ url: ASSETS, headers, remoteAddress: '10.9.8.8' });
    assert.doesNotMatch(fromClient.body, /gateway\.example/);
    assert.match(fromClient.body, /"href":"https:\/\/eas\.example\.com\/maximo\/oslc\/os\/mxapiasset/);
  });
});

describe('the SAML post form', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ ...SAML_ENV, EAS_SAML_REQUEST_BINDING: 'post' });
  });
  after(() => t.close());

  test('framed by nobody, its policy admitting its own script (by hash) and nothing else', async () => {
    const response = await t.app.inject({ url: '/maximo/saml/login' });
    assert.equal(response.statusCode, 200, response.body);
    assertFramedByNobody(response, '/maximo/saml/login');
    const script = /<script>([^<]*)<\/script>/.exec(response.body)?.[1];
    assert.ok(script, 'the page submits its form by script');
    const hash = createHash('sha256').update(script).digest('base64');
    const policy = String(response.headers['content-security-policy']);
    assert.match(policy, new RegExp(`script-src 'sha256-${hash.replace(/[+/]/g, '\\$&')}'`));
    assert.match(policy, /default-src 'none'/);
    assert.doesNotMatch(policy, /form-action/, 'the form posts to the provider');
  });
});
