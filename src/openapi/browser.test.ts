import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS, chromiumInstalled } from '../../test/helpers/chromium.js';
import { startListeningServer, type ListeningServer } from '../../test/helpers/http-server.js';
import { ADMIN_PASSWORD } from '../../test/helpers/storage.js';

/**
 * Swagger UI in a real browser (Chromium headless, the Debian package) with the console's session: signed in on the
 * console (FORM login with `csrf=1`, whose writes need the token), "Try it out" reads and writes as the console does
 * (docs/operations.md, "Swagger UI").
 */

const installed = chromiumInstalled('Swagger UI in a browser');

if (installed) {
  describe('Swagger UI in a browser', () => {
    let server: ListeningServer;
    let base: string;
    let profileDir: string;
    let browser: BrowserContext;
    let page: Page;

    /** Opens the operation `method path`, tries it out with the given fields, and answers the status shown. */
    const tryItOut = async (
      tag: string,
      method: 'get' | 'post',
      path: string,
      fill: (operation: ReturnType<Page['locator']>) => Promise<void>,
    ): Promise<{ status: string; body: string }> => {
      await page.locator(`h3.opblock-tag[data-tag="${tag}"]`).click();
      const operation = page.locator(`.opblock-${method}`, {
        has: page.locator(`.opblock-summary-path[data-path="${path}"]`),
      });
      await operation.locator('.opblock-summary').first().click();
      await operation.getByRole('button', { name: 'Try it out' }).click();
      await fill(operation);
      await operation.getByRole('button', { name: 'Execute' }).click();
      const response = operation.locator('.live-responses-table .response').first();
      await response.waitFor();
      return {
        // The code, then "Undocumented" when the document lists no such answer.
        status: (await response.locator('.response-col_status').innerText()).trim().split(/\s/)[0]!,
        body: await response.locator('.response-col_description').innerText(),
      };
    };

    before(async () => {
      server = await startListeningServer('SWAGGER');
      base = server.base;
      profileDir = await mkdtemp(join(tmpdir(), 'eas-chromium-'));
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_FLAGS,
        viewport: { width: 1280, height: 1000 },
      });
      page = browser.pages()[0] ?? (await browser.newPage());
    });
    after(async () => {
      await browser?.close();
      if (profileDir) await rm(profileDir, { recursive: true, force: true });
      await server?.close();
    });

    test('signed in on the console, "Try it out" reads, and creates an asset: 201', async () => {
      await page.goto(`${base}/console/signin`);
      await page.getByLabel('User name').fill('maxadmin');
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByLabel('Password').press('Enter');
      await page.waitForURL(`${base}/console/`);

      await page.goto(`${base}/oslc/oas/ui/`);
      await page.locator('h3.opblock-tag').first().waitFor();

      const read = await tryItOut('whoami', 'get', '/maximo/oslc/whoami', async () => {});
      assert.equal(read.status, '200', read.body);
      assert.match(read.body, /"userid": "MAXADMIN"/);

      const created = await tryItOut('os', 'post', '/maximo/oslc/os/{os}', async (operation) => {
        await operation.locator('tr[data-param-name="os"] input').fill('mxapiasset');
        const body = operation.locator('textarea.body-param__text');
        await body.fill(
          JSON.stringify({ assetnum: 'SWAGGER1', siteid: 'BEDFORD', description: 'Tried out' }),
        );
      });
      assert.equal(created.status, '201', created.body);

      const answer = await fetch(
        `${base}/oslc/os/mxapiasset?lean=1&oslc.select=description&oslc.where=assetnum="SWAGGER1"`,
        { headers: { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') } },
      );
      const member = ((await answer.json()) as { member: Array<{ description?: string }> }).member;
      assert.deepEqual(
        member.map((asset) => asset.description),
        ['Tried out'],
      );
    });
  });
}
