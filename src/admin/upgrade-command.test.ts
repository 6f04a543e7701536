import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openTestStorage } from '../../test/helpers/storage.js';
import type { Storage } from '../db/database.js';
import { migrations } from '../db/migrations/index.js';
import { SCHEMA_LEVEL } from '../db/process-registry.js';
import { runUpgradeCheck } from './upgrade-command.js';

/**
 * `npm run admin -- upgrade check` on one schema, in-process: its usage, an up-to-date schema, and a newer release's
 * contract migration. Against processes of earlier releases: src/db/rolling-upgrade.multiprocess.test.ts.
 */
describe('upgrade check', () => {
  let storage: Storage;
  before(async () => {
    storage = await openTestStorage({ demo: false });
  });
  after(() => storage.close());

  async function check(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runUpgradeCheck(argv, storage, {
      out: (text) => (out += text),
      err: (text) => (err += text),
    });
    return { code, out, err };
  }

  test('takes exactly: upgrade check', async () => {
    for (const argv of [
      ['upgrade'],
      ['upgrade', 'run'],
      ['upgrade', 'check', 'now'],
      ['upgrade', 'check', '--x'],
    ]) {
      const { code, err } = await check(...argv);
      assert.equal(code, 2, argv.join(' '));
      assert.match(err, /Usage: npm run admin -- upgrade check/);
    }
  });

  test('a schema this release migrated: nothing pending, possible', async () => {
    const { code, out } = await check('upgrade', 'check');
    assert.equal(code, 0, out);
    assert.ok(out.includes(`This release: level ${SCHEMA_LEVEL} (${migrations.at(-1)!.name}).`), out);
    assert.match(out, /Pending migrations: none\./);
    assert.match(out, /Rolling upgrade: possible/);
  });

  test("a newer release's contract migration: not possible, naming it", async () => {
    await sql`insert into kysely_migration (name, timestamp) values ('0099-future-drop', ${new Date().toISOString()})`.execute(
      storage.db,
    );
    await sql`insert into easmigration (name, phase) values ('0099-future-drop', 'contract')`.execute(
      storage.db,
    );
    try {
      const { code, out } = await check('upgrade', 'check');
      assert.equal(code, 4, out);
      assert.match(
        out,
        /Rolling upgrade: not possible: the schema has migration 0099-future-drop \(contract\) of a newer release/,
      );
    } finally {
      await sql`delete from kysely_migration where name = '0099-future-drop'`.execute(storage.db);
      await sql`delete from easmigration where name = '0099-future-drop'`.execute(storage.db);
    }
  });
});
