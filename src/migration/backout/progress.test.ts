import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { backoutPost, deployed, session } from '../../../test/helpers/migration-packages.js';
import type { JsonRecord } from '../packages.js';

/**
 * A back-out's progress (docs/migration.md, "Progress"): it moves on chunk by chunk while the back-out's transaction is
 * open, and on PostgreSQL the package row itself carries it, for readers in other processes.
 */

const RECORDS = 2600;

const asset = (index: number): JsonRecord => ({
  assetnum: `BOPRG${String(index).padStart(5, '0')}`,
  siteid: 'BEDFORD',
  description: `Back-out progress ${index}`,
  status: 'OPERATING',
});

describe('the progress of a back-out', () => {
  let target: TestApp;
  let cookie: Record<string, string>;

  before(async () => {
    target = await startTestApp();
    cookie = await session(target);
  });
  after(async () => {
    await target?.close();
  });

  test('moves on between chunks, and on PostgreSQL is written to the package row', async () => {
    const lines = Array.from({ length: RECORDS }, (_, index) => asset(index));
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
    assert.match(String(json(answer).warningmsg), /2,600 records restored/);

    assert.ok(seen.length >= 2, `the progress moved on more than once: ${JSON.stringify(seen)}`);
    assert.ok(seen.every((reading) => reading.status === 'BACKOUT_INPROGRESS'));
    assert.ok(seen.every((reading) => /^Backing out: [\d,]+ of 2,600/.test(reading.progress ?? '')));
    assert.equal(new Set(seen.map((reading) => reading.progress)).size, seen.length);
    if (target.storage.kind === 'postgres')
      assert.deepEqual(
        seen.map((reading) => reading.stored),
        seen.map((reading) => reading.progress),
      );
    const record = await target.services.migration.record('BOPROGRESS', dmpackageid);
    assert.equal(record.status, 'BACKEDOUT');
  });
});
