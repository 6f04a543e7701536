import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS, chromiumInstalled } from '../../test/helpers/chromium.js';
import { startListeningServer, type ListeningServer } from '../../test/helpers/http-server.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD } from '../../test/helpers/storage.js';

/**
 * The forgeries of a page an attacker controls, in a real browser (Chromium headless, the Debian package), against
 * a listening server: the victim signs in with the FORM login (no `csrf=1`), then opens the attacker's page, served
 * on another port of 127.0.0.1 (the same site, another origin: the session cookie goes along) or on another host
 * name (`evil.example`, mapped to 127.0.0.1: another site). docs/compatibility.md, "Requests browsers make for other
 * pages"; src/auth/browser-origin.test.ts walks every route with the headers Chromium sends here.
 */

const installed = chromiumInstalled('forged requests in a browser');

type Json = Record<string, unknown>;

const EVIL_HOST = 'evil.example';

/** A page that submits a form to `action` as soon as it loads; `fields` as `name → value`. */
function autoSubmit(action: string, enctype: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name='${name}' value='${value}'>`)
    .join('');
  return `<!DOCTYPE html><html><body><form method="POST" enctype="${enctype}" action="${action}">${inputs}</form><script>document.forms[0].submit()</script></body></html>`;
}

if (installed) {
  describe('forged requests in a browser', () => {
    let server: ListeningServer;
    let base: string;
    let attacker: Server;
    let attackerPort = 0;
    /** The attacker's pages by path, set by each test before the browser opens them. */
    const pages = new Map<string, string>();
    let profileDir: string;
    let browser: BrowserContext;
    let page: Page;
    let victimCookie = '';

    const call = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: Json }> => {
      const response = await fetch(`${base}${path}`, {
        ...init,
        headers: { accept: 'application/json', ...(init.headers as Record<string, string>) },
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
    };
    const asAdmin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
    /** Who the victim's browser session is, asked as a client replaying its cookie. */
    const victim = async (): Promise<unknown> => {
      const answer = await call('/oslc/whoami?lean=1', { headers: { cookie: victimCookie } });
      return answer.status === 200 ? answer.body.userid : answer.status;
    };
    const browserSession = async (): Promise<string | undefined> =>
      (await browser.cookies(base)).find((cookie) => cookie.name === 'JSESSIONID')?.value;
    const sessionsOf = async (userid: string): Promise<number> => {
      const answer = await call('/oslc/sessions?lean=1', { headers: asAdmin });
      assert.equal(answer.status, 200);
      return (answer.body.member as Json[]).filter((session) => session.userid === userid).length;
    };
    /** Opens the attacker's page at `path` of `host` and waits until its form landed on `target`. */
    const openAttack = async (host: string, path: string, target: string): Promise<string> => {
      const landed = page.waitForResponse((response) => response.url().startsWith(target));
      await page.goto(`http://${host}:${attackerPort}${path}`);
      const response = await landed;
      return `${response.status()} ${await response.text()}`;
    };

    before(async () => {
      server = await startListeningServer('FORGERY');
      base = server.base;
      attacker = createServer((request, response) => {
        const body = pages.get(request.url ?? '');
        response.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(body ?? 'not found');
      });
      await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
      const address = attacker.address();
      attackerPort = typeof address === 'object' && address ? address.port : 0;
      profileDir = await mkdtemp(join(tmpdir(), 'eas-chromium-'));
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: [...CHROMIUM_FLAGS, `--host-resolver-rules=MAP ${EVIL_HOST} 127.0.0.1`],
      });
      page = browser.pages()[0] ?? (await browser.newPage());

      // The victim signs in with the login form of this service's own page (FORM, without csrf=1).
      await page.goto(`${base}/webclient/login/loginerror.jsp`);
      await page.evaluate(
        ({ action, password }) => {
          const form = document.createElement('form');
          form.method = 'POST';
          form.action = action;
          for (const [name, value] of [
            ['j_username', 'maxadmin'],
            ['j_password', password],
          ]) {
            const input = document.createElement('input');
            input.type = 'hidden';
            input.name = name!;
            input.value = value!;
            form.append(input);
          }
          document.body.append(form);
          form.submit();
        },
        { action: `${base}/j_security_check`, password: ADMIN_PASSWORD },
      );
      await page.waitForURL(`${base}/webclient/login/landing.jsp`);
      await page.getByText('You are logged in as MAXADMIN').waitFor();
      victimCookie = `JSESSIONID=${(await browserSession())!}`;
      assert.equal(await victim(), 'MAXADMIN');
    });
    after(async () => {
      await browser?.close();
      if (profileDir) await rm(profileDir, { recursive: true, force: true });
      await new Promise<void>((resolve) => (attacker ? attacker.close(() => resolve()) : resolve()));
      await server?.close();
    });

    test('a same-site page posting text/plain to adminmode/on changes nothing', async () => {
      const other = await call('/oslc/login', {
        method: 'POST',
        headers: { maxauth: Buffer.from(`WILSON:${DEMO_PASSWORD}`).toString('base64') },
      });
      assert.equal(other.status, 200);
      pages.set(
        '/adminmode',
        autoSubmit(`${base}/oslc/adminmode/on`, 'text/plain', {
          '{"numsessions":1,"logoutmin":0,"x":"': '"}',
        }),
      );
      const answer = await openAttack('127.0.0.1', '/adminmode', `${base}/oslc/adminmode/on`);
      assert.match(answer, /^403 .*EAS0042E/);
      const state = await call('/oslc/adminmode/state?lean=1', { headers: asAdmin });
      assert.equal(state.body.state, 0, 'admin mode stays off');
      assert.equal(await victim(), 'MAXADMIN', 'the session lives on');
      assert.ok((await sessionsOf('WILSON')) >= 1, "the other user's session lives on");
    });

    test('with mxe.allowexternalapikey=1, a same-site page cannot give MAXADMIN a key of its choosing', async () => {
      const set = await call('/oslc/service/system?action=wsmethod:setProperty', {
        method: 'POST',
        headers: { ...asAdmin, 'content-type': 'application/json' },
        body: JSON.stringify({ propName: 'mxe.allowexternalapikey', serverName: 'COMMON', propValue: '1' }),
      });
      assert.equal(set.status, 200);
      const chosen = 'attacker-chosen-key-0123456789abcdefghijklmnop';
      pages.set(
        '/apitoken',
        autoSubmit(`${base}/oslc/apitoken/create`, 'text/plain', {
          [`{"apikey":"${chosen}","expiration":-1,"x":"`]: '"}',
        }),
      );
      const answer = await openAttack('127.0.0.1', '/apitoken', `${base}/oslc/apitoken/create`);
      assert.match(answer, /^403 .*EAS0042E/);
      const withKey = await call('/api/whoami?lean=1', { headers: { apikey: chosen } });
      assert.notEqual(withKey.status, 200, 'the chosen key authenticates nobody');
      assert.equal(await victim(), 'MAXADMIN');
    });

    test('an image of a same-site page pointing at the logout ends nothing', async () => {
      pages.set(
        '/logout',
        `<!DOCTYPE html><html><body><img src="${base}/oslc/logout" onload="document.title='loaded'" onerror="document.title='failed'"></body></html>`,
      );
      // The browser blocks the JSON answer from the image (ORB): the request is seen, its end is the image's error.
      const requested = page.waitForRequest(`${base}/oslc/logout`);
      await page.goto(`http://127.0.0.1:${attackerPort}/logout`);
      await requested;
      await page.waitForFunction(() => document.title !== '');
      assert.equal(await victim(), 'MAXADMIN', 'the session lives on');
      assert.equal(`JSESSIONID=${(await browserSession())!}`, victimCookie, 'the browser keeps its cookie');
    });

    test('a login form of another page (same-site, cross-site) signs nobody in and ends no session', async () => {
      const smith = await sessionsOf('SMITH');
      for (const host of ['127.0.0.1', EVIL_HOST]) {
        pages.set(
          '/login',
          autoSubmit(`${base}/j_security_check`, 'application/x-www-form-urlencoded', {
            j_username: 'SMITH',
            j_password: DEMO_PASSWORD,
          }),
        );
        const answer = await openAttack(host, '/login', `${base}/j_security_check`);
        assert.match(answer, /^403 .*EAS0042E/, `from ${host}`);
        assert.equal(await victim(), 'MAXADMIN', `from ${host}: the victim's session lives on`);
        assert.equal(
          `JSESSIONID=${(await browserSession())!}`,
          victimCookie,
          `from ${host}: the same cookie`,
        );
        assert.equal(await sessionsOf('SMITH'), smith, `from ${host}: no session of SMITH`);
      }
    });

    test("this service's own pages still sign out", async () => {
      await page.goto(`${base}/webclient/login/landing.jsp`);
      await page.getByText('You are logged in as MAXADMIN').waitFor();
      // From the console: landing.jsp's policy lets it fetch nothing (docs/security.md, "Security headers").
      await page.goto(`${base}/console/`);
      const answer = await page.evaluate(
        async (logout) => (await fetch(logout, { method: 'POST' })).status,
        `${base}/oslc/logout`,
      );
      assert.equal(answer, 200);
      assert.equal(await victim(), 401, 'the session ended');
    });
  });
}
