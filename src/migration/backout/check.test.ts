import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, type TestApp, startTestApp } from '../../../test/helpers/app.js';
import {
  backoutPost,
  deployed,
  post,
  session,
  type PackageEntry,
} from '../../../test/helpers/migration-packages.js';

/**
 * The check before a back-out (docs/migration.md, "Back-out"): a record whose root row still carries the rowstamp
 * the deploy left is proven unchanged without a hash; any other is compared by hash, so a write that changed nothing
 * is no drift, and an inverse captured without rowstamps is checked as before.
 */

const entryOf = (assetnum: string, description: string): PackageEntry => ({
  objectstructure: 'MXAPIASSET',
  lines: [{ assetnum, siteid: 'NASHUA', description }],
});

describe('the check before a back-out', () => {
  let target: TestApp;
  let cookie: Record<string, string>;

  before(async () => {
    target = await startTestApp();
    cookie = await session(target);
  });
  after(async () => {
    await target?.close();
  });

  /** The staged record lines of the inverse of a deployed package (its manifest left out). */
  async function inverseLines(
    pkgdefname: string,
    dmpackageid: number,
  ): Promise<Array<Record<string, unknown>>> {
    const { rows } = await sql<{ content: string }>`select content from dmpkgstaging
      where dmpackageid = ${await inverseOf(pkgdefname, dmpackageid)} order by cfgdataorder, chunk`.execute(
      target.storage.db,
    );
    return rows
      .flatMap((row) => row.content.split('\n'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.formatVersion === undefined);
  }

  async function inverseOf(pkgdefname: string, dmpackageid: number): Promise<number> {
    const record = json(
      await target.app.inject({
        method: 'GET',
        url: `/maximo/oslc/dm/package?pkgdefname=${pkgdefname}&dmpackageid=${dmpackageid}`,
        headers: cookie,
      }),
    );
    return record.inversepackageid as number;
  }

  /** Changes an asset's description in the database itself, around the write path (a new rowstamp all the same). */
  async function setDescription(assetnum: string, description: string): Promise<void> {
    await sql`update asset set description = ${description} where assetnum = ${assetnum}`.execute(
      target.storage.db,
    );
  }

  test('the inverse carries the deployed rowstamp; a record rewritten with its own values is no drift', async () => {
    const dmpackageid = await deployed(target, 'BOSTAMP1', [entryOf('BOSAME', 'Deployed')], [], cookie);
    const [line] = await inverseLines('BOSTAMP1', dmpackageid);
    const { rows } = await sql<{ rowstamp: unknown }>`select rowstamp from asset
      where assetnum = 'BOSAME'`.execute(target.storage.db);
    assert.equal(line?._deployedstamp, String(rows[0]!.rowstamp));

    await setDescription('BOSAME', 'Deployed');
    const { rows: after } = await sql<{ rowstamp: unknown }>`select rowstamp from asset
      where assetnum = 'BOSAME'`.execute(target.storage.db);
    assert.notEqual(String(after[0]!.rowstamp), line?._deployedstamp, 'the write renewed the rowstamp');
    const preview = json(
      await post(target, '/dm/preview', { pkgdefname: 'BOSTAMP1', dmpackageid, backout: true }, cookie),
    );
    assert.equal(preview.driftcount, 0, 'the hash of the same values equals the deployed one');
    const backedOut = await backoutPost(target, 'BOSTAMP1', dmpackageid, cookie);
    assert.equal(backedOut.statusCode, 200, backedOut.body);
  });

  test('a record changed in the database since the deploy: refused with both values', async () => {
    const dmpackageid = await deployed(target, 'BOSTAMP2', [entryOf('BOSQL', 'Deployed')], [], cookie);
    await setDescription('BOSQL', 'Changed by SQL');
    const refused = await backoutPost(target, 'BOSTAMP2', dmpackageid, cookie);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(json(refused).Error?.reasonCode, 'EAS0180E');
    assert.match(
      String(json(refused).Error?.message),
      /description deployed "Deployed", now "Changed by SQL"/,
    );
    await setDescription('BOSQL', 'Deployed');
    assert.equal((await backoutPost(target, 'BOSTAMP2', dmpackageid, cookie)).statusCode, 200);
  });

  test('an inverse captured without rowstamps: checked by hash, refused and then backed out', async () => {
    const dmpackageid = await deployed(target, 'BOSTAMP3', [entryOf('BOOLD', 'Deployed')], [], cookie);
    await sql`update dmpkgstaging set content = regexp_replace(content, ',"_deployedstamp":"[0-9]+"', '', 'g')
      where dmpackageid = ${await inverseOf('BOSTAMP3', dmpackageid)}`.execute(target.storage.db);
    assert.equal((await inverseLines('BOSTAMP3', dmpackageid))[0]?._deployedstamp, undefined);
    await setDescription('BOOLD', 'Changed since');
    const refused = await backoutPost(target, 'BOSTAMP3', dmpackageid, cookie);
    assert.equal(json(refused).Error?.reasonCode, 'EAS0180E', refused.body);
    assert.match(
      String(json(refused).Error?.message),
      /description deployed "Deployed", now "Changed since"/,
    );
    await setDescription('BOOLD', 'Deployed');
    const backedOut = await backoutPost(target, 'BOSTAMP3', dmpackageid, cookie);
    assert.equal(backedOut.statusCode, 200, backedOut.body);
    const { rows } = await sql`select 1 from asset where assetnum = 'BOOLD'`.execute(target.storage.db);
    assert.equal(rows.length, 0, 'the added record is deleted again');
  });
});
