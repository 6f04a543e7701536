import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { preparedName, runKept } from '../db/prepared-statements.js';
import { dynamicView } from '../db/schema.js';
import { CompiledPages } from './query/index.js';
import { readCollectionParams } from './collection-params.js';

// Plans are kept by the texts of the request; this file grows the metadata, so it has an app of its own.
describe('reuse of query plans', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const planOf = (query: Record<string, string>) => {
    const { metadata, resources } = t.services;
    const params = readCollectionParams(query);
    return resources.plan(metadata.findObjectStructure('MXAPIASSET')!, params.query, params.planKey);
  };

  test('the same texts give the same plan; other texts or another structure give another', () => {
    const query = { 'oslc.where': 'status="OPERATING"', 'oslc.select': 'assetnum,status' };
    const first = planOf(query);
    assert.equal(planOf({ ...query }), first);
    assert.notEqual(planOf({ ...query, 'oslc.orderBy': '-assetnum' }), first);
    assert.notEqual(planOf({ ...query, opmodeor: '1' }), first);
    const { metadata, resources } = t.services;
    const params = readCollectionParams(query);
    assert.notEqual(
      resources.plan(metadata.findObjectStructure('MXAPIOPERLOC')!, params.query, params.planKey),
      first,
    );
  });

  test('a time line is relative to the moment of the request: its plan is never kept', () => {
    const params = readCollectionParams({ tlrange: '-1d', tlattribute: 'changedate' });
    assert.equal(params.planKey, undefined);
  });

  test('parsed clauses are frozen, so a kept plan cannot be changed through them', () => {
    const { query } = readCollectionParams({ 'oslc.where': 'status="OPERATING"' });
    assert.ok(Object.isFrozen(query.where));
  });

  test('an attribute added at run time reaches the next plan of the same texts', () => {
    const query = { 'oslc.select': '*' };
    const before = planOf(query);
    assert.ok(!before.root.attributes.some(({ attribute }) => attribute.name === 'plancachetest'));
    t.services.metadata.addAttribute('ASSET', {
      name: 'plancachetest',
      type: 'ALN',
      title: 'Test',
      length: 10,
    });
    const after = planOf(query);
    assert.notEqual(after, before);
    assert.ok(after.root.attributes.some(({ attribute }) => attribute.name === 'plancachetest'));
  });

  const pageOf = async (query: Record<string, string>) => {
    const { resources } = t.services;
    const plan = planOf(query);
    const page = await resources.page({ plan, window: { limit: 50, offset: 0 }, withCount: false });
    return page.members;
  };

  test('one statement per query shape: requests with other values bind theirs and get their own answers', async () => {
    for (const [assetnum, status] of [
      ['PCT-1', 'OPERATING'],
      ['PCT-2', 'NOT READY'],
      ['PCT-3', 'NOT READY'],
    ] as const) {
      const created = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/os/mxapiasset?lean=1',
        headers: { ...maxauth('MAXADMIN'), 'content-type': 'application/json' },
        payload: { assetnum, siteid: 'BEDFORD', status },
      });
      assert.equal(created.statusCode, 201, created.body);
    }
    const statistics = t.services.resources.pageStatementStatistics;
    const query = (status: string) => ({
      'oslc.where': `assetnum="PCT-%" and status="${status}"`,
      'oslc.select': 'assetnum,status',
      'oslc.orderBy': '+assetnum',
    });
    const misses = statistics.misses;
    const operating = await pageOf(query('OPERATING'));
    assert.equal(statistics.misses, misses + 1);
    const hits = statistics.hits;
    const notReady = await pageOf(query('NOT READY'));
    assert.equal(statistics.hits, hits + 1, 'the second value reuses the statement of the first');
    assert.equal(statistics.misses, misses + 1);
    assert.deepEqual(
      operating.map(({ values }) => [values.assetnum, values.status]),
      [['PCT-1', 'OPERATING']],
    );
    assert.deepEqual(
      notReady.map(({ values }) => [values.assetnum, values.status]),
      [
        ['PCT-2', 'NOT READY'],
        ['PCT-3', 'NOT READY'],
      ],
    );
    // The same shape with the first value again: its answer, not the last one bound.
    assert.deepEqual(
      (await pageOf(query('OPERATING'))).map(({ values }) => values.assetnum),
      ['PCT-1'],
    );
  });

  test('kept statements are dropped when the metadata changes: a new attribute is in the next `*` page', async () => {
    // The attribute the plan test above added to the metadata alone needs its column before `*` reads it.
    await sql`alter table asset add column if not exists plancachetest varchar(10)`.execute(t.storage.db);
    const query = { 'oslc.select': '*', 'oslc.where': 'assetnum="PCT-1"' };
    const [before] = await pageOf(query);
    assert.ok(before && !('plancachecol' in before.values));
    const { compiled } = keptStatement(query);
    assert.ok(preparedName(compiled) !== undefined, 'a kept statement is sent by name on PostgreSQL');
    await sql`alter table asset add column plancachecol varchar(10)`.execute(t.storage.db);
    await sql`update asset set plancachecol = 'seen' where assetnum = 'PCT-1'`.execute(t.storage.db);
    t.services.metadata.addAttribute('ASSET', {
      name: 'plancachecol',
      type: 'ALN',
      title: 'Col',
      length: 10,
    });
    const [after] = await pageOf(query);
    assert.equal(after?.values.plancachecol, 'seen');
    assert.equal(
      preparedName(compiled),
      undefined,
      'names of statements compiled before the change are forgotten',
    );
  });

  test('counts are kept by the shape of their filters: other values bind theirs, the selection does not matter', async () => {
    const statistics = t.services.resources.pageStatementStatistics;
    const query = (status: string, select: string) => ({
      'oslc.where': `assetnum="PCT-%" and status="${status}"`,
      'oslc.select': select,
    });
    const countOf = (status: string, select = 'assetnum') =>
      t.services.resources.count(planOf(query(status, select)));
    const misses = statistics.misses;
    assert.equal(await countOf('NOT READY'), 2);
    assert.equal(statistics.misses, misses + 1, 'the first count of a shape compiles its statement');
    const hits = statistics.hits;
    assert.equal(await countOf('OPERATING'), 1);
    assert.equal(await countOf('NOT READY', 'assetnum,status'), 2);
    assert.equal(statistics.misses, misses + 1, 'other values and another selection: the same statement');
    assert.equal(statistics.hits, hits + 2);
    // A page with its count reads both through kept statements, each with its own values.
    const plan = planOf(query('NOT READY', 'assetnum'));
    const page = await t.services.resources.page({ plan, window: { limit: 1, offset: 0 }, withCount: true });
    assert.equal(page.totalCount, 2);
    assert.deepEqual(
      page.members.map(({ values }) => values.assetnum),
      ['PCT-2'],
    );
    assert.equal(page.hasMore, true);
  });

  test('a kept count binds its values (none in its text) and is prepared by name until the metadata changes', () => {
    const pages = new CompiledPages(dynamicView(t.storage.db));
    const plan = planOf({ 'oslc.where': 'assetnum="PCT-%" and status="OPERATING"' });
    const count = pages.count(plan);
    assert.match(count.sql, /count\(\*\)/);
    assert.ok(!count.sql.includes('OPERATING') && !count.sql.includes('PCT-'), count.sql);
    assert.deepEqual(count.parameters, ['PCT-%', 'OPERATING']);
    const other = pages.count(planOf({ 'oslc.where': 'assetnum="X%" and status="BROKEN"' }));
    assert.equal(other.sql, count.sql, 'one text for both values');
    assert.deepEqual(other.parameters, ['X%', 'BROKEN']);
    assert.ok(preparedName(count.sql) !== undefined);
    pages.clear();
    assert.equal(preparedName(count.sql), undefined, 'names are forgotten with the metadata');
  });

  test('kept statements run on the pool as Kysely would run them, and through Kysely inside a transaction', async () => {
    const pages = new CompiledPages(dynamicView(t.storage.db));
    const plan = planOf({ 'oslc.where': 'assetnum="PCT-%"', 'oslc.select': 'assetnum,status' });
    const page = pages.compiled(plan, { limit: 50, offset: 0 });
    const db = dynamicView(t.storage.db);
    const direct = await runKept<Record<string, unknown>>(db, page);
    const { rows } = await db.executeQuery(page);
    assert.deepEqual(direct, rows);
    assert.equal(direct.length, 3);
    const inTransaction = await db.transaction().execute((transaction) => runKept(transaction, page));
    assert.deepEqual(inTransaction, rows);
    const [counted] = await runKept<{ count: number }>(db, pages.count(plan));
    assert.equal(Number(counted?.count), 3);
  });

  /** The SQL text of the page statement kept for `query` (read by compiling it once more through the reader). */
  function keptStatement(query: Record<string, string>): { compiled: string } {
    const pages = new CompiledPages(dynamicView(t.storage.db));
    return { compiled: pages.compiled(planOf(query), { limit: 50, offset: 0 }).sql };
  }
});
