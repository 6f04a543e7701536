import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { backoutPost, deployed, session } from '../../../test/helpers/migration-packages.js';
import { countStatements } from '../../../test/helpers/statements.js';
import type { JsonRecord } from '../packages.js';

/**
 * What a back-out costs per chunk of its inverse package (docs/migration.md, "Back-out"): one pass from the last
 * chunk to the first, each chunk's stored rows read once for both the check and the batch, its deletions removed
 * set-wise; so a chunk takes the same few statements whatever its number of records, and the check adds none. Its
 * progress is reported chunk by chunk.
 */

const RECORDS = 2600;

const asset = (index: number): JsonRecord => ({
  assetnum: `BOSTMT${String(index).padStart(5, '0')}`,
  siteid: 'BEDFORD',
  description: `Statement count ${index}`,
  status: 'OPERATING',
});

const count = (statements: readonly string[], pattern: RegExp) =>
  statements.filter((text) => pattern.test(text)).length;

describe('the statements of a back-out', () => {
  let target: TestApp;
  let cookie: Record<string, string>;

  before(async () => {
    target = await startTestApp();
    cookie = await session(target);
  });
  after(async () => {
    await target?.close();
  });

  test('each inverse chunk is checked and restored in a bounded number of statements', async () => {
    const db = target.storage.db;
    const lines = Array.from({ length: RECORDS }, (_, index) => asset(index));
    const dmpackageid = await deployed(
      target,
      'BOSTATEMENTS',
      [{ objectstructure: 'MXAPIASSET', lines }],
      [],
      cookie,
    );
    const chunks = (
      await sql<{ n: number }>`select count(*)::int as n from dmpkgstaging
        where dmpackageid = (select dmpackageid from dmpackage where inverseof = ${dmpackageid})
        and type = 'CFGDATA'`.execute(db)
    ).rows[0]!.n;
    assert.ok(chunks >= 3, `the inverse spans several chunks (${chunks})`);

    const { result: answer, statements } = await countStatements(() =>
      backoutPost(target, 'BOSTATEMENTS', dmpackageid, cookie),
    );
    assert.equal(answer.statusCode, 200, answer.body);
    assert.match(String(json(answer).warningmsg), /2,600 records restored/);
    const shown = statements.join('\n').slice(0, 3000);
    // One read of the stored rows per chunk, shared by the check and the batch: no narrower read of rowstamps.
    assert.equal(
      count(statements, /select \* from "asset"\s+where \("assetnum", "siteid"\) in/i),
      chunks,
      shown,
    );
    assert.equal(count(statements, /select "assetnum", "siteid", "rowstamp" from "asset"/i), 0, shown);
    // The records of a chunk deleted by one statement, and the inverse read once, eight chunks at a time.
    assert.equal(count(statements, /delete from "asset"/i), chunks, shown);
    assert.ok(count(statements, /from "dmpkgstaging"/i) <= Math.ceil(chunks / 8) + 1, shown);
    // Whatever the number of records: per chunk the read, the savepoint, a delete per child collection and the
    // records', its release and the progress; and a fixed number around them.
    assert.ok(statements.length <= chunks * 8 + 30, `${statements.length} statements:\n${shown}`);

    const left = await sql<{ n: number }>`
      select count(*)::int as n from asset where assetnum like 'BOSTMT%'`.execute(db);
    assert.equal(left.rows[0]!.n, 0, 'every added record deleted again');
    const again = await backoutPost(target, 'BOSTATEMENTS', dmpackageid, cookie);
    assert.equal(again.statusCode, 409, again.body);
  });

  test('records changed in the first and the last chunk: the first named, both counted, nothing written', async () => {
    const db = target.storage.db;
    const lines = Array.from({ length: RECORDS }, (_, index) => ({
      ...asset(index),
      assetnum: `BODRIFT${String(index).padStart(5, '0')}`,
    }));
    const dmpackageid = await deployed(
      target,
      'BODRIFTS',
      [{ objectstructure: 'MXAPIASSET', lines }],
      [],
      cookie,
    );
    const first = 'BODRIFT00000';
    const last = `BODRIFT${String(RECORDS - 1).padStart(5, '0')}`;
    await sql`update asset set description = 'Changed since' where assetnum in (${first}, ${last})`.execute(
      db,
    );

    const refused = await backoutPost(target, 'BODRIFTS', dmpackageid, cookie);
    assert.equal(refused.statusCode, 409, refused.body);
    const message = String(json(refused).Error?.message);
    assert.match(message, new RegExp(`assetnum=${first}, siteid=BEDFORD`), message);
    assert.match(
      message,
      /description deployed "Statement count 0", now "Changed since"; 2 record\(s\) changed/,
    );
    const left = await sql<{ n: number }>`
      select count(*)::int as n from asset where assetnum like 'BODRIFT%'`.execute(db);
    assert.equal(left.rows[0]!.n, RECORDS, 'the chunks written before the drift was found are rolled back');

    const forced = await backoutPost(target, 'BODRIFTS', dmpackageid, cookie, true);
    assert.equal(forced.statusCode, 200, forced.body);
    const gone = await sql<{ n: number }>`
      select count(*)::int as n from asset where assetnum like 'BODRIFT%'`.execute(db);
    assert.equal(gone.rows[0]!.n, 0);
  });

  test('the progress moves on between chunks, and on PostgreSQL is written to the package row', async () => {
    // Read by other processes from the row while the back-out's transaction is open (docs/migration.md, "Progress").
    const lines = Array.from({ length: RECORDS }, (_, index) => ({
      ...asset(index),
      assetnum: `BOPRG${String(index).padStart(5, '0')}`,
    }));
    const dmpackageid = await deployed(
      target,
      'BOPROGRESS',
      [{ objectstructure: 'MXAPIASSET', lines }],
      [],
      cookie,
    );
    const seen: Array<{ status: string; progress: string | null; stored?: string | null }> = [];
    target.services.migration.observeProgress(async (observed) => {
      const record = await target.services.migration.record('BOPROGRESS', observed);
      const reading: (typeof seen)[number] = { status: record.status, progress: record.progressstatus };
      if (target.storage.kind === 'postgres') {
        const row = await target.storage.db
          .selectFrom('dmpackage')
          .select('progressstatus')
          .where('dmpackageid', '=', observed)
          .executeTakeFirstOrThrow();
        reading.stored = row.progressstatus;
      }
      seen.push(reading);
    });

    const answer = await backoutPost(target, 'BOPROGRESS', dmpackageid, cookie);
    assert.equal(answer.statusCode, 200, answer.body);
    assert.ok(seen.length >= 2, `the progress moved on more than once: ${JSON.stringify(seen)}`);
    assert.ok(seen.every((reading) => reading.status === 'BACKOUT_INPROGRESS'));
    assert.ok(seen.every((reading) => /^Backing out: [\d,]+ of 2,600/.test(reading.progress ?? '')));
    assert.equal(new Set(seen.map((reading) => reading.progress)).size, seen.length);
    if (target.storage.kind === 'postgres')
      assert.deepEqual(
        seen.map((reading) => reading.stored),
        seen.map((reading) => reading.progress),
      );
    assert.equal((await target.services.migration.record('BOPROGRESS', dmpackageid)).status, 'BACKEDOUT');
  });
});
