import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { SAML_ENV } from '../../test/helpers/saml-idp.js';
import { CONSOLE_PAGES } from './routes.js';

const PAGE = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
const API = { accept: 'application/json' };

interface ShellModel {
  user: { userid: string; isAdmin: boolean } | null;
  csrfToken: string | null;
  base: string;
  signIn: string;
  providers: Array<{ name: string; loginPath: string }>;
}

/** The model the shell hands the page (`<meta name="eas-console">`). */
function modelOf(body: string): ShellModel {
  const attribute = /name="eas-console" content="([^"]*)"/.exec(body)![1]!;
  return JSON.parse(
    attribute.replace(/&#(\d+);/g, (_match, code: string) => String.fromCharCode(Number(code))),
  );
}

/** The session cookie and CSRF token of a FORM login with `csrf=1`, as the console signs in. */
async function formLogin(
  t: TestApp,
  user: string,
  password: string,
): Promise<{ cookie: string; csrf: string }> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/maximo/j_security_check?csrf=1',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...API },
    payload: new URLSearchParams({ j_username: user, j_password: password }).toString(),
  });
  assert.equal(response.statusCode, 302, response.body);
  const cookie = response.cookies.find((entry) => entry.name === 'JSESSIONID')!;
  return { cookie: `JSESSIONID=${cookie.value}`, csrf: String(response.headers.csrftoken) };
}

describe('the console, served', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('every page address answers the shell, with a strict CSP and its files from this server', async () => {
    for (const page of ['', ...CONSOLE_PAGES]) {
      const response = await t.app.inject({ url: `/maximo/console/${page}`, headers: PAGE });
      assert.equal(response.statusCode, 200, page);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      const csp = String(response.headers['content-security-policy']);
      assert.match(csp, /script-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|nonce/);
      assert.match(
        response.body,
        /<script type="module" src="\/maximo\/console\/assets\/app\.js"><\/script>/,
      );
      assert.doesNotMatch(response.body, /<script>|<script nonce|<style/);
    }
    const script = await t.app.inject({ url: '/maximo/console/assets/app.js' });
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /^text\/javascript/);
    const again = await t.app.inject({
      url: '/maximo/console/assets/app.js',
      headers: { 'if-none-match': String(script.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
    assert.equal((await t.app.inject({ url: '/maximo/console/assets/app.css' })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/maximo/console/nothing' })).statusCode, 404);
    assert.equal((await t.app.inject({ url: '/maximo/console/assets/server.js' })).statusCode, 404);
  });

  test('the shell names the signed-in user and the session token; without a session it names none', async () => {
    const model = modelOf;
    const anonymous = model((await t.app.inject({ url: '/maximo/console/', headers: PAGE })).body);
    assert.equal(anonymous.user, null);
    assert.equal(anonymous.csrfToken, null);
    const { cookie, csrf } = await formLogin(t, 'MAXADMIN', 'maxadmin-test-pw');
    const signedIn = model(
      (await t.app.inject({ url: '/maximo/console/apikeys', headers: { ...PAGE, cookie } })).body,
    );
    assert.deepEqual(
      [signedIn.user?.userid, signedIn.user?.isAdmin, signedIn.csrfToken],
      ['MAXADMIN', true, csrf],
    );
    // Behind a proxy: the addresses follow the public address the client names.
    const proxied = await t.app.inject({
      url: '/maximo/console/',
      headers: { ...PAGE, 'x-public-uri': 'https://gateway.example/eas/maximo/oslc' },
    });
    assert.equal(model(proxied.body).base, '/eas/maximo');
    assert.match(proxied.body, /src="\/eas\/maximo\/console\/assets\/app\.js"/);
  });

  test('the root and the context root lead a browser to the console; API clients keep their 404', async () => {
    for (const url of ['/', '/maximo', '/maximo/']) {
      const browser = await t.app.inject({ url, headers: PAGE });
      assert.equal(browser.statusCode, 302, url);
      assert.equal(browser.headers.location, '/maximo/console/');
      const client = await t.app.inject({ url, headers: API });
      assert.equal(client.statusCode, 404, url);
      assert.equal(json(client).Error?.reasonCode, 'EAS0001E');
    }
  });

  test('Swagger UI, the metrics and the landing page lead a browser without a session to the sign-in', async () => {
    for (const url of ['/maximo/oslc/oas/ui/', '/maximo/metrics', '/maximo/webclient/login/landing.jsp']) {
      const browser = await t.app.inject({ url, headers: PAGE });
      assert.equal(browser.statusCode, 302, url);
      assert.match(String(browser.headers.location), /^\/maximo\/console\/signin\?returnTo=%2Fmaximo%2F/);
    }
    for (const url of ['/maximo/oslc/oas/ui/', '/maximo/metrics']) {
      const client = await t.app.inject({ url, headers: API });
      assert.equal(client.statusCode, 401, url);
      assert.equal(json(client).Error?.reasonCode, 'BMXAA7901E');
    }
    const { cookie } = await formLogin(t, 'MAXADMIN', 'maxadmin-test-pw');
    const metrics = await t.app.inject({ url: '/maximo/metrics', headers: { ...PAGE, cookie } });
    assert.equal(metrics.statusCode, 200);
  });
});

describe('sessions and server processes, for the console', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('an administrator lists live sessions and ends one; the ended cookie is refused at once', async () => {
    const admin = await formLogin(t, 'MAXADMIN', 'maxadmin-test-pw');
    const wilson = await formLogin(t, 'WILSON', 'demo-test-pw');
    const listed = await t.app.inject({ url: '/maximo/oslc/sessions', headers: { cookie: admin.cookie } });
    assert.equal(listed.statusCode, 200, listed.body);
    const members = json(listed).member!;
    const own = members.find((member) => member.current === true)!;
    assert.equal(own.userid, 'MAXADMIN');
    const theirs = members.find((member) => member.userid === 'WILSON')!;
    assert.deepEqual([theirs.scheme, theirs.current], ['FORM', false]);
    assert.equal(JSON.stringify(members).includes(wilson.cookie.slice('JSESSIONID='.length)), false);

    const withoutToken = await t.app.inject({
      method: 'DELETE',
      url: `/maximo/oslc/sessions/${String(theirs.sessionid)}`,
      headers: { cookie: admin.cookie },
    });
    assert.equal(json(withoutToken).Error?.reasonCode, 'EAS0040E');
    const ended = await t.app.inject({
      method: 'DELETE',
      url: `/maximo/oslc/sessions/${String(theirs.sessionid)}`,
      headers: { cookie: admin.cookie, csrftoken: admin.csrf },
    });
    assert.equal(ended.statusCode, 204, ended.body);
    const refused = await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie: wilson.cookie } });
    assert.equal(refused.statusCode, 401);
    const again = await t.app.inject({
      method: 'DELETE',
      url: `/maximo/oslc/sessions/${String(theirs.sessionid)}`,
      headers: { cookie: admin.cookie, csrftoken: admin.csrf },
    });
    assert.equal(json(again).Error?.reasonCode, 'EAS0201E');
  });

  test('the server processes with their acknowledgements; both endpoints refuse a non-administrator', async () => {
    const servers = await t.app.inject({ url: '/maximo/oslc/servers', headers: maxauth('MAXADMIN') });
    assert.equal(servers.statusCode, 200, servers.body);
    const [server] = json(servers).member!;
    assert.equal(server?.servername, 'TESTSERVER');
    assert.equal(server?.thisserver, true);
    assert.ok(Number(server?.applied) > 10);
    for (const url of ['/maximo/oslc/servers', '/maximo/oslc/sessions']) {
      const refused = await t.app.inject({ url, headers: maxauth('WILSON') });
      assert.equal(json(refused).Error?.reasonCode, 'BMXAA0024E', url);
    }
  });
});

describe('the console in a federated mode', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(SAML_ENV);
  });
  after(() => t.close());

  test('the sign-in offers the identity provider instead of the FORM login', async () => {
    const shell = await t.app.inject({ url: '/maximo/console/signin', headers: PAGE });
    assert.equal(shell.statusCode, 200);
    const model = modelOf(shell.body);
    assert.equal(model.signIn, 'federated');
    assert.deepEqual(
      model.providers.map((provider) => provider.loginPath),
      ['/saml/login'],
    );
  });
});
