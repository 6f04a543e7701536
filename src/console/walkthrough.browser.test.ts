import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { EasClient } from '../client/index.js';
import { CHROMIUM, CHROMIUM_FLAGS, chromiumInstalled } from '../../test/helpers/chromium.js';
import {
  startServer,
  stopServer,
  stopServersAndDropSchema,
  type ServerProcess,
} from '../../test/helpers/processes.js';
import { TEST_DATABASE_URL } from '../../test/helpers/storage.js';

/**
 * The migration walkthrough of docs/console.md, in Chromium on two real server processes (each on a PGlite data
 * directory of its own, or a PostgreSQL schema of its own): a definition made in the console, a package created,
 * distributed, downloaded and uploaded to the target, previewed (the missing site grouped with its remedy, which the
 * administrator follows by adding the site to the definition, and no refusal after), deployed through the admin-mode
 * steps, backed out and closed, and the audit trail of it read and verified: every step from the console alone.
 * The data the source holds (a site, its assets, a custom attribute) is set up through the API first.
 * `EAS_CONSOLE_SCREENSHOTS=1` writes each page's screenshot (1024×700) into docs/console/.
 */
const SCREENSHOTS = process.env.EAS_CONSOLE_SCREENSHOTS === '1';
const SCREENSHOT_DIR = new URL('../../docs/console/', import.meta.url);
const ADMIN_PASSWORD = 'walkthrough-admin-pw';
/** A first start on a new PGlite directory (initdb, the demo data) is slow on a loaded machine. */
const STARTUP_MS = 180_000;
const SITE = 'WALKFAR';
const ASSETS = 3;
const DEFINITION_COLUMNS =
  'type,status,dmpkgdefcontent{objectstructure,whereclause,cfgdataorder},dmpkgdsttrgt{targetname,type}';

const installed = chromiumInstalled('the console walkthrough in a browser');

type Json = Record<string, unknown>;

/** A deployment as a server process of its own, with what the test removes afterwards. */
interface Deployment {
  server: ServerProcess;
  admin: EasClient;
  close: () => Promise<void>;
}

async function startDeployment(name: string, work: string): Promise<Deployment> {
  const schema = `eas_test_walk_${name.toLowerCase()}_${process.pid}_${randomBytes(3).toString('hex')}`;
  const server = await startServer({
    name,
    adminPassword: ADMIN_PASSWORD,
    startupTimeoutMs: STARTUP_MS,
    ...(TEST_DATABASE_URL && { databaseUrl: TEST_DATABASE_URL, schema }),
    env: {
      EAS_DEMO: '1',
      EAS_DEMO_PASSWORD: 'walkthrough-demo-pw',
      ...(!TEST_DATABASE_URL && { EAS_DATA_DIR: join(work, name) }),
    },
  });
  const admin = new EasClient({
    baseUrl: server.base,
    credentials: { scheme: 'maxauth', user: 'MAXADMIN', password: ADMIN_PASSWORD },
  });
  const close = async () => {
    await admin.logout().catch(() => undefined);
    if (TEST_DATABASE_URL) await stopServersAndDropSchema([server], TEST_DATABASE_URL, schema);
    else await stopServer(server);
  };
  return { server, admin, close };
}

/** The source's data: a site the target lacks, assets of it carrying a custom attribute the target lacks too. */
async function sourceData(admin: EasClient): Promise<void> {
  await admin.adminMode.on({ logoutmin: 0 });
  try {
    await admin.create('mxapimaxattributecfg', {
      objectname: 'ASSET',
      attributename: 'WALKMIG',
      changetype: 'ADD',
      maxtype: 'INTEGER',
    });
    await admin.http.request('POST', 'dbconfig/apply');
  } finally {
    await admin.adminMode.off();
  }
  await admin.create('mxapisite', { siteid: SITE, orgid: 'EAGLENA', description: 'Walkthrough site' });
  for (let index = 1; index <= ASSETS; index++)
    await admin.create('mxapiasset', { assetnum: `WALK${index}`, siteid: SITE, walkmig: 7 });
}

if (installed) {
  describe('the console walkthrough: a migration between two servers from the browser alone', () => {
    let work: string;
    let source: Deployment;
    let target: Deployment;
    let browser: Browser;
    let onSource: Page;
    let onTarget: Page;
    const pageErrors: string[] = [];

    const screenshot = async (page: Page, name: string) => {
      if (!SCREENSHOTS) return;
      await mkdir(SCREENSHOT_DIR, { recursive: true });
      // The top of the page: its title and the outcome of the step (a click may have scrolled it).
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOT_DIR).pathname });
    };
    /** A page of its own per server (cookies of 127.0.0.1 are shared by ports), signed in as MAXADMIN. */
    const openSignedIn = async (deployment: Deployment): Promise<Page> => {
      const context = await browser.newContext({
        viewport: { width: 1024, height: 700 },
        acceptDownloads: true,
      });
      const page = await context.newPage();
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(`${deployment.server.base}/console/`);
      await page.getByLabel('User name').fill('maxadmin');
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByLabel('Password').press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      return page;
    };
    const go = async (page: Page, title: string) => {
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: title }).click();
      await page.getByRole('heading', { level: 1, name: title }).waitFor();
    };
    const row = (page: Page, id: string) => page.locator(`tr[data-package="${id}"]`);
    /** Creates a package of the definition chosen, distributes and downloads it: its id and its file. */
    const createAndDownload = async (definition: string, file: string) => {
      await go(onSource, 'Packages');
      await onSource.getByLabel('Definition', { exact: true }).selectOption(definition);
      await onSource.getByRole('button', { name: 'Create', exact: true }).click();
      const created = await onSource
        .getByText(new RegExp(`^Package \\d+ of ${definition} was created\\.$`))
        .innerText();
      const id = /Package (\d+)/.exec(created)![1]!;
      await onSource.getByRole('button', { name: `Distribute package ${id}` }).click();
      await row(onSource, id).filter({ hasText: 'is ready for download' }).waitFor();
      const download = onSource.waitForEvent('download');
      await row(onSource, id).getByRole('link', { name: 'Download' }).click();
      await (await download).saveAs(file);
      return id;
    };
    const upload = async (file: string) => {
      await go(onTarget, 'Packages');
      await onTarget.getByLabel('Package file (.zip)').setInputFiles(file);
      await onTarget.getByRole('button', { name: 'Upload' }).click();
      const received = await onTarget.getByText(/was received as package \d+ \(DEPLOY_NEW\)/).innerText();
      return /as package (\d+)/.exec(received)![1]!;
    };

    before(async () => {
      work = await mkdtemp(join(tmpdir(), 'eas-walkthrough-'));
      [source, target] = await Promise.all([
        startDeployment('WALKSRC', work),
        startDeployment('WALKTGT', work),
      ]);
      await sourceData(source.admin);
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
      [onSource, onTarget] = await Promise.all([openSignedIn(source), openSignedIn(target)]);
    });
    after(async () => {
      await browser?.close();
      await Promise.all([source?.close(), target?.close()]);
      if (work) await rm(work, { recursive: true, force: true });
    });

    test('a definition is made in the console: the where clause is checked as it is typed', async () => {
      await go(onSource, 'Package definitions');
      await onSource.getByRole('button', { name: 'New definition' }).click();
      await onSource.getByLabel('Name', { exact: true }).fill('walkthru');
      await onSource.getByLabel('Description').fill('Walkthrough assets');
      await onSource.getByLabel('Object structure 1', { exact: true }).selectOption('MXAPIASSET');
      const where = onSource.getByLabel('Where clause 1', { exact: true });
      await where.fill('siteid=');
      await onSource.locator('#content-check-1', { hasText: /^BMXAA8744E - Encountered/ }).waitFor();
      const create = onSource.getByRole('button', { name: 'Create definition' });
      assert.equal(await create.isDisabled(), true, 'a clause that does not parse is not sent');
      await where.fill(`siteid="${SITE}"`);
      await onSource.locator('#content-check-1', { hasText: 'The where clause parses.' }).waitFor();
      await screenshot(onSource, 'definition-new');
      await create.click();
      await onSource.getByText('Definition WALKTHRU was created.').waitFor();
      const [stored] = await source.admin
        .query('mxapidmpkgdef', { where: 'pkgdefname="WALKTHRU"', select: DEFINITION_COLUMNS })
        .all();
      assert.equal(stored?.type, 'SNAPSHOT');
      assert.equal(stored?.status, 'APPR');
      const content = stored?.dmpkgdefcontent as Json[];
      assert.deepEqual(
        content.map((entry) => [entry.objectstructure, entry.whereclause, entry.cfgdataorder]),
        [['MXAPIASSET', `siteid="${SITE}"`, 1]],
      );
      assert.deepEqual(
        (stored?.dmpkgdsttrgt as Json[]).map((entry) => [entry.targetname, entry.type]),
        [['FILE1', 'FILE']],
      );
      await onSource.locator('tr[data-definition="WALKTHRU"]').waitFor();
      await screenshot(onSource, 'definitions');
    });

    let firstFile = '';
    let firstOnTarget = '';
    test('created, distributed, downloaded, uploaded: the preview groups the missing site with its remedy', async () => {
      firstFile = join(work, 'walkthru-1.zip');
      await createAndDownload('WALKTHRU', firstFile);
      await screenshot(onSource, 'walkthrough-source');
      firstOnTarget = await upload(firstFile);
      await onTarget.getByRole('button', { name: `Preview package ${firstOnTarget}` }).click();
      const groups = onTarget.locator('.refusals li');
      await groups.first().waitFor();
      assert.equal(await groups.count(), 1, `${ASSETS} identical refusals, one group`);
      const group = await groups.first().innerText();
      assert.match(group, new RegExp(`BMXAA4153E - .*${SITE}`));
      assert.match(group, new RegExp(`${ASSETS} records \\(MXAPIASSET ${ASSETS}\\)`));
      assert.match(group, new RegExp(`The site ${SITE} does not exist on this deployment: create it here`));
      assert.match(group, /MXAPISITE/);
      assert.match(
        await onTarget.locator('.preview .counts').first().innerText(),
        new RegExp(`0 added, .* ${ASSETS} refused`),
      );
      await screenshot(onTarget, 'walkthrough-preview-refused');
      await onTarget.getByRole('button', { name: `Close package ${firstOnTarget}` }).click();
      await row(onTarget, firstOnTarget).filter({ hasText: 'CLOSED' }).waitFor();
    });

    let sourceId = '';
    let targetId = '';
    test('the remedy followed in the console: the site added to the definition, no refusal in the new package', async () => {
      await go(onSource, 'Package definitions');
      await onSource.getByRole('button', { name: 'Edit definition WALKTHRU' }).click();
      await onSource.getByRole('heading', { name: 'Definition WALKTHRU' }).waitFor();
      assert.equal(
        await onSource.getByLabel('Where clause 1', { exact: true }).inputValue(),
        `siteid="${SITE}"`,
      );
      await onSource.getByRole('button', { name: 'Add object structure' }).click();
      await onSource.getByLabel('Object structure 2', { exact: true }).selectOption('MXAPISITE');
      await onSource.getByLabel('Where clause 2', { exact: true }).fill(`siteid="${SITE}"`);
      await onSource.getByRole('button', { name: 'Save definition' }).click();
      await onSource.getByText('Definition WALKTHRU was saved.').waitFor();
      const [stored] = await source.admin
        .query('mxapidmpkgdef', { where: 'pkgdefname="WALKTHRU"', select: DEFINITION_COLUMNS })
        .all();
      assert.deepEqual(
        (stored?.dmpkgdefcontent as Json[])
          .map((entry) => [entry.objectstructure, entry.cfgdataorder])
          .sort((one, other) => Number(one[1]) - Number(other[1])),
        [
          ['MXAPIASSET', 1],
          ['MXAPISITE', 2],
        ],
      );

      const file = join(work, 'walkthru-2.zip');
      sourceId = await createAndDownload('WALKTHRU', file);
      targetId = await upload(file);
      await onTarget.getByRole('button', { name: `Preview package ${targetId}` }).click();
      await onTarget.locator('.preview .counts', { hasText: `${ASSETS} added` }).waitFor();
      assert.equal(await onTarget.locator('.refusals').count(), 0, 'no refusal once the site travels');
      await screenshot(onTarget, 'walkthrough-preview');
    });

    test('deployed through the admin-mode steps, then backed out', async () => {
      await onTarget.getByRole('button', { name: `Deploy package ${targetId}` }).click();
      await onTarget.locator('[data-step="run"]', { hasText: /BMXAA0578E/ }).waitFor();
      await onTarget.waitForFunction(
        () => (document.getElementById('flow-numsessions') as HTMLInputElement | null)?.value !== '',
      );
      await onTarget.getByLabel('Minutes before logout (logoutmin)').fill('0');
      await onTarget.getByRole('button', { name: 'Turn admin mode on and deploy' }).click();
      await onTarget.locator('[data-step="adminmode-off"][data-status="done"]').waitFor({ timeout: 30_000 });
      assert.match(
        await onTarget.locator('[data-step="complete"][data-status="done"]').innerText(),
        /BMXAA8040I/,
      );
      await row(onTarget, targetId).filter({ hasText: 'DEPLOYED' }).waitFor();
      await screenshot(onTarget, 'walkthrough-deploy');
      assert.equal(await target.admin.adminMode.state(), 0);
      const moved = await target.admin
        .query('mxapiasset', { where: `siteid="${SITE}"`, select: 'assetnum,walkmig' })
        .all();
      assert.deepEqual(
        moved.map((asset) => [asset.assetnum, asset.walkmig]).sort(),
        Array.from({ length: ASSETS }, (_, index) => [`WALK${index + 1}`, 7]),
      );

      await onTarget.getByRole('button', { name: `Back out package ${targetId}` }).click();
      // The back-out's first answer: done, or BMXAA0578E when it changes the configuration back (admin mode offered).
      const first = onTarget.locator('[data-step="run"][data-status="done"]');
      await first.waitFor();
      if (/BMXAA0578E/.test(await first.innerText())) {
        await onTarget.getByLabel('Minutes before logout (logoutmin)').fill('0');
        await onTarget.getByRole('button', { name: 'Turn admin mode on and back-out' }).click();
        await onTarget
          .locator('[data-step="adminmode-off"][data-status="done"]')
          .waitFor({ timeout: 30_000 });
      }
      await row(onTarget, targetId).filter({ hasText: 'BACKEDOUT' }).waitFor();
      assert.equal(await target.admin.count('mxapiasset', `siteid="${SITE}"`), 0);
      assert.equal(
        await target.admin.count('mxapisite', `siteid="${SITE}"`),
        0,
        'the site the deploy added too',
      );
      await screenshot(onTarget, 'walkthrough-backout');
    });

    test('closed on both servers', async () => {
      await onTarget.getByRole('button', { name: `Close package ${targetId}` }).click();
      await row(onTarget, targetId).filter({ hasText: 'CLOSED' }).waitFor();
      await go(onSource, 'Packages');
      await onSource.getByRole('button', { name: `Close package ${sourceId}` }).click();
      await row(onSource, sourceId).filter({ hasText: 'CLOSED' }).waitFor();
      for (const [admin, id] of [
        [target.admin, targetId],
        [source.admin, sourceId],
      ] as const) {
        const [record] = await admin
          .query('mxapidmpackage', { where: `dmpackageid=${id}`, select: 'status' })
          .all();
        assert.equal(record?.status, 'CLOSED');
      }
      await screenshot(onSource, 'walkthrough-closed');
    });

    test('the audit page on the target: the package events, filtered, and the chain verified', async () => {
      await go(onTarget, 'Audit trail');
      await onTarget.getByLabel('Event type').fill('package.*');
      await onTarget.getByRole('button', { name: 'Show', exact: true }).click();
      await onTarget.locator('p.where', { hasText: 'eventtype="package.%"' }).waitFor();
      const events = onTarget.locator('td[data-eventtype]');
      const types = new Set(await events.allInnerTexts());
      for (const expected of [
        'package.upload',
        'package.preview',
        'package.complete',
        'package.backout',
        'package.close',
      ])
        assert.ok(types.has(expected), `${expected} among ${[...types].join(', ')}`);
      assert.ok(
        [...types].every((type) => type.startsWith('package.')),
        'only package events',
      );
      await onTarget.getByRole('button', { name: 'Verify chain' }).click();
      await onTarget
        .locator('[data-verified="ok"]', { hasText: /^The chain holds: \d+ records checked/ })
        .waitFor();
      await screenshot(onTarget, 'audit');
    });

    test('no error was thrown on the pages', () => {
      assert.deepEqual(pageErrors, []);
    });
  });
}
