import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { CHROMIUM, CHROMIUM_FLAGS, chromiumInstalled } from '../../test/helpers/chromium.js';
import { ADMIN_PASSWORD } from '../../test/helpers/storage.js';
import { EasClient } from '../client/index.js';

/**
 * The Package definitions and Audit trail pages in Chromium (docs/console.md): a CHANGE definition with a DATABASE
 * target made, its password written and never shown, kept when the definition is edited without typing one, a
 * content row removed on save, activated, reset, deactivated and deleted; a clause naming an unknown attribute refused
 * by the server with its reason code; the audit trail filtered by event type, user and time, paged, and its chain
 * verified, then found broken at the record altered behind the service's back.
 */
const installed = chromiumInstalled('the definitions and audit pages in a browser');

type Json = Record<string, unknown>;

if (installed) {
  describe('the definitions and audit pages in a browser', () => {
    let testApp: TestApp;
    let base: string;
    let admin: EasClient;
    let profileDir: string;
    let browser: BrowserContext;
    let page: Page;
    const pageErrors: string[] = [];

    const go = async (title: string) => {
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: title }).click();
      await page.getByRole('heading', { level: 1, name: title }).waitFor();
    };
    const definition = async (name: string): Promise<Json | undefined> => {
      const [record] = await admin
        .query('mxapidmpkgdef', {
          where: `pkgdefname="${name}"`,
          select:
            'type,status,active,description,dmpkgdefcontent{objectstructure,whereclause},dmpkgdsttrgt{*}',
        })
        .all();
      return record as Json | undefined;
    };
    const storedPassword = async (name: string) =>
      (
        await testApp.storage.db
          .selectFrom('dmpkgdsttrgt')
          .select('password')
          .where('pkgdefname', '=', name)
          .executeTakeFirst()
      )?.password ?? null;

    before(async () => {
      testApp = await startTestApp({ EAS_SERVER_NAME: 'DEFAUDIT' });
      await testApp.app.listen({ port: 0, host: '127.0.0.1' });
      const address = testApp.app.server.address();
      base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/maximo`;
      admin = new EasClient({
        baseUrl: base,
        credentials: { scheme: 'maxauth', user: 'MAXADMIN', password: ADMIN_PASSWORD },
      });
      profileDir = await mkdtemp(join(tmpdir(), 'eas-chromium-defaudit-'));
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_FLAGS,
        viewport: { width: 1280, height: 900 },
      });
      page = browser.pages()[0] ?? (await browser.newPage());
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(`${base}/console/`);
      await page.getByLabel('User name').fill('maxadmin');
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByLabel('Password').press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    });
    after(async () => {
      await browser?.close();
      if (profileDir) await rm(profileDir, { recursive: true, force: true });
      await admin?.logout();
      await testApp?.close();
    });

    test('a where clause naming an unknown attribute parses, and is refused by the server with its reason code', async () => {
      await go('Package definitions');
      await page.getByRole('button', { name: 'New definition' }).click();
      await page.getByLabel('Name', { exact: true }).fill('DEFBAD');
      await page.getByLabel('Object structure 1', { exact: true }).selectOption('MXAPIITEM');
      await page.getByLabel('Where clause 1', { exact: true }).fill('nosuchattribute="X"');
      await page.locator('#content-check-1', { hasText: 'The where clause parses.' }).waitFor();
      await page.getByRole('button', { name: 'Create definition' }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: /^EAS0020E - / })
        .waitFor();
      assert.equal(await definition('DEFBAD'), undefined, 'nothing was created');
    });

    test('a CHANGE definition with a DATABASE target: the password written, never shown, kept on edit', async () => {
      await page.getByLabel('Name', { exact: true }).fill('DEFCHG');
      await page.getByLabel('Type', { exact: true }).selectOption('CHANGE');
      await page.getByLabel('Where clause 1', { exact: true }).fill('');
      await page.locator('#content-check-1', { hasText: 'All records.' }).waitFor();
      await page.getByRole('button', { name: 'Add object structure' }).click();
      await page.getByLabel('Object structure 2', { exact: true }).selectOption('MXAPIOPERLOC');
      await page.getByLabel('Target name 1', { exact: true }).fill('db1');
      await page.getByLabel('Target type 1', { exact: true }).selectOption('DATABASE');
      await page.getByLabel('Database URL 1', { exact: true }).fill('postgres://db.example:5432/eas');
      await page.getByLabel('User 1', { exact: true }).fill('migrator');
      await page.getByLabel('Password 1', { exact: true }).fill('target-secret-pw');
      await page.getByRole('button', { name: 'Create definition' }).click();
      await page.getByText('Definition DEFCHG was created.').waitFor();
      const stored = await definition('DEFCHG');
      assert.equal(stored?.type, 'CHANGE');
      assert.deepEqual((stored?.dmpkgdefcontent as Json[]).map((row) => row.objectstructure).sort(), [
        'MXAPIITEM',
        'MXAPIOPERLOC',
      ]);
      const [target] = stored?.dmpkgdsttrgt as Json[];
      assert.equal(target?.targetname, 'DB1');
      assert.equal(target?.username, 'migrator');
      assert.equal(target?.password, undefined, 'never answered');
      const sealed = await storedPassword('DEFCHG');
      assert.match(String(sealed), /^v1:/, 'written, sealed');
      assert.doesNotMatch(await page.content(), /target-secret-pw/);

      await page.getByRole('button', { name: 'Edit definition DEFCHG' }).click();
      assert.equal(await page.getByLabel('Password 1', { exact: true }).inputValue(), '', 'not shown');
      await page.getByLabel('Description', { exact: true }).fill('Items and locations');
      await page.getByRole('button', { name: 'Remove object structure 2' }).click();
      await page.getByRole('button', { name: 'Save definition' }).click();
      await page.getByText('Definition DEFCHG was saved.').waitFor();
      const edited = await definition('DEFCHG');
      assert.equal(edited?.description, 'Items and locations');
      assert.deepEqual(
        (edited?.dmpkgdefcontent as Json[]).map((row) => row.objectstructure),
        ['MXAPIITEM'],
        'the row removed is deleted',
      );
      assert.notEqual(await storedPassword('DEFCHG'), null, 'the password is kept');
    });

    test('activated, reset, deactivated and deleted from its row', async () => {
      const row = page.locator('tr[data-definition="DEFCHG"]');
      await page.getByRole('button', { name: 'Activate definition DEFCHG' }).click();
      await page.getByText('Definition DEFCHG is active.').waitFor();
      assert.equal((await definition('DEFCHG'))?.active, true);
      await row
        .filter({ hasText: 'active' })
        .getByRole('button', { name: 'Deactivate definition DEFCHG' })
        .waitFor();
      await page.getByRole('button', { name: 'Reset definition DEFCHG' }).click();
      await page.getByText('The tracked changes of DEFCHG were cleared.').waitFor();
      await page.getByRole('button', { name: 'Deactivate definition DEFCHG' }).click();
      await page.getByText('Definition DEFCHG is inactive.').waitFor();
      assert.equal((await definition('DEFCHG'))?.active, false);
      await page.getByRole('button', { name: 'Delete definition DEFCHG' }).click();
      await page.getByText('Definition DEFCHG was deleted.').waitFor();
      assert.equal(await definition('DEFCHG'), undefined);
      assert.equal(await row.count(), 0);
    });

    test('the audit trail filtered by event type, user and time, and paged', async () => {
      for (let attempt = 0; attempt < 2; attempt++)
        await fetch(`${base}/oslc/whoami`, {
          headers: { maxauth: Buffer.from('WILSON:wrong-password').toString('base64') },
        });
      // More than a page of records: definitions written and deleted (packagedef.insert, packagedef.delete).
      for (let index = 1; index <= 13; index++)
        await admin.create('mxapidmpkgdef', { pkgdefname: `AUDPAGE${index}`, type: 'SNAPSHOT' });
      for (const written of await admin.query('mxapidmpkgdef', { where: 'pkgdefname="AUDPAGE%"' }).all())
        await admin.http.request('DELETE', String(written.href));
      await go('Audit trail');
      await page.getByLabel('Event type').fill('login.failure');
      await page.getByLabel('User', { exact: true }).fill('wilson');
      await page.getByRole('button', { name: 'Show', exact: true }).click();
      await page.locator('p.where', { hasText: 'eventtype="login.failure" and userid="WILSON"' }).waitFor();
      const users = await page.locator('td[data-userid]').allInnerTexts();
      assert.ok(users.length >= 1, 'the failed logins are listed');
      assert.ok(
        users.every((user) => user.startsWith('WILSON')),
        users.join(', '),
      );
      assert.deepEqual(
        new Set(await page.locator('td[data-eventtype]').allInnerTexts()),
        new Set(['login.failure']),
      );

      await page.getByLabel('To', { exact: true }).fill('2001-01-01T00:00');
      await page.getByRole('button', { name: 'Show', exact: true }).click();
      await page.getByText('No record matches.').waitFor();

      for (const name of ['Event type', 'User', 'To']) await page.getByLabel(name, { exact: true }).fill('');
      await page.getByRole('button', { name: 'Show', exact: true }).click();
      await page.getByText('Every record, newest first.').waitFor();
      const total = await admin.count('mxapiaudit');
      assert.ok(total > 25, `more than a page: ${total}`);
      await page.getByText(new RegExp(`^${total} records, page 1 of ${Math.ceil(total / 25)}\\.`)).waitFor();
      const ids = async () =>
        await page
          .locator('tr[data-audit]')
          .evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-audit'))));
      const first = await ids();
      assert.equal(first.length, 25);
      assert.equal(await page.getByRole('button', { name: 'Newer' }).isDisabled(), true);
      await page.getByRole('button', { name: 'Older' }).click();
      await page.getByText(/records, page 2 of/).waitFor();
      const second = await ids();
      assert.ok(Math.max(...second) < Math.min(...first), 'older records, none repeated');
    });

    test('verify chain: ok, then the first record altered behind the service is named', async () => {
      await page.getByRole('button', { name: 'Verify chain' }).click();
      await page
        .locator('[data-verified="ok"]', { hasText: /^The chain holds: \d+ records checked/ })
        .waitFor();
      const victim = await testApp.storage.db
        .selectFrom('easaudit')
        .select(['auditid', 'userid'])
        .where('chainseq', 'is not', null)
        .orderBy('chainseq')
        .offset(3)
        .limit(1)
        .executeTakeFirstOrThrow();
      await testApp.storage.db
        .updateTable('easaudit')
        .set({ userid: 'SOMEONEELSE' })
        .where('auditid', '=', victim.auditid)
        .execute();
      try {
        await page.getByRole('button', { name: 'Verify chain' }).click();
        const broken = page.locator('[data-verified="broken"]');
        await broken.waitFor();
        assert.equal(await broken.getAttribute('data-auditid'), String(victim.auditid));
        assert.match(
          await broken.innerText(),
          new RegExp(`^The chain does not verify: .*${victim.auditid}.*altered`),
        );
      } finally {
        await testApp.storage.db
          .updateTable('easaudit')
          .set({ userid: victim.userid })
          .where('auditid', '=', victim.auditid)
          .execute();
      }
    });

    test('no error was thrown on the pages', () => {
      assert.deepEqual(pageErrors, []);
    });
  });
}
