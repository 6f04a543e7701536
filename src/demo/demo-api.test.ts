import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';

/**
 * The demo data as a work-order MCP server and a service-desk client read it through the API (README, "Demo
 * data"): schedules and target dates on both sites, date filters, paging, hierarchies walked by `parent`, and
 * service requests.
 */

const wilson = maxauth('WILSON');

describe('demo data through the API', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  async function collection(path: string, query: Record<string, string>): Promise<Json> {
    const response = await t.app.inject({
      url: `/maximo/oslc/os/${path}?${new URLSearchParams({ lean: '1', ...query }).toString()}`,
      headers: wilson,
    });
    assert.equal(response.statusCode, 200, response.body);
    return json(response);
  }

  const count = async (query: string): Promise<number> =>
    Number((await sql.raw<{ n: number }>(query).execute(db)).rows[0]!.n);

  test('work orders of both sites have schedstart, schedfinish and targstartdate; a date filter finds them', async () => {
    const from = '2024-11-01T00:00:00+00:00';
    const to = '2025-01-01T00:00:00+00:00';
    const where = `schedstart>="${from}" and schedstart<"${to}" and istask=0`;
    const answer = await collection('mxapiwodetail', {
      'oslc.where': where,
      'oslc.select': 'wonum,siteid,schedstart,schedfinish,targstartdate,historyflag',
      'oslc.pageSize': '1000',
    });
    const members = answer.member ?? [];
    const expected = await count(
      `select count(*)::int as n from workorder where schedstart >= '${from}' and schedstart < '${to}' and not istask`,
    );
    assert.ok(expected > 0);
    assert.equal(members.length, expected);
    assert.deepEqual([...new Set(members.map((member) => member.siteid))].sort(), ['BEDFORD', 'NASHUA']);
    for (const member of members) {
      const start = Date.parse(String(member.schedstart));
      assert.ok(start >= Date.parse(from) && start < Date.parse(to), String(member.schedstart));
      assert.ok(Date.parse(String(member.schedfinish)) > start);
      assert.ok(member.targstartdate);
    }
    const history = await collection('mxapiwodetail', {
      'oslc.where': 'historyflag=1',
      'oslc.select': 'wonum,status',
      'oslc.pageSize': '1000',
    });
    assert.ok((history.member ?? []).length > 0);
    assert.ok((history.member ?? []).every((member) => ['CLOSE', 'CAN'].includes(String(member.status))));
  });

  test('paging walks every work order of a site once', async () => {
    const total = await count(`select count(*)::int as n from workorder where siteid = 'NASHUA'`);
    const seen: string[] = [];
    for (let page = 1; page <= 20; page++) {
      const answer = await collection('mxapiwodetail', {
        'oslc.where': 'siteid="NASHUA"',
        'oslc.select': 'wonum',
        'oslc.orderBy': '+wonum',
        'oslc.pageSize': '25',
        pageno: String(page),
        collectioncount: '1',
      });
      const info = answer.responseInfo as { totalCount: number; totalPages: number };
      assert.equal(info.totalCount, total);
      seen.push(...(answer.member ?? []).map((member) => String(member.wonum)));
      if (page >= info.totalPages) break;
    }
    assert.equal(seen.length, total);
    assert.equal(new Set(seen).size, total);
  });

  test('hierarchies: a project, its child work orders by parent, their tasks; tasks on both sites', async () => {
    const projects = await collection('mxapiwodetail', {
      'oslc.where': 'worktype="CP" and parent!="*" and status="INPRG"',
      'oslc.select': 'wonum,siteid,description',
    });
    const bySite = new Map(
      (projects.member ?? []).map((member) => [String(member.siteid), String(member.wonum)]),
    );
    assert.deepEqual([...bySite.keys()].sort(), ['BEDFORD', 'NASHUA']);
    for (const [siteid, wonum] of bySite) {
      const children = await collection('mxapiwodetail', {
        'oslc.where': `parent="${wonum}" and siteid="${siteid}" and istask=0`,
        'oslc.select': 'wonum,parent,schedstart',
      });
      assert.equal(children.member?.length, 3, `children of ${wonum}`);
      for (const child of children.member ?? []) {
        const tasks = await collection('mxapiwodetail', {
          'oslc.where': `parent="${String(child.wonum)}" and siteid="${siteid}" and istask=1`,
          'oslc.select': 'wonum,taskid,woclass',
        });
        assert.deepEqual(
          (tasks.member ?? []).map((task) => [task.taskid, task.woclass]),
          [
            [10, 'ACTIVITY'],
            [20, 'ACTIVITY'],
          ],
        );
      }
    }
    const tasks = await collection('mxapiwodetail', {
      'oslc.where': 'istask=1',
      'oslc.select': 'siteid',
      'oslc.pageSize': '1000',
    });
    assert.deepEqual([...new Set((tasks.member ?? []).map((task) => task.siteid))].sort(), [
      'BEDFORD',
      'NASHUA',
    ]);
  });

  test('service requests of both sites: filter by status and report date, page', async () => {
    const all = await collection('mxapisr', {
      'oslc.select': 'ticketid,siteid,status,reportedby,affectedperson,reportdate',
      'oslc.pageSize': '1000',
    });
    const members = all.member ?? [];
    assert.equal(members.length, 30);
    assert.deepEqual([...new Set(members.map((member) => member.siteid))].sort(), ['BEDFORD', 'NASHUA']);
    const open = await collection('mxapisr', {
      savedQuery: 'OPEN_SR',
      'oslc.select': 'status',
      'oslc.pageSize': '1000',
    });
    const expectedOpen = await count(
      `select count(*)::int as n from ticket where status in ('NEW','QUEUED','INPROG')`,
    );
    assert.equal(open.member?.length, expectedOpen);
    const since = '2024-12-01T00:00:00+00:00';
    const recent = await collection('mxapisr', {
      'oslc.where': `reportdate>="${since}"`,
      'oslc.select': 'ticketid',
      'oslc.pageSize': '1000',
    });
    assert.equal(
      recent.member?.length,
      await count(`select count(*)::int as n from ticket where reportdate >= '${since}'`),
    );
    const page = await collection('mxapisr', {
      'oslc.select': 'ticketid',
      'oslc.pageSize': '10',
      pageno: '3',
    });
    assert.equal(page.member?.length, 10);
  });
});
