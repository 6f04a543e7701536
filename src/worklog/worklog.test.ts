import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';

/**
 * Work logs (`worklog`) of work orders and service requests (docs/compatibility.md, "Work logs"), in the shapes the
 * clients send: `POST <record href>/worklog`, a `worklog` array in a create body and in a MERGE, read back through
 * `oslc.select=worklog{...}` and the child address; who and when set by the service, the type from LOGTYPE, rights
 * as the parent's.
 */

const admin = maxauth('MAXADMIN');
const wilson = maxauth('WILSON');
const smith = maxauth('SMITH');
const WO = '/maximo/oslc/os/mxapiwodetail';
const SR = '/maximo/oslc/os/mxapisr';

const pathOf = (href: string): string => {
  const url = new URL(href);
  return `${url.pathname}${url.search}`;
};

describe('work logs', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  const send = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: unknown,
    headers: Record<string, string> = admin,
  ) => t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Json }) });

  async function created(url: string, body: Record<string, unknown>, headers = admin): Promise<string> {
    const response = await send('POST', url, body, headers);
    assert.equal(response.statusCode, 201, response.body);
    return pathOf(String(response.headers.location));
  }

  const worklogs = async (recordkey: string, recordClass: string) =>
    db
      .selectFrom('worklog')
      .selectAll()
      .where('recordkey', '=', recordkey)
      .where('class', '=', recordClass)
      .orderBy('worklogid')
      .execute();

  test('a work order created with a work log, one more through the child collection, read by select and address', async () => {
    const wo = await created(`${WO}?lean=1`, {
      siteid: 'BEDFORD',
      description: 'Pump seal leaking',
      worklog: [
        {
          description: 'Found a puddle',
          description_longdescription: 'About a litre under the pump.',
          logtype: 'WORK',
        },
      ],
    });
    const child = await created(
      `${wo}/worklog?lean=1`,
      {
        description: 'Client called again',
        // Sent values for what the service sets are passed over.
        createby: 'SOMEONE',
        clientviewable: true,
      },
      wilson,
    );

    const read = await send(
      'GET',
      `${wo}?lean=1&oslc.select=wonum,worklog{description,description_longdescription,logtype,createby,createdate,clientviewable,recordkey,class,siteid,orgid}`,
    );
    assert.equal(read.statusCode, 200, read.body);
    const body = json(read);
    const logs = body.worklog as Array<Record<string, unknown>>;
    assert.equal(logs.length, 2);
    const [first, second] = logs.sort((a, b) => String(a.description).localeCompare(String(b.description)));
    assert.equal(first!.description, 'Client called again');
    assert.equal(first!.logtype, 'CLIENTNOTE', 'the default type');
    assert.equal(first!.createby, 'WILSON');
    assert.equal(first!.clientviewable, true);
    assert.equal(second!.description, 'Found a puddle');
    assert.equal(second!.description_longdescription, 'About a litre under the pump.');
    assert.equal(second!.logtype, 'WORK');
    assert.equal(second!.createby, 'MAXADMIN');
    for (const log of logs) {
      assert.equal(log.recordkey, body.wonum);
      assert.equal(log.class, 'WORKORDER');
      assert.equal(log.siteid, 'BEDFORD');
      assert.equal(log.orgid, 'EAGLENA');
      assert.ok(Math.abs(Date.parse(String(log.createdate)) - Date.now()) < 60_000, String(log.createdate));
    }

    const one = await send('GET', `${child}?lean=1`);
    assert.equal(one.statusCode, 200, one.body);
    assert.equal(json(one).description, 'Client called again');
    const list = await send('GET', `${wo}/worklog?lean=1&oslc.select=description,createby`);
    assert.equal(list.statusCode, 200, list.body);
    assert.equal(json(list).member?.length, 2);
  });

  test('a MERGE that adds a work log keeps the others; modifyby set on a change; a bad type refused', async () => {
    const wo = await created(`${WO}?lean=1`, {
      siteid: 'BEDFORD',
      description: 'Belt slipping',
      worklog: [{ description: 'First look', logtype: 'WORK' }],
    });
    const merge = { 'x-method-override': 'PATCH', patchtype: 'MERGE' };
    const merged = await send(
      'POST',
      `${wo}?lean=1`,
      {
        worklog: [
          { description: 'Belt ordered', logtype: 'UPDATE', description_longdescription: 'Arrives Friday.' },
        ],
      },
      { ...wilson, ...merge },
    );
    assert.equal(merged.statusCode, 204, merged.body);
    const wonum = String(json(await send('GET', `${wo}?lean=1&oslc.select=wonum`)).wonum);
    let rows = await worklogs(wonum, 'WORKORDER');
    assert.deepEqual(
      rows.map((row) => [row.description, row.logtype, row.createby]),
      [
        ['First look', 'WORK', 'MAXADMIN'],
        ['Belt ordered', 'UPDATE', 'WILSON'],
      ],
    );

    const changed = await send(
      'POST',
      `${wo}?lean=1`,
      { worklog: [{ worklogid: rows[0]!.worklogid, description: 'First look (belt worn)' }] },
      { ...wilson, ...merge },
    );
    assert.equal(changed.statusCode, 204, changed.body);
    rows = await worklogs(wonum, 'WORKORDER');
    assert.equal(rows.length, 2);
    assert.equal(rows[0]!.description, 'First look (belt worn)');
    assert.equal(rows[0]!.createby, 'MAXADMIN');
    assert.equal(rows[0]!.modifyby, 'WILSON');

    const refused = await send('POST', `${wo}/worklog?lean=1`, { description: 'x', logtype: 'GOSSIP' });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(json(refused).Error?.reasonCode, 'BMXAA4190E');
    assert.equal((await worklogs(wonum, 'WORKORDER')).length, 2);
  });

  test('service requests: a work log by MERGE and by the child collection; removed with the request', async () => {
    const sr = await created(`${SR}?lean=1`, { siteid: 'BEDFORD', description: 'Office too hot' });
    const merged = await send(
      'POST',
      `${sr}?lean=1`,
      { worklog: [{ description: 'Still too hot', logtype: 'CLIENTNOTE', clientviewable: true }] },
      { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
    );
    assert.equal(merged.statusCode, 204, merged.body);
    await created(`${sr}/worklog?lean=1`, { description: 'Thermostat reset', logtype: 'WORK' });
    const read = json(await send('GET', `${sr}?lean=1&oslc.select=ticketid,worklog{description,class}`));
    assert.deepEqual(
      (read.worklog as Array<Record<string, unknown>>).map((log) => [log.description, log.class]).sort(),
      [
        ['Still too hot', 'SR'],
        ['Thermostat reset', 'SR'],
      ],
    );
    const ticketid = String(read.ticketid);
    assert.equal((await worklogs(ticketid, 'SR')).length, 2);
    const deleted = await send('DELETE', sr);
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal((await worklogs(ticketid, 'SR')).length, 0);
  });

  test("rights are the parent's: a reader of work orders reads their logs and cannot add one", async () => {
    const wo = await created(`${WO}?lean=1`, {
      siteid: 'BEDFORD',
      description: 'Door sticks',
      worklog: [{ description: 'Hinge dry' }],
    });
    const read = await send('GET', `${wo}?lean=1&oslc.select=worklog{description}`, undefined, smith);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal((json(read).worklog as unknown[]).length, 1);
    const refused = await send('POST', `${wo}/worklog?lean=1`, { description: 'Oiled' }, smith);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(json(refused).Error?.reasonCode, 'BMXAA9301E');
  });
});
