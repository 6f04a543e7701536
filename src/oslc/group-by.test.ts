import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';
import {
  compileGroupBy,
  parseGroupBy,
  parseOrderBy,
  parseWhere,
  planFilters,
  planQuery,
} from './query/index.js';

/** Group-by (`gbcols`, `gbsortby`): grouped SQL through the same plan and compile stages as every query. */

const admin = maxauth('MAXADMIN');
type Group = Record<string, unknown> & { collectionref: string };

describe('group-by', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  async function groups(url: string): Promise<Group[]> {
    const answer = await t.app.inject({ method: 'GET', url, headers: admin });
    assert.equal(answer.statusCode, 200, answer.body);
    const body = JSON.parse(answer.body) as unknown;
    assert.ok(Array.isArray(body), 'a bare JSON array');
    return body as Group[];
  }

  async function countOf(collectionref: string): Promise<number> {
    const answer = await t.app.inject({ method: 'GET', url: `${collectionref}&count=1`, headers: admin });
    assert.equal(answer.statusCode, 200, answer.body);
    return Number(json(answer).totalCount);
  }

  test('each group count equals a count=1 query of its collectionref', async () => {
    const byStatus = await groups('/maximo/api/os/mxapiwodetail?gbcols=status,count.*');
    assert.ok(byStatus.length > 1);
    let total = 0;
    for (const group of byStatus) {
      assert.deepEqual(Object.keys(group).sort(), ['collectionref', 'count', 'status']);
      assert.equal(typeof group.count, 'number');
      assert.equal(await countOf(group.collectionref), group.count, String(group.status));
      total += Number(group.count);
    }
    const all = await t.app.inject({
      method: 'GET',
      url: '/maximo/api/os/mxapiwodetail?count=1',
      headers: admin,
    });
    assert.equal(total, json(all).totalCount);
    assert.deepEqual(
      byStatus.map((group) => group.status),
      [...byStatus.map((group) => group.status)].sort(),
      'without gbsortby, groups are in the order of their values',
    );

    // Two group attributes under a where clause (null values are a group of their own).
    const where = encodeURIComponent('siteid="BEDFORD"');
    const nested = await groups(
      `/maximo/oslc/os/mxapiasset?oslc.where=${where}&gbcols=status,assettype,count.*&gbsortby=-count`,
    );
    assert.ok(nested.length > 1);
    for (const group of nested) {
      assert.equal(await countOf(group.collectionref), group.count, JSON.stringify(group));
    }
    const counts = nested.map((group) => Number(group.count));
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => b - a),
      'gbsortby=-count',
    );
    const stored = await sql<{
      n: number;
    }>`select count(*)::integer as n from asset where siteid = 'BEDFORD'`.execute(db);
    assert.equal(
      counts.reduce((sum, count) => sum + count, 0),
      stored.rows[0]!.n,
    );
  });

  test('sum, avg, min and max agree with SQL; gbsortby on an aggregate', async () => {
    const rows = await groups(
      '/maximo/api/os/mxapiwodetail?gbcols=worktype,sum.estdur,avg.estdur,max.wopriority,min.wopriority,count.*&gbsortby=%2Bsum_estdur',
    );
    const expected = await sql<Record<string, unknown>>`
      select worktype, sum(estdur) as s, avg(estdur) as a, max(wopriority) as mx, min(wopriority) as mn, count(*)::integer as c
      from workorder group by worktype`.execute(db);
    assert.equal(rows.length, expected.rows.length);
    for (const row of rows) {
      const match = expected.rows.find(
        (candidate) => (candidate.worktype ?? null) === (row.worktype ?? null),
      )!;
      assert.ok(match, String(row.worktype));
      assert.equal(row.count, match.c);
      assert.ok(Math.abs(Number(row.sum_estdur) - Number(match.s)) < 1e-9);
      assert.ok(Math.abs(Number(row.avg_estdur) - Number(match.a)) < 1e-9);
      assert.equal(row.max_wopriority, match.mx === null ? null : Number(match.mx));
      assert.equal(row.min_wopriority, match.mn === null ? null : Number(match.mn));
    }
    const sums = rows.map((row) => Number(row.sum_estdur ?? Infinity));
    assert.deepEqual(
      sums,
      [...sums].sort((a, b) => a - b),
    );
  });

  test('values reach the grouped SQL as bound parameters', () => {
    const structure = t.services.metadata.findObjectStructure('MXAPIASSET')!;
    const plan = planQuery(t.services.metadata, structure, {
      where: parseWhere('description="x\\" or 1=1" and priority>2'),
      groupBy: parseGroupBy('status,count.*'),
      groupSort: parseOrderBy('-count'),
    });
    const compiled = compileGroupBy(db, structure.root.object, plan.groupBy!, planFilters(plan)).compile();
    assert.match(compiled.sql, /group by/);
    assert.doesNotMatch(compiled.sql, /or 1=1|'/);
    assert.deepEqual(compiled.parameters, ['x" or 1=1', 2]);
  });

  test('bad group-by parameters are 400 error objects naming the parameter', async () => {
    const cases: Array<[string, string, string | undefined]> = [
      ['gbcols=count.*', 'EAS0004E', 'gbcols'],
      ['gbcols=nosuch,count.*', 'EAS0020E', 'nosuch'],
      ['gbcols=status,sum.description', 'EAS0004E', 'gbcols'],
      ['gbcols=status,count.*&gbsortby=-total', 'EAS0004E', 'gbsortby'],
      ['gbcols=status,count.*&gbrelprop=asset.description', 'EAS0112E', 'gbrelprop'],
      ['gbcols=status,count.*&gbfilter=count%3E', 'EAS0004E', 'gbfilter'],
      ['gbcols=status,count.*&gbfilter=sum.description%3E1', 'EAS0004E', 'gbfilter'],
      ['gbcols=status,count.*&gbfilter=worktype%3D%22PM%22', 'EAS0004E', 'gbfilter'],
      ['gbcols=status,count.*&gbrange=worktype%3D%7B%5BPM%5D%7D', 'EAS0004E', 'gbrange'],
      ['gbcols=status,count.*&gbrange=status%3D%7B%5B1..3%5D%7D', 'EAS0004E', 'gbrange'],
      ['gbcols=status,,count.*', 'BMXAA8744E', undefined],
      ['gbcols=status,sum.*', 'BMXAA8744E', undefined],
    ];
    for (const [query, code, attribute] of cases) {
      const answer = await t.app.inject({
        method: 'GET',
        url: `/maximo/api/os/mxapiwodetail?${query}`,
        headers: admin,
      });
      assert.equal(answer.statusCode, 400, `${query}: ${answer.body}`);
      assert.equal(json(answer).Error?.reasonCode, code, query);
      if (attribute !== undefined) assert.equal(json(answer).Error?.errorattrname, attribute, query);
    }
  });
});
