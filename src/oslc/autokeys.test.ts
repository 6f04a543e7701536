import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';

/** Autokeys (the `autokey` table) and the defaults a create fills. */

const admin = maxauth('MAXADMIN');

describe('autokeys and create defaults', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  async function create(os: string, body: Record<string, unknown>, select: string) {
    const answer = await t.app.inject({
      method: 'POST',
      url: `/maximo/api/os/${os}`,
      headers: { ...admin, properties: select },
      payload: body,
    });
    return { status: answer.statusCode, body: json(answer) };
  }

  test('a work order created without wonum is numbered, skipping numbers the site has taken by hand', async () => {
    const taken = new Set(
      (await db.selectFrom('workorder').select('wonum').where('siteid', '=', 'BEDFORD').execute()).map(
        (row) => String(row.wonum),
      ),
    );
    const before = Date.now() - 1000;
    const first = await create(
      'mxapiwodetail',
      { siteid: 'BEDFORD', description: 'Numbered' },
      'wonum,status,statusdate,reportdate,changeby,changedate,woclass,istask,historyflag',
    );
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const wonum = String(first.body.wonum);
    assert.match(wonum, /^\d+$/);
    assert.ok(!taken.has(wonum), `${wonum} was free`);
    assert.equal(first.body.status, 'WAPPR');
    assert.equal(first.body.changeby, 'MAXADMIN');
    assert.equal(first.body.woclass, 'WORKORDER');
    assert.equal(first.body.istask, false);
    assert.equal(first.body.historyflag, false);
    for (const name of ['statusdate', 'reportdate', 'changedate']) {
      assert.ok(Date.parse(String(first.body[name])) >= before - 1000, `${name} is the create's moment`);
    }
    const second = await create('mxapiwodetail', { siteid: 'BEDFORD' }, 'wonum');
    const next = Number(second.body.wonum);
    assert.ok(next > Number(wonum) && !taken.has(String(next)), `${next} follows ${wonum}`);
    for (let skipped = Number(wonum) + 1; skipped < next; skipped += 1) assert.ok(taken.has(String(skipped)));

    // A number sent by the client is used as sent; a reportdate sent is kept.
    const manual = await create(
      'mxapiwodetail',
      { wonum: 'HAND1', siteid: 'BEDFORD', reportdate: '2024-01-02T03:04:05+00:00' },
      'wonum,reportdate',
    );
    assert.equal(manual.body.wonum, 'HAND1');
    assert.equal(manual.body.reportdate, '2024-01-02T03:04:05+00:00');
  });

  test('rows per organization and site win over the system row; a failed create gives its number back', async () => {
    await sql`insert into autokey (autokeyname, orgid, siteid, prefix, seed) values ('WORKORDERNUM', 'EAGLENA', 'NASHUA', 'NA-', 7)`.execute(
      db,
    );
    await sql`insert into autokey (autokeyname, orgid, prefix, seed) values ('ASSETNUM', 'EAGLENA', 'EA', 500)`.execute(
      db,
    );
    const nashua = await create('mxapiwo', { siteid: 'NASHUA' }, 'wonum');
    assert.equal(nashua.body.wonum, 'NA-7');
    const refused = await create('mxapiwo', { siteid: 'NASHUA', status: 'NOSUCH' }, 'wonum');
    assert.equal(refused.status, 400);
    const again = await create('mxapiwo', { siteid: 'NASHUA' }, 'wonum');
    assert.equal(again.body.wonum, 'NA-8', 'the rolled-back create did not use up a number');

    const asset = await create(
      'mxapiasset',
      { siteid: 'BEDFORD', description: 'Numbered asset' },
      'assetnum',
    );
    assert.equal(asset.status, 201, JSON.stringify(asset.body));
    assert.equal(asset.body.assetnum, 'EA500');
  });

  test('location is numbered only where an autokey row is configured', async () => {
    const unnumbered = await create('mxapioperloc', { siteid: 'BEDFORD', description: 'Room' }, 'location');
    assert.equal(unnumbered.status, 400);
    assert.equal(unnumbered.body.Error?.reasonCode, 'BMXAA4195E');
    assert.equal(unnumbered.body.Error?.errorattrname, 'location');
    await sql`insert into autokey (autokeyname, prefix, seed) values ('LOCATIONNUM', 'LOC', 1)`.execute(db);
    const numbered = await create('mxapioperloc', { siteid: 'BEDFORD', description: 'Room' }, 'location');
    assert.equal(numbered.status, 201, JSON.stringify(numbered.body));
    assert.equal(numbered.body.location, 'LOC1');
  });

  test('concurrent creates in one process get distinct numbers', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => create('mxapiwodetail', { siteid: 'BEDFORD' }, 'wonum')),
    );
    assert.ok(answers.every((answer) => answer.status === 201));
    assert.equal(new Set(answers.map((answer) => answer.body.wonum)).size, 20);
  });

  test('tasks created under a work order are numbered and marked as tasks', async () => {
    const parent = await create(
      'mxapiwodetail',
      {
        siteid: 'BEDFORD',
        description: 'With tasks',
        woactivity: [
          { description: 'A', taskid: 10 },
          { description: 'B', taskid: 20 },
        ],
      },
      'wonum,woactivity{wonum,parent,istask,woclass,taskid}',
    );
    assert.equal(parent.status, 201, JSON.stringify(parent.body));
    const tasks = parent.body.woactivity as Array<Record<string, unknown>>;
    assert.equal(tasks.length, 2);
    for (const task of tasks) {
      assert.equal(task.parent, parent.body.wonum);
      assert.equal(task.istask, true);
      assert.equal(task.woclass, 'ACTIVITY');
      assert.match(String(task.wonum), /^\d+$/);
    }
    assert.deepEqual(tasks.map((task) => task.taskid).sort(), [10, 20]);
  });
});
