import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS, chromiumInstalled } from '../../../test/helpers/chromium.js';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { PROVIDER_PASSWORD, startProvider, type TestProvider } from '../../../test/oidc/provider.js';

/**
 * The whole sign-in in a real browser: Chromium headless (Debian package `chromium`) through the provider's login
 * page, back to the sign-in page with a session, an API key created there with the keyboard, then used on /api as a
 * headless client would. CI must have Chromium (.ci/run installs it): there a missing one fails this file.
 */

const installed = chromiumInstalled('signing in with a browser');

/** A port free now, for a server whose own address must be configured before it starts (the redirect URL). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

if (installed) {
  describe('signing in with a browser', () => {
    let provider: TestProvider;
    let eas: TestApp;
    let base: string;
    let profileDir: string;
    let browser: BrowserContext;

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}/maximo`;
      provider = await startProvider({
        clientId: 'eas-browser',
        clientSecret: 'eas-browser-client-secret',
        redirectUri: `${base}/oidc/callback`,
        postLogoutRedirectUri: `${base}/signin`,
      });
      eas = await startTestApp({
        EAS_AUTH_MODE: 'oidc',
        EAS_OIDC_ISSUER: provider.issuer,
        EAS_OIDC_CLIENT_ID: 'eas-browser',
        EAS_OIDC_CLIENT_SECRET: 'eas-browser-client-secret',
        EAS_OIDC_REDIRECT_URL: `${base}/oidc/callback`,
        EAS_OIDC_PROVIDER_NAME: 'Test provider',
      });
      await eas.app.listen({ port, host: '127.0.0.1' });
      profileDir = await mkdtemp(join(tmpdir(), 'eas-chromium-'));
      // A persistent context is how a fresh --user-data-dir of our own is given to Chromium.
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_FLAGS,
      });
    });
    after(async () => {
      await browser?.close();
      if (profileDir) await rm(profileDir, { recursive: true, force: true });
      await eas?.close();
      await provider?.close();
    });

    test('signs in at the provider, creates an API key on the sign-in page and uses it on /api', async () => {
      const page = await browser.newPage();
      const origins = new Set<string>();
      page.on('request', (request) => origins.add(new URL(request.url()).origin));

      await page.goto(`${base}/signin`);
      await page.getByRole('link', { name: 'Sign in with Test provider' }).click();
      await page.waitForURL(`${provider.issuer}/interaction/**`);
      await page.getByLabel('User').fill('wilson');
      await page.getByLabel('Password').fill(PROVIDER_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/signin`);
      assert.match(await page.locator('main').innerText(), /Signed in as WILSON/);

      // The session works for the API under /oslc.
      const whoami = await page.evaluate(async () => {
        const response = await fetch('/maximo/oslc/whoami?lean=1', {
          headers: { accept: 'application/json' },
        });
        return { status: response.status, body: (await response.json()) as { userid?: string } };
      });
      assert.deepEqual([whoami.status, whoami.body.userid], [200, 'WILSON']);

      // With the keyboard: the expiry list, then the button.
      await page.getByLabel('Expires').focus();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Create API key');
      await page.keyboard.press('Enter');
      const field = page.getByLabel('Your new API key (shown only now):');
      await field.waitFor({ state: 'visible' });
      const apikey = await field.inputValue();
      assert.match(apikey, /^\S{32,}$/);
      assert.match(await page.locator('#key-status').innerText(), /You have an API key/);

      // A headless client with the key, as curl would call it.
      const withKey = await fetch(`${base}/api/whoami?lean=1`, { headers: { apikey } });
      assert.equal(withKey.status, 200);
      assert.equal(((await withKey.json()) as { userid: string }).userid, 'WILSON');
      const withoutKey = await fetch(`${base}/api/whoami?lean=1`);
      assert.equal(withoutKey.status, 401);

      // After a reload the key is described, never shown again.
      await page.reload();
      assert.match(await page.locator('#key-status').innerText(), /You have an API key/);
      assert.equal(await page.locator('#new-key').isHidden(), true);
      assert.ok(!(await page.content()).includes(apikey), 'the key is shown once');

      // Revoked from the page: the key stops working for headless clients.
      await page.getByRole('button', { name: 'Revoke API key' }).press('Enter');
      await page.getByText('Your API key was revoked.').waitFor();
      assert.equal(await page.locator('#key-status').innerText(), 'You have no API key.');
      const revoked = await fetch(`${base}/api/whoami?lean=1`, { headers: { apikey } });
      assert.equal(revoked.status, 400);
      assert.equal(
        ((await revoked.json()) as { Error: { reasonCode: string } }).Error.reasonCode,
        'BMXAA9549E',
      );

      assert.deepEqual([...origins].sort(), [new URL(base).origin, provider.issuer].sort(), 'no other site');
    });
  });
}
