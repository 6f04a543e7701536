import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { EasClient } from '../client/index.js';
import { CHROMIUM, CHROMIUM_FLAGS, chromiumInstalled } from '../../test/helpers/chromium.js';
import { startListeningServer, type ListeningServer } from '../../test/helpers/http-server.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD } from '../../test/helpers/storage.js';

/**
 * The Packages page between two servers in Chromium (docs/console.md, "Packages"): the definition created is the one
 * shown; a target without definitions offers no Create; a preview groups identical refusals with their remedy; each
 * row shows its kind and only the actions its status allows; a deploy that needs admin mode is completed through
 * the admin-mode steps; a deployed package is backed out.
 */
const installed = chromiumInstalled('the Packages page in a browser');

type Json = Record<string, unknown>;

if (installed) {
  describe('the Packages page in a browser', () => {
    let source: ListeningServer;
    let target: ListeningServer;
    let sourceAdmin: EasClient;
    let targetAdmin: EasClient;
    let profileDir: string;
    let browser: BrowserContext;
    let page: Page;
    const pageErrors: string[] = [];

    const admin = (server: ListeningServer) =>
      new EasClient({
        baseUrl: server.base,
        credentials: { scheme: 'maxauth', user: 'MAXADMIN', password: ADMIN_PASSWORD },
      });

    /** The Packages page of a server, signed in first when needed (the two servers share the host's cookies). */
    const signIn = async (server: ListeningServer) => {
      await page.goto(`${server.base}/console/packages`);
      const heading = page.getByRole('heading', { level: 1, name: 'Packages' });
      const user = page.getByLabel('User name');
      await Promise.race(
        [heading.waitFor(), user.waitFor()].map((waiting) => waiting.catch(() => undefined)),
      );
      if (await user.isVisible()) {
        await user.fill('maxadmin');
        await page.getByLabel('Password').fill(ADMIN_PASSWORD);
        await page.getByLabel('Password').press('Enter');
      }
      await heading.waitFor();
      // The page has read its packages and definitions.
      await page.getByRole('button', { name: 'Create', exact: true }).waitFor();
    };

    /** The record of a package as the API answers it. */
    const packageRecord = async (client: EasClient, dmpackageid: number | string): Promise<Json> => {
      const [record] = await client
        .query('mxapidmpackage', { where: `dmpackageid=${dmpackageid}`, select: '*' })
        .all();
      return record as Json;
    };

    /** The labels of the action buttons and links of a package's row. */
    const actionsOf = async (dmpackageid: number | string) =>
      page.locator(`tr[data-package="${dmpackageid}"] td.actions`).locator('button, a').allInnerTexts();

    before(async () => {
      [source, target] = await Promise.all([startListeningServer('PKGSRC'), startListeningServer('PKGTGT')]);
      sourceAdmin = admin(source);
      targetAdmin = admin(target);
      profileDir = await mkdtemp(join(tmpdir(), 'eas-chromium-packages-'));
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_FLAGS,
        viewport: { width: 1280, height: 900 },
        acceptDownloads: true,
      });
      page = browser.pages()[0] ?? (await browser.newPage());
      page.on('pageerror', (error) => pageErrors.push(error.message));
    });
    after(async () => {
      await browser?.close();
      if (profileDir) await rm(profileDir, { recursive: true, force: true });
      await Promise.all([sourceAdmin?.logout(), targetAdmin?.logout()]);
      await Promise.all([source?.close(), target?.close()]);
    });

    test('a target without definitions offers no Create: a sentence says so and links to where one is made', async () => {
      for (const definition of await targetAdmin.query('mxapidmpkgdef', { select: 'pkgdefname' }).all())
        await targetAdmin.http.request('DELETE', String(definition.href));
      assert.equal(await targetAdmin.count('mxapidmpkgdef'), 0);
      await signIn(target);
      const create = page.getByRole('button', { name: 'Create', exact: true });
      await create.waitFor();
      assert.equal(await create.isDisabled(), true);
      await page.getByText('There is no package definition on this deployment').waitFor();
      assert.equal(await page.getByLabel('Definition', { exact: true }).count(), 0);
      const link = page.getByRole('link', { name: 'Make a definition', exact: true });
      assert.equal(await link.getAttribute('href'), '/maximo/console/definitions');
      assert.equal(await targetAdmin.count('mxapidmpackage'), 0, 'nothing was created');
      await link.click();
      await page.getByRole('heading', { level: 1, name: 'Package definitions' }).waitFor();
      await page.getByText('There is no package definition on this deployment.').waitFor();
      await page.getByRole('button', { name: 'New definition' }).waitFor();
    });

    test('the definition created is the one shown selected, and the one chosen', async () => {
      await signIn(source);
      const select = page.getByLabel('Definition', { exact: true });
      await select.waitFor();
      const shown = await select.evaluate((element: HTMLSelectElement) => ({
        value: element.value,
        text: element.selectedOptions[0]?.textContent ?? '',
      }));
      assert.notEqual(shown.value, '', 'a definition is selected');
      assert.ok(shown.text.startsWith(shown.value));
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      const created = await page.getByText(/^Package \d+ of \S+ was created\.$/).innerText();
      assert.equal(/ of (\S+) was/.exec(created)![1], shown.value, 'the definition shown, none other');
      const id = /Package (\d+)/.exec(created)![1]!;
      assert.equal((await packageRecord(sourceAdmin, id)).pkgdefname, shown.value);

      const other = (await select.locator('option').allInnerTexts())
        .map((text) => text.split(' ')[0]!)
        .find((name) => name !== shown.value)!;
      await select.selectOption(other);
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      const second = await page
        .getByText(new RegExp(`^Package \\d+ of ${other} was created\\.$`))
        .innerText();
      const secondId = /Package (\d+)/.exec(second)![1]!;
      assert.equal((await packageRecord(sourceAdmin, secondId)).pkgdefname, other);
      // A source package: its kind, and only what CREATED allows.
      assert.match(
        await page.locator(`tr[data-package="${secondId}"] td[data-kind]`).innerText(),
        /^Package \((SNAPSHOT|CHANGE)\)$/,
      );
      assert.deepEqual(await actionsOf(secondId), ['Distribute', 'Download', 'Close']);
      for (const closed of [id, secondId]) {
        await page.getByRole('button', { name: `Close package ${closed}` }).click();
        await page.getByText(`Package ${closed} was closed.`).waitFor();
      }
      assert.deepEqual(await actionsOf(secondId), []);
    });

    test('a package of records naming a site the target lacks: the preview groups them with the remedy; deployed once the site exists; backed out', async () => {
      await sourceAdmin.create('mxapisite', { siteid: 'PKGFAR', orgid: 'EAGLENA', description: 'Far' });
      for (let index = 1; index <= 6; index++)
        await sourceAdmin.create('mxapiasset', { assetnum: `PFAR${index}`, siteid: 'PKGFAR' });
      await sourceAdmin.create('mxapidmpkgdef', {
        pkgdefname: 'PKGFAR',
        type: 'SNAPSHOT',
        status: 'APPR',
        dmpkgdefcontent: [{ objectstructure: 'MXAPIASSET', whereclause: 'siteid="PKGFAR"', cfgdataorder: 1 }],
        dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
      });
      await signIn(source);
      await page.getByLabel('Definition', { exact: true }).selectOption('PKGFAR');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      const created = await page.getByText(/^Package \d+ of PKGFAR was created\.$/).innerText();
      const sourceId = /Package (\d+)/.exec(created)![1]!;
      await page.getByRole('button', { name: `Distribute package ${sourceId}` }).click();
      await page
        .getByText(/is ready for download|distributed/i)
        .first()
        .waitFor();
      const download = page.waitForEvent('download');
      await page.locator(`tr[data-package="${sourceId}"]`).getByRole('link', { name: 'Download' }).click();
      const file = join(profileDir, 'PKGFAR.zip');
      await (await download).saveAs(file);

      await signIn(target);
      await page.getByLabel('Package file (.zip)').setInputFiles(file);
      await page.getByRole('button', { name: 'Upload' }).click();
      const received = await page.getByText(/was received as package \d+ \(DEPLOY_NEW\)/).innerText();
      const targetId = /as package (\d+)/.exec(received)![1]!;
      assert.deepEqual(await actionsOf(targetId), ['Preview', 'Deploy', 'Close']);

      await page.getByRole('button', { name: `Preview package ${targetId}` }).click();
      const groups = page.locator('.refusals li');
      await groups.first().waitFor();
      assert.equal(await groups.count(), 1, 'six identical refusals, one group');
      const group = await groups.first().innerText();
      assert.match(group, /BMXAA4153E - .*PKGFAR/);
      assert.match(group, /6 records \(MXAPIASSET 6\)/);
      assert.match(
        group,
        /The site PKGFAR does not exist on this deployment: create it here \(object structure MXAPISITE/,
      );
      assert.match(await page.locator('.preview .counts').first().innerText(), /0 added, .* 6 refused/);

      await targetAdmin.create('mxapisite', { siteid: 'PKGFAR', orgid: 'EAGLENA', description: 'Far' });
      await page.getByRole('button', { name: `Preview package ${targetId}` }).click();
      await page.locator('.preview .counts', { hasText: '6 added' }).waitFor();
      assert.equal(await page.locator('.refusals').count(), 0, 'no refusal once the site exists');

      assert.equal(
        await page.getByText(`Preview of package ${targetId}: nothing was written.`).count(),
        1,
        "the preview's outcome is shown",
      );
      await page.getByRole('button', { name: `Deploy package ${targetId}` }).click();
      // The deploy speaks for the page from its start: the preview's outcome would read as the deploy's.
      await page.locator('[data-step]').first().waitFor();
      assert.equal(await page.getByText(/^Preview of package \d+: nothing was written\.$/).count(), 0);
      await page.locator('[data-step="run"][data-status="done"]', { hasText: /BMXAA8040I/ }).waitFor();
      await page.locator('.progress [role="status"]', { hasText: /^Deployed: / }).waitFor();
      // The label says the work ended; nothing says it is still deploying.
      await page.getByText(`The deploy of package ${targetId} ended (DEPLOYED)`).waitFor();
      assert.equal(await page.getByText(`Deploying package ${targetId}`).count(), 0);
      assert.equal(await targetAdmin.count('mxapiasset', 'siteid="PKGFAR"'), 6);
      await page.locator(`tr[data-package="${targetId}"]`, { hasText: 'DEPLOYED' }).waitFor();
      assert.deepEqual(await actionsOf(targetId), ['Preview back-out', 'Back out', 'Close']);
      const deployed = await targetAdmin.packages.record({
        pkgdefname: 'PKGFAR',
        dmpackageid: Number(targetId),
      });
      const inverse = String((deployed as Json).inversepackageid ?? '');
      assert.match(inverse, /^\d+$/, 'the deploy captured its back-out package');
      assert.equal(
        await page.locator(`tr[data-package="${inverse}"] td[data-kind]`).innerText(),
        `Back-out of package ${targetId}`,
      );
      assert.deepEqual(await actionsOf(inverse), ['Download']);

      await page.getByRole('button', { name: `Preview back-out package ${targetId}` }).click();
      await page
        .getByRole('heading', { name: new RegExp(`^Preview of the back-out of package ${targetId}`) })
        .waitFor();
      assert.match(await page.locator('.preview .counts').first().innerText(), /6 deleted/);
      await page.getByRole('button', { name: `Back out package ${targetId}` }).click();
      await page.locator('[data-step="run"][data-status="done"]').waitFor();
      await page.locator(`tr[data-package="${targetId}"]`, { hasText: 'BACKEDOUT' }).waitFor();
      assert.equal(await targetAdmin.count('mxapiasset', 'siteid="PKGFAR"'), 0);
      assert.deepEqual(await actionsOf(targetId), ['Close']);
    });

    test('a deploy that needs admin mode: offered with the property values, each step shown, stopped after the wait, then completed and admin mode off', async () => {
      // A custom attribute of ASSET on the source, given to one asset: its package changes the target's structure.
      await sourceAdmin.adminMode.on({ logoutmin: 0 });
      try {
        await sourceAdmin.create('mxapimaxattributecfg', {
          objectname: 'ASSET',
          attributename: 'PKGMIG',
          changetype: 'ADD',
          maxtype: 'INTEGER',
        });
        await sourceAdmin.http.request('POST', 'dbconfig/apply');
      } finally {
        await sourceAdmin.adminMode.off();
      }
      const [asset] = await sourceAdmin
        .query('mxapiasset', {
          where: 'siteid="BEDFORD"',
          select: 'assetnum',
          orderBy: '+assetnum',
          pageSize: 1,
        })
        .all();
      await sourceAdmin.update(String(asset!.href), { pkgmig: 42 });
      await sourceAdmin.create('mxapidmpkgdef', {
        pkgdefname: 'PKGATTR',
        type: 'SNAPSHOT',
        status: 'APPR',
        dmpkgdefcontent: [
          {
            objectstructure: 'MXAPIASSET',
            whereclause: `assetnum="${String(asset!.assetnum)}" and siteid="BEDFORD"`,
            cfgdataorder: 1,
          },
        ],
        dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
      });
      await signIn(source);
      await page.getByLabel('Definition', { exact: true }).selectOption('PKGATTR');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      const created = await page.getByText(/^Package \d+ of PKGATTR was created\.$/).innerText();
      const sourceId = /Package (\d+)/.exec(created)![1]!;
      await page.getByRole('button', { name: `Distribute package ${sourceId}` }).click();
      await page.locator(`tr[data-package="${sourceId}"]`).getByRole('link', { name: 'Download' }).waitFor();
      const download = page.waitForEvent('download');
      await page.locator(`tr[data-package="${sourceId}"]`).getByRole('link', { name: 'Download' }).click();
      const file = join(profileDir, 'PKGATTR.zip');
      await (await download).saveAs(file);

      await signIn(target);
      await page.getByLabel('Package file (.zip)').setInputFiles(file);
      await page.getByRole('button', { name: 'Upload' }).click();
      const received = await page.getByText(/was received as package \d+ \(DEPLOY_NEW\)/).innerText();
      const targetId = Number(/as package (\d+)/.exec(received)![1]!);

      // An ordinary user's session on the target: admin mode stays pending until logoutmin has passed.
      const login = await fetch(`${target.base}/j_security_check`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ j_username: 'WILSON', j_password: DEMO_PASSWORD }),
      });
      assert.ok(login.headers.getSetCookie().length > 0);

      await page.getByRole('button', { name: `Deploy package ${targetId}` }).click();
      await page.locator('[data-step="run"]', { hasText: /BMXAA0578E/ }).waitFor();
      const numsessions = page.getByLabel('Sessions allowed (numsessions)');
      await page.waitForFunction(
        () => (document.getElementById('flow-numsessions') as HTMLInputElement | null)?.value !== '',
      );
      assert.equal(
        await numsessions.inputValue(),
        await targetAdmin.properties.get('mxe.adminmode.numsessions'),
      );
      await page.getByLabel('Minutes before logout (logoutmin)').fill('0.05');
      await page.getByRole('button', { name: 'Turn admin mode on and deploy' }).click();
      await page.locator('[data-step="adminmode-on"][data-status="done"]').waitFor();
      await page.locator('[data-step="adminmode-wait"][data-status="running"]').waitFor();
      await page.getByRole('button', { name: 'Stop after this step' }).click();
      await page
        .getByText('Stopped after “Wait for admin mode”. Admin mode is on.')
        .waitFor({ timeout: 20_000 });
      assert.equal(await targetAdmin.adminMode.state(), 1);
      const pending = await targetAdmin.packages.record({ pkgdefname: 'PKGATTR', dmpackageid: targetId });
      assert.equal(pending.status, 'DEPLOY_NEW', 'nothing deployed while stopped');

      await page.getByRole('button', { name: 'Go on: Complete the deploy' }).click();
      await page.locator('[data-step="adminmode-off"][data-status="done"]').waitFor({ timeout: 20_000 });
      assert.match(
        await page.locator('[data-step="complete"][data-status="done"]').innerText(),
        /BMXAA8040I/,
      );
      assert.equal(await targetAdmin.adminMode.state(), 0);
      const [moved] = await targetAdmin
        .query('mxapiasset', {
          where: `assetnum="${String(asset!.assetnum)}" and siteid="BEDFORD"`,
          select: 'pkgmig',
        })
        .all();
      assert.equal(moved?.pkgmig, 42);

      // Closed on the source: its history no longer says it is ready for download.
      await signIn(source);
      const row = page.locator(`tr[data-package="${sourceId}"]`);
      assert.match(await row.innerText(), /is ready for download/);
      await page.getByRole('button', { name: `Close package ${sourceId}` }).click();
      await page.getByText(`Package ${sourceId} was closed.`).waitFor();
      await row.filter({ hasText: 'CLOSED' }).waitFor();
      assert.doesNotMatch(await row.innerText(), /ready for download/);
    });

    test('no error was thrown on the pages', () => {
      assert.deepEqual(pageErrors, []);
    });
  });
}
