import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { dynamicView } from '../../db/schema.js';
import { json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { TEST_DATABASE_URL, openTestStorage } from '../../../test/helpers/storage.js';
import { countStatements } from '../../../test/helpers/statements.js';
import { backoutPost, deployed, session } from '../../../test/helpers/migration-packages.js';
import type { Row } from '../../oslc/repository.js';
import { DEPLOYED_FIELD } from '../backout/capture.js';
import { exportRow } from '../backout/records.js';
import { EXPECTED_FIELD, driftAttributes, driftHash } from '../drift.js';
import { DELETE_ACTION, stagedLines, type JsonRecord } from '../packages.js';
import { lockDeploy } from '../repository.js';

/**
 * What a deploy of new records costs beyond their inserts (docs/migration.md, "Deploy: speed"): the inverse package
 * (docs/migration.md, "Back-out") takes an added record's deployed row from its insert instead of reading it again,
 * and the batch matches the records against the stored rows the inverse has just read; the package lock is the
 * schema's own.
 */

const asset = (assetnum: string, extra: JsonRecord = {}): JsonRecord => ({
  assetnum,
  siteid: 'BEDFORD',
  description: `Asset ${assetnum}`,
  status: 'OPERATING',
  ...extra,
});

/** Reads of asset rows by a set of keys (one statement per set, whatever its size). */
const keyedAssetReads = (statements: readonly string[]) =>
  statements.filter((text) => /select \* from "asset"\s+where \("assetnum", "siteid"\) in/i.test(text))
    .length;

describe('the inverse package of a deploy of new records', () => {
  let target: TestApp;
  let cookie: Record<string, string>;

  before(async () => {
    target = await startTestApp();
    cookie = await session(target);
  });
  after(async () => {
    await target?.close();
  });

  test('each added record restores as a deletion guarded by its stored row, read once per chunk; back-out removes them', async () => {
    const db = target.storage.db;
    const existing = await sql<{ assetnum: string; description: string | null }>`
      select assetnum, description from asset where siteid = 'BEDFORD' order by assetnum limit 1`.execute(db);
    const changed = existing.rows[0]!;
    const lines: JsonRecord[] = [];
    // The first chunk also holds the records whose deployed row is read again: a change of a stored record, a key
    // sent twice, and a record with a child collection.
    lines.push(asset(changed.assetnum, { description: 'Changed by the inverse test' }));
    lines.push(asset('INVTWICE'), asset('INVTWICE', { description: 'Sent again' }));
    lines.push(asset('INVCHILD', { assetspec: [{ assetattrid: 'ENCLOSURE', alnvalue: 'IP67' }] }));
    for (let index = 0; index < 1500; index++) lines.push(asset(`INV${String(index).padStart(5, '0')}`));
    const { result: dmpackageid, statements } = await countStatements(() =>
      deployed(target, 'INVERSEADD', [{ objectstructure: 'MXAPIASSET', lines }], [], cookie),
    );
    const chunks = await sql<{ n: number }>`
      select count(*)::int as n from dmpkgstaging where dmpackageid = ${dmpackageid} and type = 'CFGDATA'`.execute(
      db,
    );
    assert.ok(chunks.rows[0]!.n >= 2, 'the package spans several chunks');
    // Per chunk one read of the stored rows (before), and one more for the first chunk's records not plainly added.
    assert.equal(keyedAssetReads(statements), chunks.rows[0]!.n + 1, statements.join('\n').slice(0, 2000));

    const inverseid = (
      await sql<{ dmpackageid: number }>`
        select dmpackageid from dmpackage where inverseof = ${dmpackageid}`.execute(db)
    ).rows[0]!.dmpackageid;
    const object = target.services.resources.findObjectStructure('MXAPIASSET')!.root.object;
    const names = driftAttributes(object);
    const inverse = new Map<string, JsonRecord>();
    for await (const line of stagedLines(db, Number(inverseid), 1)) {
      const record = JSON.parse(line) as JsonRecord;
      inverse.set(String(record.assetnum), record);
    }
    assert.equal(inverse.size, 1503, 'every added or changed record, each once');
    const stored = await sql<Row>`
      select * from asset where assetnum like 'INV%' or assetnum = ${changed.assetnum}`.execute(
      dynamicView(db),
    );
    for (const row of stored.rows) {
      const line = inverse.get(String(row.assetnum))!;
      assert.ok(line, `an inverse line for ${String(row.assetnum)}`);
      assert.equal(line[EXPECTED_FIELD], driftHash(object, names, row), String(row.assetnum));
      assert.deepEqual(line[DEPLOYED_FIELD], JSON.parse(JSON.stringify(exportRow(object, row))));
      if (row.assetnum !== changed.assetnum) assert.equal(line._action, DELETE_ACTION);
    }
    assert.equal(inverse.get(changed.assetnum)!.description, changed.description);

    const backedOut = await backoutPost(target, 'INVERSEADD', dmpackageid, cookie);
    assert.equal(backedOut.statusCode, 200, backedOut.body);
    const left = await sql<{ n: number }>`
      select count(*)::int as n from asset where assetnum like 'INV%'`.execute(db);
    assert.equal(left.rows[0]!.n, 0);
    const restored = await sql<{ description: string | null }>`
      select description from asset where assetnum = ${changed.assetnum} and siteid = 'BEDFORD'`.execute(db);
    assert.deepEqual(restored.rows, [{ description: changed.description }]);
    assert.ok(json(backedOut));
  });
});

describe('the deploy lock of a package', () => {
  test('deployments in schemas of their own never wait for each other; one schema still serializes', async () => {
    const first = await openTestStorage({ demo: false });
    const second = await openTestStorage({ demo: false });
    try {
      await first.db.transaction().execute(async (holding) => {
        await lockDeploy(holding, 1);
        // The same package number in another deployment's schema: taken at once, not after a wait.
        await second.db.transaction().execute(async (other) => {
          await sql`set local lock_timeout = '5s'`.execute(other);
          await lockDeploy(other, 1);
        });
        // On PostgreSQL a second connection of the same schema waits (PGlite has one connection).
        if (!TEST_DATABASE_URL) return;
        await assert.rejects(
          first.db.transaction().execute(async (same) => {
            await sql`set local lock_timeout = '200ms'`.execute(same);
            await lockDeploy(same, 1);
          }),
          /lock timeout/,
        );
      });
    } finally {
      await first.close();
      await second.close();
    }
  });
});
