import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';

/**
 * The object structures automation uses (MASPERUSER, MXAPIWO, MXAPIPERSON, work-order tasks, asset meters and
 * specifications) and the work-order attributes clients filter on, read against the demo data.
 */

const admin = maxauth('MAXADMIN');
type Member = Record<string, unknown>;

describe('object structures', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  async function get(url: string): Promise<Json> {
    const answer = await t.app.inject({ method: 'GET', url, headers: admin });
    assert.equal(answer.statusCode, 200, `${url}: ${answer.body}`);
    return json(answer);
  }
  const members = (body: Json): Member[] => body.member ?? [];
  const q = (text: string) => encodeURIComponent(text);

  test('MASPERUSER: a person found by user.userid, addressable by the last segment of its href', async () => {
    const found = members(
      await get(
        `/maximo/api/os/masperuser?lean=1&oslc.where=${q('user.userid="wilson"')}&oslc.select=personid,displayname`,
      ),
    );
    assert.equal(found.length, 1);
    assert.equal(found[0]!.personid, 'WILSON');
    const id = String(found[0]!.href).split('/').pop()!;
    const person = await get(`/maximo/api/os/masperuser/${id}?lean=1`);
    assert.equal(person.personid, 'WILSON');
    const users = person.maxuser as Member[];
    assert.equal(users[0]!.userid, 'WILSON');
    assert.ok((users[0]!.groupuser as Member[]).some((row) => row.groupname === 'MAINT'));
    const byPerson = members(
      await get(
        `/maximo/api/os/masperuser?lean=1&oslc.where=${q('personid="SMITH"')}&oslc.select=personid,displayname`,
      ),
    );
    assert.deepEqual(Object.keys(byPerson[0]!).sort(), [
      '_rowstamp',
      'displayname',
      'href',
      'maxuser_collectionref',
      'personid',
    ]);
    const none = members(
      await get(`/maximo/api/os/masperuser?lean=1&oslc.where=${q('user.userid="NOBODY"')}`),
    );
    assert.equal(none.length, 0);
  });

  test('MXAPIPERSON serves people', async () => {
    const people = members(
      await get('/maximo/oslc/os/mxapiperson?lean=1&oslc.select=personid,firstname,lastname'),
    );
    const stored = await db.selectFrom('person').select('personid').execute();
    assert.equal(people.length, stored.length);
    assert.ok(people.some((person) => person.personid === 'SMITH' && typeof person.lastname === 'string'));
  });

  test('MXAPIWO beside MXAPIWODETAIL; tasks as the woactivity child; the new attributes filter', async () => {
    const total = await sql<{ n: number }>`select count(*)::integer as n from workorder`.execute(db);
    const count = await get('/maximo/api/os/mxapiwo?count=1');
    assert.equal(count.totalCount, total.rows[0]!.n);

    const tasks = members(
      await get(
        `/maximo/api/os/mxapiwo?oslc.where=${q('istask=1 and woclass="ACTIVITY"')}&oslc.select=wonum,parent,taskid`,
      ),
    );
    assert.equal(tasks.length, 28);
    const parentWonum = String(tasks[0]!.parent);
    assert.match(String(tasks[0]!.wonum), new RegExp(`^${parentWonum}-\\d0$`));
    const parents = members(
      await get(
        `/maximo/api/os/mxapiwodetail?oslc.where=${q(`wonum="${parentWonum}"`)}&oslc.select=wonum,woclass,istask,historyflag,woactivity{wonum,taskid,istask}`,
      ),
    );
    assert.equal(parents.length, 1);
    assert.equal(parents[0]!.woclass, 'WORKORDER');
    assert.equal(parents[0]!.istask, false);
    assert.equal(parents[0]!.historyflag, false);
    const activity = parents[0]!.woactivity as Member[];
    assert.deepEqual(
      activity.map((task) => task.taskid),
      [10, 20],
    );
    assert.ok(activity.every((task) => task.istask === true));

    // Planning dates and the long description are attributes like any other: written, read, filtered, sorted.
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/api/os/mxapiwo',
      headers: { ...admin, properties: '*' },
      payload: {
        siteid: 'BEDFORD',
        description: 'Planned shutdown',
        description_longdescription: 'Drain the tank.\nReplace both seals.',
        schedstart: '2025-06-01T06:00:00+00:00',
        schedfinish: '2025-06-01T18:00:00+00:00',
        targstartdate: '2025-05-30T00:00:00+00:00',
        targcompdate: '2025-06-02T00:00:00+00:00',
        actstart: '2025-06-01T06:30:00+00:00',
        historyflag: false,
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const body = json(created);
    assert.equal(body.description_longdescription, 'Drain the tank.\nReplace both seals.');
    assert.equal(body.schedstart, '2025-06-01T06:00:00+00:00');
    // A task added by MERGE is a task too.
    const merged = await t.app.inject({
      method: 'POST',
      url: String(created.headers.location),
      headers: {
        ...admin,
        'x-method-override': 'PATCH',
        patchtype: 'MERGE',
        properties: 'woactivity{istask,woclass,parent}',
      },
      payload: { woactivity: [{ description: 'Drain' }] },
    });
    assert.equal(merged.statusCode, 200, merged.body);
    assert.deepEqual(
      (json(merged).woactivity as Member[]).map((task) => [task.istask, task.woclass, task.parent]),
      [[true, 'ACTIVITY', body.wonum]],
    );
    const filtered = members(
      await get(
        `/maximo/api/os/mxapiwo?oslc.where=${q('schedstart>="2025-06-01T00:00:00Z" and actstart="*" and actfinish!="*"')}&oslc.select=wonum&oslc.orderBy=-schedfinish`,
      ),
    );
    assert.deepEqual(
      filtered.map((row) => row.wonum),
      [body.wonum],
    );
  });

  test('MXAPIASSET: meters and specifications as child collections', async () => {
    const expected = await db
      .selectFrom('assetmeter')
      .select(['assetnum', 'siteid', 'lastreading'])
      .orderBy('assetmeterid')
      .executeTakeFirstOrThrow();
    const assets = members(
      await get(
        `/maximo/api/os/mxapiasset?oslc.where=${q(`assetnum="${String(expected.assetnum)}" and siteid="${String(expected.siteid)}"`)}&oslc.select=assetnum,assetmeter{metername,lastreading},assetspec{assetattrid,numvalue,alnvalue}`,
      ),
    );
    assert.equal(assets.length, 1);
    assert.deepEqual(assets[0]!.assetmeter, [
      {
        metername: 'RUNHOURS',
        lastreading: expected.lastreading,
        href: (assets[0]!.assetmeter as Member[])[0]!.href,
        localref: (assets[0]!.assetmeter as Member[])[0]!.localref,
        _rowstamp: (assets[0]!.assetmeter as Member[])[0]!._rowstamp,
      },
    ]);
    const specs = assets[0]!.assetspec as Member[];
    assert.deepEqual(specs.map((spec) => spec.assetattrid).sort(), ['ENCLOSURE', 'RATEDPOWER']);

    // Added with the asset, and gone with it.
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/api/os/mxapiasset',
      headers: {
        ...admin,
        properties: 'assetnum,assetmeter{metername,linearassetid},assetspec{assetattrid,numvalue}',
      },
      payload: {
        siteid: 'NASHUA',
        description: 'Metered pump',
        assetmeter: [{ metername: 'runhours', lastreading: '12' }],
        assetspec: [{ assetattrid: 'RATEDPOWER', numvalue: 7.5 }],
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const asset = json(created);
    assert.equal((asset.assetmeter as Member[])[0]!.metername, 'RUNHOURS');
    assert.equal((asset.assetmeter as Member[])[0]!.linearassetid, 0);
    assert.equal((asset.assetspec as Member[])[0]!.numvalue, 7.5);
    const removed = await t.app.inject({
      method: 'DELETE',
      url: String(created.headers.location),
      headers: admin,
    });
    assert.equal(removed.statusCode, 204, removed.body);
    const left = await db
      .selectFrom('assetmeter')
      .select('assetnum')
      .where('assetnum', '=', String(asset.assetnum))
      .execute();
    assert.equal(left.length, 0);
  });

  test('an oslc.select name the structure lacks is passed over; in oslc.where it is refused', async () => {
    const selected = members(
      await get('/maximo/api/os/mxapiwo?oslc.select=wonum,nosuchattr&oslc.pageSize=1'),
    );
    assert.deepEqual(Object.keys(selected[0]!).sort(), [
      '_rowstamp',
      'href',
      'woactivity_collectionref',
      'wonum',
      'worklog_collectionref',
    ]);
    const refused = await t.app.inject({
      method: 'GET',
      url: `/maximo/api/os/mxapiwo?oslc.where=${q('nosuchattr=1')}`,
      headers: admin,
    });
    assert.equal(refused.statusCode, 400);
    assert.equal(json(refused).Error?.errorattrname, 'nosuchattr');
  });
});
