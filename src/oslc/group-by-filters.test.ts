import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';

/**
 * `gbfilter` and `gbrange` (docs/compatibility.md, "Group-by"): each answer compared with SQL written by hand on
 * the same storage.
 */

const admin = maxauth('MAXADMIN');
const WO = '/maximo/api/os/mxapiwodetail';
type Group = Record<string, unknown> & { collectionref: string };

describe('group-by filters and ranges', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  async function groups(query: Record<string, string>): Promise<Group[]> {
    const answer = await t.app.inject({
      method: 'GET',
      url: `${WO}?${new URLSearchParams(query).toString()}`,
      headers: admin,
    });
    assert.equal(answer.statusCode, 200, answer.body);
    return JSON.parse(answer.body) as Group[];
  }

  async function rows<T>(query: string): Promise<T[]> {
    return (await sql.raw<T>(query).execute(db)).rows;
  }

  async function countOf(collectionref: string): Promise<number> {
    const answer = await t.app.inject({ method: 'GET', url: `${collectionref}&count=1`, headers: admin });
    assert.equal(answer.statusCode, 200, answer.body);
    return Number(json(answer).totalCount);
  }

  test('gbfilter on count: only the groups with more members, as SQL HAVING answers', async () => {
    const expected = await rows<{ status: string; n: number }>(
      `select status, count(*)::int as n from workorder group by status having count(*) > 15 order by status`,
    );
    assert.ok(expected.length > 0);
    for (const gbfilter of ['count>15', 'count.*>15']) {
      const answer = await groups({ gbcols: 'status,count.*', gbfilter });
      assert.deepEqual(
        answer.map((group) => [group.status, group.count]),
        expected.map((row) => [row.status, row.n]),
        gbfilter,
      );
    }
    const all = await groups({ gbcols: 'status,count.*' });
    assert.ok(all.length > expected.length, 'the filter left groups out');
  });

  test('gbfilter with aggregates, a group attribute, and/or, and the request filter', async () => {
    const expected = await rows<{ worktype: string | null; n: number; s: string }>(
      `select worktype, count(*)::int as n, sum(estdur) as s from workorder where siteid = 'BEDFORD'
       group by worktype having (sum(estdur) >= 20 and count(*) >= 3) or worktype = 'EM' order by worktype`,
    );
    const answer = await groups({
      gbcols: 'worktype,count.*,sum.estdur',
      'oslc.where': 'siteid="BEDFORD"',
      gbfilters: '(sum_estdur>=20 and count>=3) or worktype="EM"',
    });
    assert.deepEqual(
      answer.map((group) => [group.worktype ?? null, group.count, Number(group.sum_estdur)]),
      expected.map((row) => [row.worktype, row.n, Number(row.s)]),
    );
    const byAverage = await rows<{ status: string }>(
      `select status from workorder group by status having max(wopriority) = 5 and avg(estdur) < 30 order by status`,
    );
    const filtered = await groups({
      gbcols: 'status,count.*',
      gbfilter: 'max.wopriority=5 and avg.estdur<30',
    });
    assert.deepEqual(
      filtered.map((group) => group.status),
      byAverage.map((row) => row.status),
    );
  });

  test('gbrange on an ALN attribute: the listed values are one group keyed by the list; the rest stay groups', async () => {
    const answer = await groups({ gbcols: 'status,count.*', gbrange: 'status={[APPR:WAPPR],[COMP:CLOSE]}' });
    const expected = await rows<{ bucket: string; n: number }>(
      `select case when status in ('APPR','WAPPR') then 'APPR,WAPPR'
                   when status in ('COMP','CLOSE') then 'COMP,CLOSE' else status end as bucket, count(*)::int as n
       from workorder group by 1 order by 1`,
    );
    const byKey = new Map(
      answer.map((group) => [
        Array.isArray(group.status) ? group.status.join(',') : String(group.status),
        group,
      ]),
    );
    assert.deepEqual([...byKey.keys()].sort(), expected.map((row) => row.bucket).sort());
    for (const row of expected) assert.equal(byKey.get(row.bucket)?.count, row.n, row.bucket);
    assert.deepEqual(byKey.get('APPR,WAPPR')?.status, ['APPR', 'WAPPR']);
    // The collectionref of a range selects its members.
    for (const group of answer)
      assert.equal(await countOf(group.collectionref), group.count, String(group.status));
  });

  test('gbrange on a numeric attribute: intervals with inclusive and exclusive ends, combined with gbfilter', async () => {
    const answer = await groups({
      gbcols: 'wopriority,count.*',
      gbrange: 'wopriority={[1..3],(3..5]}',
    });
    const expected = await rows<{ bucket: string; n: number }>(
      `select case when wopriority >= 1 and wopriority <= 3 then '1,3'
                   when wopriority > 3 and wopriority <= 5 then '3,5' else wopriority::text end as bucket,
              count(*)::int as n
       from workorder group by 1 order by 1`,
    );
    const keyOf = (group: Group) =>
      Array.isArray(group.wopriority) ? group.wopriority.join(',') : String(group.wopriority);
    assert.deepEqual(
      answer.map((group) => [keyOf(group), group.count]).sort(),
      expected.map((row) => [row.bucket ?? 'null', row.n]).sort(),
    );
    assert.deepEqual(answer.find((group) => keyOf(group) === '1,3')?.wopriority, [1, 3]);
    for (const group of answer) assert.equal(await countOf(group.collectionref), group.count, keyOf(group));

    const big = await groups({
      gbcols: 'wopriority,count.*',
      gbrange: 'wopriority={[1..3],(3..5]}',
      gbfilter: 'count>50',
    });
    const bigExpected = expected.filter((row) => row.n > 50);
    assert.deepEqual(
      big.map((group) => [keyOf(group), group.count]).sort(),
      bigExpected.map((row) => [row.bucket ?? 'null', row.n]).sort(),
    );
  });
});
