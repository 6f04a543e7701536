import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS, chromiumInstalled } from '../../test/helpers/chromium.js';
import { startListeningServer, type ListeningServer } from '../../test/helpers/http-server.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD } from '../../test/helpers/storage.js';

/**
 * The console in a real browser (Chromium headless, the Debian package) against a listening server: every page
 * used as an administrator would, then as a user who is not one. The page must load nothing from elsewhere and log
 * no error. `EAS_CONSOLE_SCREENSHOTS=1` writes the screenshots of docs/console.md.
 */
const SCREENSHOTS = process.env.EAS_CONSOLE_SCREENSHOTS === '1';
const SCREENSHOT_DIR = new URL('../../docs/console/', import.meta.url);

const installed = chromiumInstalled('the console in a browser');

type Json = Record<string, unknown>;

if (installed) {
  describe('the console in a browser', () => {
    let server: ListeningServer;
    let base: string;
    let profileDir: string;
    let browser: BrowserContext;
    let page: Page;
    let apikey = '';
    const outside: string[] = [];
    const consoleErrors: string[] = [];

    /** The API as a headless client calls it: with the key the console created, else as MAXADMIN. */
    const call = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: Json }> => {
      const credentials: Record<string, string> = apikey
        ? { apikey }
        : { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
      const response = await fetch(`${base}${path}`, {
        ...init,
        headers: { accept: 'application/json', ...credentials, ...(init.headers as Record<string, string>) },
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
    };
    const screenshot = async (name: string) => {
      if (!SCREENSHOTS) return;
      await mkdir(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOT_DIR).pathname, fullPage: true });
    };
    const navigate = async (name: string, path: string) => {
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name }).click();
      await page.waitForURL(`${base}/console/${path}`);
      await page.getByRole('heading', { level: 1, name }).waitFor();
    };

    before(async () => {
      server = await startListeningServer('CONSOLE');
      base = server.base;
      profileDir = await mkdtemp(join(tmpdir(), 'eas-chromium-'));
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_FLAGS,
        viewport: { width: 1280, height: 800 },
      });
      page = browser.pages()[0] ?? (await browser.newPage());
      const origin = new URL(base).origin;
      page.on('request', (request) => {
        if (new URL(request.url()).origin !== origin) outside.push(request.url());
      });
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning')
          consoleErrors.push(`${message.text()} ${message.location().url}`);
      });
      page.on('pageerror', (error) => consoleErrors.push(error.message));
    });
    after(async () => {
      await browser?.close();
      if (profileDir) await rm(profileDir, { recursive: true, force: true });
      await server?.close();
    });

    test('the server root leads to the sign-in; signing in opens the overview', async () => {
      await page.goto(`${new URL(base).origin}/`);
      await page.waitForURL(/\/maximo\/console\/signin\?returnTo=/);
      await page.getByLabel('User name').waitFor();
      // The sign-in card is as tall as its content, not stretched to the window.
      const card = (await page.locator('main').boundingBox())!;
      const form = (await page.locator('main form').boundingBox())!;
      assert.ok(card.height < form.height + 160, `card ${card.height}px for a form of ${form.height}px`);
      await screenshot('signin');
      await page.getByLabel('User name').fill('maxadmin');
      await page.getByLabel('Password').fill('not the password');
      await page.getByLabel('Password').press('Enter');
      await page
        .getByRole('alert')
        .getByText(/BMXAA7901E/)
        .waitFor();
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByLabel('Password').press('Enter');
      await page.waitForURL(`${base}/console/`);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.getByText('CONSOLE (this process)').waitFor();
      // The server table says what its counts are.
      await page.getByRole('columnheader', { name: 'System properties applied' }).waitFor();
      await page.getByRole('columnheader', { name: 'Changes waiting for a restart' }).waitFor();
      assert.ok(Number(await page.locator('[data-count="Users"]').innerText()) > 0);
      assert.equal(await page.locator('[data-count="Admin mode"]').innerText(), 'Off');
      // The deployment's identity, as systeminfo gives it (docs/migration.md, "Source").
      const deployment = (await call('/api/systeminfo?lean=1')).body.deployment as {
        id: string;
        source: string;
      };
      assert.equal(await page.locator(`[data-deployment="${deployment.id}"]`).innerText(), deployment.source);
      await screenshot('overview');
    });

    test('creates an API key, shown once with a copy button, and calls the API with it', async () => {
      await navigate('API keys', 'apikeys');
      // With the keyboard: the expiry list, then the button after it.
      await page.getByLabel('Expires', { exact: true }).selectOption({ label: 'In 30 days' });
      await page.getByLabel('Expires', { exact: true }).focus();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Create API key');
      await page.keyboard.press('Enter');
      const field = page.getByLabel('Your new API key (shown only now)');
      await field.waitFor();
      apikey = await field.inputValue();
      assert.match(apikey, /^\S{32,}$/);
      await page.getByRole('button', { name: 'Copy your key' }).waitFor();

      // An administrator's key for another user, through MXAPIAPIKEY.
      await page.getByLabel('User', { exact: true }).fill('smith');
      await page.getByRole('button', { name: 'Create key for user' }).click();
      const smithKey = await page.getByLabel('The new API key of SMITH (shown only now)').inputValue();
      await page.getByRole('button', { name: 'Copy the key of SMITH' }).waitFor();
      const smith = await fetch(`${base}/api/whoami?lean=1`, { headers: { apikey: smithKey } });
      assert.equal(((await smith.json()) as Json).userid, 'SMITH');
      await page.getByRole('button', { name: 'Revoke the key of SMITH' }).waitFor();
      const whoami = await call('/api/whoami?lean=1');
      assert.deepEqual([whoami.status, whoami.body.userid], [200, 'MAXADMIN']);
      await page.getByRole('button', { name: 'Revoke the key of MAXADMIN' }).waitFor();
      await screenshot('apikeys');
    });

    test('changes a property with the registry checks and sees the process apply it', async () => {
      await navigate('System properties', 'properties');
      await page.getByLabel('Search by name').fill('mxe.oslc.maxpagesize');
      await page.getByRole('button', { name: 'Change mxe.oslc.maxpagesize' }).click();
      await page.getByLabel('Value').fill('not a number');
      await page.getByRole('button', { name: 'Save' }).click();
      const refusal = await page.getByRole('alert').innerText();
      assert.match(refusal, /^[A-Z]+\d+E - /, 'the reason code and message of the API');
      await page.getByLabel('Value').fill('750');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText(/mxe\.oslc\.maxpagesize was changed\. Applied by CONSOLE/).waitFor();
      await page.locator('li[data-server="CONSOLE"]', { hasText: 'CONSOLE: 750' }).first().waitFor();
      const value = await call(
        '/oslc/service/system?action=wsmethod:getProperty&propName=mxe.oslc.maxpagesize',
      );
      assert.equal(value.body.return, '750');
      await screenshot('properties');
    });

    test('creates a package, uploads its file, previews the change and deploys it with progress', async () => {
      await navigate('Packages', 'packages');
      await page.getByLabel('Definition', { exact: true }).selectOption('DEMOSNAP');
      await page.getByLabel('Read-me').fill('Bedford, from the console test');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      const created = await page.getByText(/Package \d+ of DEMOSNAP was created\./).innerText();
      const sourceId = /Package (\d+)/.exec(created)![1]!;
      const download = await fetch(`${base}/oslc/dm/download?dmpackagedef=DEMOSNAP&dmpackageid=${sourceId}`, {
        headers: { apikey },
      });
      assert.equal(download.status, 200);
      const file = join(profileDir, 'DEMOSNAP.zip');
      await writeFile(file, Buffer.from(await download.arrayBuffer()));

      // Changed here after the package was made: the deploy brings the packaged value back.
      const locations = await call(
        '/oslc/os/mxapioperloc?lean=1&oslc.select=location,description&oslc.where=siteid="BEDFORD"&oslc.pageSize=1',
      );
      const location = (locations.body.member as Json[])[0]!;
      const patched = await call(`/oslc/os/mxapioperloc/${String(location.href).split('/').pop()}?lean=1`, {
        method: 'POST',
        headers: { 'x-method-override': 'PATCH', 'content-type': 'application/json' },
        body: JSON.stringify({ description: 'Changed after packaging' }),
      });
      assert.ok(patched.status < 300, JSON.stringify(patched.body));

      await page.getByLabel('Package file (.zip)').setInputFiles(file);
      await page.getByRole('button', { name: 'Upload' }).click();
      const received = await page.getByText(/was received as package \d+ \(DEPLOY_NEW\)/).innerText();
      const targetId = /as package (\d+)/.exec(received)![1]!;
      await page.getByRole('button', { name: `Preview package ${targetId}` }).click();
      const change = page.locator('.diff .changed', { hasText: 'Changed after packaging →' });
      await change.waitFor();
      assert.ok((await change.innerText()).includes(`→ ${String(location.description)}`));
      await screenshot('packages-preview');

      await page.getByRole('button', { name: `Deploy package ${targetId}` }).click();
      await page.getByText(/BMXAA8040I/).waitFor();
      const bar = page.locator('#deploy-progress');
      await page.waitForFunction(() => {
        const progress = document.querySelector<HTMLProgressElement>('#deploy-progress');
        return progress !== null && progress.value === progress.max;
      });
      assert.equal(await bar.getAttribute('max'), '1');
      await page.locator('.progress [role="status"]', { hasText: /^Deployed: / }).waitFor();
      const after = await call(
        `/oslc/os/mxapioperloc?lean=1&oslc.select=description&oslc.where=location="${String(location.location)}" and siteid="BEDFORD"`,
      );
      assert.equal((after.body.member as Json[])[0]!.description, location.description);

      // The action buttons sit in their row, level with its other cells.
      const row = page.locator(`tr[data-package="${sourceId}"]`);
      const rowBox = (await row.boundingBox())!;
      const firstCell = (await row.locator('td').first().boundingBox())!;
      const first = (await row.locator('td.actions').locator('button, a').first().boundingBox())!;
      assert.ok(
        first.y >= rowBox.y && first.y + first.height <= rowBox.y + rowBox.height + 1,
        'inside its row',
      );
      assert.ok(
        Math.abs(first.y - firstCell.y) < 12,
        `button at ${first.y}, row's first cell at ${firstCell.y}`,
      );
      await page.getByRole('button', { name: `Close package ${sourceId}` }).click();
      await page.getByText(`Package ${sourceId} was closed.`).waitFor();
    });

    test('ends a session: its cookie is refused at once', async () => {
      const login = await fetch(`${base}/j_security_check`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ j_username: 'WILSON', j_password: DEMO_PASSWORD }),
      });
      const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
      const whoami = () => fetch(`${base}/oslc/whoami`, { headers: { cookie, accept: 'application/json' } });
      assert.equal((await whoami()).status, 200);
      await navigate('Sessions', 'sessions');
      const end = page.getByRole('button', { name: /^End the session \d+ of WILSON$/ });
      await end.waitFor();
      await screenshot('sessions');
      await end.click();
      await page.getByText('The session of WILSON was ended.').waitFor();
      assert.equal((await whoami()).status, 401);
    });

    test('turns admin mode on and off, the state live on the page', async () => {
      const setProperty = (value: string) =>
        call('/oslc/service/system?action=wsmethod:setProperty', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ propName: 'mxe.adminmode.numsessions', propValue: value }),
        });
      const before = (
        await call('/oslc/service/system?action=wsmethod:getProperty&propName=mxe.adminmode.numsessions')
      ).body.return as string;
      assert.equal((await setProperty('7')).status, 200);
      await navigate('Admin mode', 'adminmode');
      // The form starts from the property's value (not 1).
      const numsessions = page.getByLabel('Sessions allowed (numsessions)');
      await page.waitForFunction(
        () => (document.getElementById('numsessions') as HTMLInputElement).value !== '',
      );
      assert.equal(await numsessions.inputValue(), '7');
      assert.equal((await setProperty(before)).status, 200);
      // Narrow: a box wraps with its own label, never under the next one.
      await page.setViewportSize({ width: 640, height: 800 });
      const label = (await page.locator('label[for="logoutmin"]').boundingBox())!;
      const box = (await page.locator('#logoutmin').boundingBox())!;
      assert.ok(
        Math.abs(label.y + label.height / 2 - (box.y + box.height / 2)) < 8,
        'label and box on one line',
      );
      assert.ok(box.x > label.x, 'the box after its label');
      await page.setViewportSize({ width: 1280, height: 800 });
      await numsessions.fill('5');
      await page.getByLabel('Minutes before logout (logoutmin)').fill('0');
      await page.getByRole('button', { name: 'Turn admin mode on' }).click();
      await page.locator('#adminmode-state', { hasText: /^On$/ }).waitFor({ timeout: 20_000 });
      // The message follows the state: "on", not "being turned on", once it is.
      await page.getByRole('status').filter({ hasText: 'Admin mode is on.' }).waitFor();
      assert.equal(await page.getByText('Admin mode is being turned on.').count(), 0);
      assert.equal((await call('/oslc/adminmode/state')).body.state, 1);
      await screenshot('adminmode');
      await page.getByRole('button', { name: 'Turn admin mode off' }).click();
      await page.locator('#adminmode-state', { hasText: /^Off$/ }).waitFor();
      assert.equal((await call('/oslc/adminmode/state')).body.state, 0);
    });

    test('signs out; a user who is not an administrator is refused the admin pages', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${base}/console/signin`);
      await page.getByLabel('User name').fill('wilson');
      await page.getByLabel('Password').fill(DEMO_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/console/`);
      const links = await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allInnerTexts();
      assert.deepEqual(links, ['Overview', 'API keys']);
      for (const path of ['properties', 'packages', 'adminmode', 'sessions']) {
        await page.goto(`${base}/console/${path}`);
        await page.getByRole('alert').getByText('You are not allowed to use this page').waitFor();
      }
      const cookie = (await browser.cookies(base)).find((entry) => entry.name === 'JSESSIONID')!;
      const refused = await fetch(`${base}/oslc/sessions`, {
        headers: { cookie: `JSESSIONID=${cookie.value}`, accept: 'application/json' },
      });
      assert.equal(((await refused.json()) as { Error: Json }).Error.reasonCode, 'BMXAA0024E');
      await page.goto(`${base}/console/apikeys`);
      await page.setViewportSize({ width: 420, height: 800 });
      await page.getByRole('button', { name: 'Create API key' }).waitFor();
      await screenshot('apikeys-narrow');

      // Ended by an administrator meanwhile: the page's next call leads to the sign-in, which returns here.
      const sessions = (await call('/oslc/sessions')).body.member as Json[];
      const wilson = sessions.find((session) => session.userid === 'WILSON' && session.scheme === 'FORM')!;
      assert.equal(
        (await call(`/oslc/sessions/${String(wilson.sessionid)}`, { method: 'DELETE' })).status,
        204,
      );
      await page.getByRole('button', { name: 'Create API key' }).click();
      await page.waitForURL(
        `${base}/console/signin?returnTo=${encodeURIComponent('/maximo/console/apikeys')}`,
      );
      await page.getByLabel('User name').waitFor();
    });

    test('nothing was fetched from elsewhere and the pages logged no error', () => {
      assert.deepEqual(outside, []);
      // Chromium logs every answered error status; the only ones are the three refusals the tests provoked.
      assert.deepEqual(
        consoleErrors.map((line) => line.replace(base, '')),
        [
          'Failed to load resource: the server responded with a status of 401 (Unauthorized) /j_security_check?csrf=1',
          'Failed to load resource: the server responded with a status of 400 (Bad Request) /oslc/service/system?action=wsmethod:setProperty',
          'Failed to load resource: the server responded with a status of 401 (Unauthorized) /oslc/apitoken/create',
        ],
      );
    });
  });
}
