import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../../test/helpers/app.js';
import type { DynamicDatabase } from '../../db/schema.js';
import { compilePage } from './compile.js';
import { parseOrderBy, parseSelect, parseWhere } from './parse.js';
import { planFilters, planQuery } from './plan.js';

/**
 * Collection queries end to end over HTTP: paging (plain and stable), counts, saved queries and apimeta, search
 * terms, time lines, the page-size limit, response shapes and the parameters that change them. Expected members
 * come from plain SQL on the same database.
 */

type User = 'MAXADMIN' | 'WILSON' | 'SMITH';
type Member = Record<string, unknown>;

describe('collection queries over HTTP', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  const get = (url: string, user: User = 'MAXADMIN', headers: Record<string, string> = {}) =>
    t.app.inject({ url, headers: { ...maxauth(user), ...headers } });

  async function ok(
    url: string,
    user: User = 'MAXADMIN',
    headers: Record<string, string> = {},
  ): Promise<Json> {
    const response = await get(url, user, headers);
    assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
    assert.equal(response.headers['content-type'], 'application/json');
    return json(response);
  }

  function assertError(
    response: LightMyRequestResponse,
    status: number,
    reasonCode: string,
  ): Record<string, unknown> {
    assert.equal(response.statusCode, status, response.body);
    const error = json(response).Error!;
    assert.equal(error.reasonCode, reasonCode, response.body);
    assert.equal(error.statusCode, String(status));
    return error;
  }

  /** The path and query of an absolute href the service wrote, to request it again in-process. */
  const local = (href: string): string => {
    const url = new URL(href);
    return `${url.pathname}${url.search}`;
  };

  const q = (params: Record<string, string>): string => new URLSearchParams(params).toString();

  async function ids(query: RawBuilder<{ id: number }>): Promise<number[]> {
    return (await query.execute(db)).rows.map((row) => Number(row.id));
  }

  const sorted = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);
  const memberIds = (body: Json, attribute = 'assetuid'): number[] =>
    (body.member ?? []).map((member) => Number(member[attribute]));

  async function setProperty(propName: string, propValue: string | null): Promise<void> {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
      headers: maxauth('MAXADMIN'),
      payload: { propName, serverName: 'COMMON', propValue },
    });
    assert.equal(response.statusCode, 200, response.body);
  }

  test('walking nextPage from page 1 visits every matching row once, in order', async () => {
    const expected = await ids(
      sql`select assetuid as id from asset where status = ${'OPERATING'} order by assetnum, assetuid`,
    );
    const pageSize = 17;
    let url: string | undefined =
      `/maximo/api/os/mxapiasset?${q({ 'oslc.select': 'assetuid,assetnum', 'oslc.where': 'status="OPERATING"', 'oslc.orderBy': '+assetnum', 'oslc.pageSize': String(pageSize) })}`;
    const seen: number[] = [];
    let pages = 0;
    while (url !== undefined) {
      const body = await ok(url);
      pages += 1;
      const info = body.responseInfo!;
      assert.equal(info.pagenum, pages);
      if (pages === 1) assert.equal(info.previousPage, undefined, 'no previousPage on page 1');
      else {
        const previous = new URL((info.previousPage as { href: string }).href);
        assert.equal(previous.searchParams.get('pageno'), String(pages - 1), 'previousPage from page 2');
      }
      const members = memberIds(body);
      assert.ok(members.length <= pageSize);
      seen.push(...members);
      const next = info.nextPage as { href: string } | undefined;
      if (next) assert.equal(members.length, pageSize, 'only the last page is short');
      url = next && local(next.href);
    }
    assert.equal(pages, Math.ceil(expected.length / pageSize));
    assert.equal(new Set(seen).size, seen.length, 'no row twice');
    assert.deepEqual(seen, expected);
  });

  test('collectioncount=1 adds totalCount and totalPages; count=1 answers only the count', async () => {
    const [expected] = await ids(sql`select count(*)::integer as id from asset where siteid = ${'NASHUA'}`);
    const where = q({ 'oslc.where': 'siteid="NASHUA"' });
    const page = await ok(`/maximo/api/os/mxapiasset?${where}&oslc.pageSize=7&collectioncount=1`);
    assert.equal(page.responseInfo?.totalCount, expected);
    assert.equal(page.responseInfo?.totalPages, Math.ceil(expected! / 7));
    const plain = await ok(`/maximo/api/os/mxapiasset?${where}&oslc.pageSize=7`);
    assert.equal(plain.responseInfo?.totalCount, undefined);
    assert.equal(plain.responseInfo?.totalPages, undefined);
    assert.deepEqual(await ok(`/maximo/oslc/os/mxapiasset?${where}&count=1`), { totalCount: expected });
  });

  test('distinct=<attr> answers the distinct non-null values of the filtered collection', async () => {
    assert.deepEqual(await ok('/maximo/api/os/mxapiasset?distinct=siteid'), ['BEDFORD', 'NASHUA']);
    const expected = (
      await sql<{
        value: string;
      }>`select distinct status as value from asset where siteid = ${'NASHUA'} order by 1`.execute(db)
    ).rows.map((row) => row.value);
    assert.ok(expected.length > 1);
    assert.deepEqual(
      await ok(`/maximo/api/os/mxapiasset?distinct=status&${q({ 'oslc.where': 'siteid="NASHUA"' })}`),
      expected,
    );
    assertError(await get('/maximo/api/os/mxapiasset?distinct=nosuchattr'), 400, 'EAS0020E');
  });

  test('stablepaging=1 fixes the page set at the first request; later pages read it forwards only', async () => {
    const where = 'status="OPERATING"';
    const atStart = await ids(
      sql`select assetuid as id from asset where status = ${'OPERATING'} order by assetnum desc, assetuid`,
    );
    const first = await ok(
      `/maximo/api/os/mxapiasset?${q({ stablepaging: '1', 'oslc.pageSize': '25', 'oslc.select': 'assetuid,status', 'oslc.where': where, 'oslc.orderBy': '-assetnum', collectioncount: '1' })}`,
    );
    const nextHref = (first.responseInfo?.nextPage as { href: string }).href;
    const stableId = new URL(nextHref).searchParams.get('stableId');
    assert.match(String(stableId), /^[A-Za-z0-9_-]{24}$/);
    assert.equal(first.responseInfo?.previousPage, undefined);

    // The data changes after the first page: one member stops matching, one non-member starts to.
    const leaving = atStart[atStart.length - 3]!;
    const [joining] = await ids(
      sql`select min(assetuid) as id from asset where status = ${'DECOMMISSIONED'}`,
    );
    await sql`update asset set status = ${'DECOMMISSIONED'} where assetuid = ${leaving}`.execute(db);
    await sql`update asset set status = ${'OPERATING'} where assetuid = ${joining!}`.execute(db);
    try {
      const seen = memberIds(first);
      let url: string | undefined = local(nextHref);
      while (url !== undefined) {
        assert.ok(url.includes(`stableId=${stableId}`), 'every nextPage carries the stable id');
        const body = await ok(url);
        assert.equal(body.responseInfo?.previousPage, undefined, 'no backward paging');
        assert.equal(body.responseInfo?.totalCount, atStart.length);
        seen.push(...memberIds(body));
        const next = body.responseInfo?.nextPage as { href: string } | undefined;
        url = next && local(next.href);
      }
      assert.deepEqual(seen, atStart, 'the members of the first request, in its order');
      const live = await ok(
        `/maximo/api/os/mxapiasset?${q({ 'oslc.select': 'assetuid', 'oslc.where': where, 'oslc.pageSize': '1000' })}`,
      );
      assert.ok(
        memberIds(live).includes(joining!) && !memberIds(live).includes(leaving),
        'the live query moved on',
      );

      const beyond = await ok(`/maximo/api/os/mxapiasset?stableId=${stableId}&pageno=99&oslc.pageSize=25`);
      assert.deepEqual(beyond.member, []);
      assert.equal(beyond.responseInfo?.nextPage, undefined);
    } finally {
      await sql`update asset set status = ${'OPERATING'} where assetuid = ${leaving}`.execute(db);
      await sql`update asset set status = ${'DECOMMISSIONED'} where assetuid = ${joining!}`.execute(db);
    }
  });

  test('stable page sets belong to their user and structure, and expire when idle (mxe.oslc.idleexiry)', async () => {
    const start = async (): Promise<string> => {
      const body = await ok(`/maximo/api/os/mxapiasset?stablepaging=1&oslc.pageSize=5&oslc.select=assetnum`);
      return new URL((body.responseInfo?.nextPage as { href: string }).href).searchParams.get('stableId')!;
    };
    const page = (stableId: string, pageno: number, user: User = 'MAXADMIN', os = 'mxapiasset') =>
      get(
        `/maximo/api/os/${os}?stableId=${encodeURIComponent(stableId)}&pageno=${pageno}&oslc.pageSize=5`,
        user,
      );
    const stored = async (stableId: string): Promise<number> => {
      const sets = await ids(
        sql`select count(*)::integer as id from oslc_stable_set where stableid = ${stableId}`,
      );
      const members = await ids(
        sql`select count(*)::integer as id from oslc_stable_member where stableid = ${stableId}`,
      );
      return sets[0]! + members[0]!;
    };

    const older = await start();
    assert.equal((await page(older, 2)).statusCode, 200);
    assert.equal(assertError(await page(older, 2, 'WILSON'), 400, 'EAS0022E').errorattrname, 'stableId');
    assertError(await page(older, 2, 'MAXADMIN', 'mxapiwodetail'), 400, 'EAS0022E');
    assertError(await page('AAAAAAAAAAAAAAAAAAAAAAAA', 2), 400, 'EAS0022E');
    assertError(await page("'; drop table asset; --", 2), 400, 'EAS0022E');

    await setProperty('mxe.oslc.idleexiry', '1');
    try {
      await sleep(1500);
      const newer = await start();
      assert.equal(await stored(older), 0, 'making a set removes the sets that expired');
      assertError(await page(older, 3), 400, 'EAS0022E');
      await setProperty('mxe.oslc.idleexiry', '300');
      assert.equal((await page(newer, 2)).statusCode, 200);
      await setProperty('mxe.oslc.idleexiry', '1');
      await sleep(1500);
      assertError(await page(newer, 3), 400, 'EAS0022E');
      assert.equal(await stored(newer), 0, 'an expired set is removed when it is asked for');
    } finally {
      await setProperty('mxe.oslc.idleexiry', '300');
    }
  });

  test('savedQuery=<name> applies a named where clause, ANDed with oslc.where; savedquery is ignored', async () => {
    const operating = await ids(sql`select assetuid as id from asset where status = ${'OPERATING'}`);
    const saved = await ok(
      '/maximo/api/os/mxapiasset?savedQuery=OPERATING_ASSETS&oslc.select=assetuid&oslc.pageSize=1000',
    );
    assert.deepEqual(sorted(memberIds(saved)), sorted(operating));
    const both = await ok(
      `/maximo/api/os/mxapiasset?savedQuery=OPERATING_ASSETS&${q({ 'oslc.where': 'siteid="NASHUA"' })}&oslc.select=assetuid&oslc.pageSize=1000`,
    );
    assert.deepEqual(
      sorted(memberIds(both)),
      sorted(
        await ids(
          sql`select assetuid as id from asset where status = ${'OPERATING'} and siteid = ${'NASHUA'}`,
        ),
      ),
    );
    const openWork = await ok(
      '/maximo/api/os/mxapiwodetail?savedQuery=OPEN_WORK&oslc.select=workorderid&oslc.pageSize=1000',
    );
    const open = await ids(
      sql`select workorderid as id from workorder where status in ('WAPPR', 'APPR', 'WSCH', 'WMATL', 'INPRG')`,
    );
    assert.ok(open.length > 0);
    assert.deepEqual(sorted(memberIds(openWork, 'workorderid')), sorted(open));
    assert.deepEqual(await ok('/maximo/api/os/mxapiasset?savedquery=OPERATING_ASSETS&count=1'), {
      totalCount: 220,
    });
    const unknown = assertError(
      await get('/maximo/api/os/mxapiasset?savedQuery=operating_assets'),
      400,
      'EAS0023E',
    );
    assert.equal(unknown.errorattrname, 'savedQuery');
  });

  test('GET apimeta/<os> lists the saved queries as queryCapability; each href answers that query', async () => {
    const meta = await ok('/maximo/oslc/apimeta/MXAPIASSET', 'SMITH');
    assert.equal(meta.name, 'MXAPIASSET');
    const capabilities = meta.queryCapability as Array<Record<string, unknown>>;
    const byName = new Map(capabilities.map((capability) => [capability.name, capability]));
    for (const name of ['OPERATING_ASSETS', 'BEDFORD_ASSETS']) {
      const capability = byName.get(name)!;
      assert.equal(capability.ispublic, true);
      assert.equal(typeof capability.title, 'string');
      assert.equal(capability.href, `http://localhost:80/maximo/oslc/os/mxapiasset?savedQuery=${name}`);
    }
    const bedford = await ok(`${local(String(byName.get('BEDFORD_ASSETS')!.href))}&count=1`);
    const [expected] = await ids(sql`select count(*)::integer as id from asset where siteid = ${'BEDFORD'}`);
    assert.deepEqual(bedford, { totalCount: expected });

    const api = await ok('/maximo/api/apimeta/mxwo', 'WILSON');
    const open = (api.queryCapability as Array<Record<string, unknown>>).find(
      (entry) => entry.name === 'OPEN_WORK',
    );
    assert.equal(open?.href, 'http://localhost:80/maximo/api/os/mxwo?savedQuery=OPEN_WORK');
    assertError(await get('/maximo/oslc/apimeta/mxapidomain', 'SMITH'), 400, 'BMXAA9301E');
    assertError(await get('/maximo/oslc/apimeta/nosuchthing'), 404, 'EAS0002E');
  });

  test('every saved query of every object structure parses and plans', () => {
    for (const structure of t.services.metadata.objectStructures()) {
      for (const saved of structure.savedQueries) {
        assert.doesNotThrow(
          () => planQuery(t.services.metadata, structure, { savedQuery: saved.name }),
          saved.name,
        );
      }
    }
  });

  test('oslc.searchTerms: each term, in any case, in any search attribute; ""a phrase"" is one term', async () => {
    const search = async (params: Record<string, string>): Promise<number[]> =>
      sorted(
        memberIds(await ok(`/maximo/api/os/mxapiasset?oslc.select=assetuid&oslc.pageSize=1000&${q(params)}`)),
      );
    const contains = (column: string, text: string) => sql`lower(${sql.ref(column)}) like ${`%${text}%`}`;

    const pump = await search({ 'oslc.searchTerms': 'PUMP' });
    const expectedPump = await ids(
      sql`select assetuid as id from asset where ${contains('assetnum', 'pump')} or ${contains('siteid', 'pump')} or ${contains('description', 'pump')}`,
    );
    assert.ok(expectedPump.length > 0);
    assert.deepEqual(pump, sorted(expectedPump));

    const twoTerms = await search({
      'oslc.searchTerms': 'chiller ""air handling""',
      searchAttributes: 'description',
    });
    const expectedTwo = await ids(
      sql`select assetuid as id from asset where ${contains('description', 'chiller')} or ${contains('description', 'air handling')}`,
    );
    assert.ok(expectedTwo.length > 0);
    assert.deepEqual(twoTerms, sorted(expectedTwo));
    const phrase = await search({ 'oslc.searchTerms': '""air handling""', searchAttributes: 'description' });
    assert.deepEqual(
      phrase,
      sorted(
        await ids(sql`select assetuid as id from asset where ${contains('description', 'air handling')}`),
      ),
    );
    const words = await search({ 'oslc.searchTerms': 'air handling', searchAttributes: 'description' });
    assert.notDeepEqual(words, phrase, 'without the quotes the words are separate terms');
    assert.deepEqual(
      words,
      sorted(
        await ids(
          sql`select assetuid as id from asset where ${contains('description', 'air')} or ${contains('description', 'handling')}`,
        ),
      ),
    );

    const bySite = await search({
      'oslc.searchTerms': 'nash',
      searchAttributes: 'siteid',
      'oslc.where': 'status="OPERATING"',
    });
    assert.deepEqual(
      bySite,
      sorted(
        await ids(
          sql`select assetuid as id from asset where siteid = ${'NASHUA'} and status = ${'OPERATING'}`,
        ),
      ),
    );
    assertError(
      await get('/maximo/api/os/mxapiasset?oslc.searchTerms=x&searchAttributes=priority'),
      400,
      'EAS0004E',
    );
    assertError(
      await get('/maximo/api/os/mxapiasset?oslc.searchTerms=x&searchAttributes=nosuch'),
      400,
      'EAS0020E',
    );
  });

  test('tlrange with tlattribute: a range before, after or around now, or around a given date', async () => {
    const served = async (params: Record<string, string>): Promise<number[]> =>
      sorted(
        memberIds(
          await ok(`/maximo/api/os/mxapiwodetail?oslc.select=workorderid&oslc.pageSize=1000&${q(params)}`),
          'workorderid',
        ),
      );
    const anchored = await served({ tlrange: '-3M', tlattribute: 'reportdate=2025-01-06T00:00:00Z' });
    const expected = await ids(sql`select workorderid as id from workorder
      where reportdate between timestamptz '2024-10-06 00:00:00+00' and timestamptz '2025-01-06 00:00:00+00'`);
    assert.ok(expected.length > 0);
    assert.deepEqual(anchored, sorted(expected));
    assert.deepEqual(
      await served({ tlrange: '+-1M', tlattribute: 'reportdate=2024-09-15T00:00:00+00:00' }),
      sorted(
        await ids(sql`select workorderid as id from workorder
          where reportdate between timestamptz '2024-08-15 00:00:00+00' and timestamptz '2024-10-15 00:00:00+00'`),
      ),
    );

    // Relative to now: two work orders are moved next to the present, one just before and one just after.
    const [before, after] = await ids(
      sql`select workorderid as id from workorder order by workorderid limit 2`,
    );
    const saved = await sql<{
      id: number;
      reportdate: Date;
    }>`select workorderid as id, reportdate from workorder
      where workorderid in (${before!}, ${after!})`.execute(db);
    await sql`update workorder set reportdate = now() - interval '2 days' where workorderid = ${before!}`.execute(
      db,
    );
    await sql`update workorder set reportdate = now() + interval '2 days' where workorderid = ${after!}`.execute(
      db,
    );
    try {
      const window = (from: RawBuilder<unknown>, to: RawBuilder<unknown>) =>
        ids(sql`select workorderid as id from workorder where reportdate between ${from} and ${to}`);
      const lastWeek = await served({ tlrange: '-1W', tlattribute: 'reportdate' });
      assert.ok(lastWeek.includes(before!) && !lastWeek.includes(after!));
      assert.deepEqual(lastWeek, sorted(await window(sql`now() - interval '7 days'`, sql`now()`)));
      const nextWeek = await served({ tlrange: '+7D', tlattribute: 'reportdate' });
      assert.ok(nextWeek.includes(after!) && !nextWeek.includes(before!));
      assert.deepEqual(nextWeek, sorted(await window(sql`now()`, sql`now() + interval '7 days'`)));
      assert.deepEqual(
        sorted([...lastWeek, ...nextWeek]),
        await served({ tlrange: '+-1W', tlattribute: 'reportdate' }),
      );
    } finally {
      for (const row of saved.rows) {
        await sql`update workorder set reportdate = ${row.reportdate} where workorderid = ${row.id}`.execute(
          db,
        );
      }
    }
    assertError(
      await get('/maximo/api/os/mxapiwodetail?tlrange=-3Q&tlattribute=reportdate'),
      400,
      'EAS0004E',
    );
    assertError(await get('/maximo/api/os/mxapiwodetail?tlrange=-3M'), 400, 'EAS0004E');
    assertError(
      await get('/maximo/api/os/mxapiwodetail?tlrange=-3M&tlattribute=wopriority'),
      400,
      'EAS0004E',
    );
    assertError(await get('/maximo/api/os/mxapiwodetail?tlrange=-3M&tlattribute=nosuch'), 400, 'EAS0020E');
  });

  test('a page larger than mxe.oslc.maxpagesize or mxe.oslc.<os>.maxpagesize is refused', async () => {
    const refused = assertError(await get('/maximo/api/os/mxapiasset?oslc.pageSize=1001'), 400, 'EAS0004E');
    assert.equal(refused.errorattrname, 'oslc.pageSize');
    assert.equal(refused.errattrvalue, '1001');
    assert.equal((await get('/maximo/api/os/mxapiasset?oslc.pageSize=1000')).statusCode, 200);
    await setProperty('mxe.oslc.mxapiasset.maxpagesize', '4');
    try {
      assertError(await get('/maximo/api/os/mxapiasset?oslc.pageSize=5'), 400, 'EAS0004E');
      assertError(await get('/maximo/api/os/MXASSET?oslc.pageSize=5&stablepaging=1'), 400, 'EAS0004E');
      assert.equal(json(await get('/maximo/api/os/mxapiasset?oslc.select=assetnum')).member?.length, 4);
      assert.equal(
        (await get('/maximo/api/os/mxapiitem?oslc.pageSize=5')).statusCode,
        200,
        'other structures',
      );
      await setProperty('mxe.oslc.maxpagesize', '3');
      assertError(await get('/maximo/api/os/mxapiitem?oslc.pageSize=4'), 400, 'EAS0004E');
      assert.equal(
        (await get('/maximo/api/os/mxapiasset?oslc.pageSize=4')).statusCode,
        200,
        'own limit first',
      );
    } finally {
      await setProperty('mxe.oslc.mxapiasset.maxpagesize', null);
      await setProperty('mxe.oslc.maxpagesize', '1000');
    }
  });

  test('lean=0 answers the namespaced shape', async () => {
    const body = await ok(
      `/maximo/oslc/os/mxapiasset?${q({ 'oslc.select': 'assetnum,status,location.description', 'oslc.pageSize': '2', pageno: '2', collectioncount: '1', 'oslc.where': 'siteid="BEDFORD"' })}`,
    );
    assert.deepEqual(Object.keys(body.prefixes as object).sort(), ['oslc', 'rdf', 'rdfs', 'spi']);
    assert.equal(body['rdf:about'], 'http://localhost:80/maximo/oslc/os/mxapiasset');
    const info = body['oslc:responseInfo'] as Record<string, unknown>;
    assert.equal(info.pagenum, 2);
    assert.equal(info['oslc:totalCount'], 120);
    assert.equal(info.totalPages, 60);
    assert.match(String((info['oslc:nextPage'] as Record<string, unknown>)['rdf:resource']), /pageno=3/);
    assert.match(String((info['oslc:previousPage'] as Record<string, unknown>)['rdf:resource']), /pageno=1/);
    assert.match(String(info['rdf:about']), /^http:\/\/localhost:80\/maximo\/oslc\/os\/mxapiasset\?/);
    const members = body['rdfs:member'] as Member[];
    assert.equal(members.length, 2);
    for (const member of members) {
      assert.equal(typeof member['spi:assetnum'], 'string');
      assert.equal(typeof member['spi:status'], 'string');
      assert.equal(member.assetnum, undefined, 'attributes carry the spi: prefix');
      assert.equal(typeof member['spi:status_description'], 'string');
      assert.match(String(member._rowstamp), /^\d+$/, '_rowstamp is an unprefixed string of digits');
      assert.equal(member['spi:_rowstamp'], undefined);
      assert.match(String(member['rdf:about']), /^http:\/\/localhost:80\/maximo\/oslc\/os\/mxapiasset\/_/);
      assert.equal(
        typeof (member.location as Member).description,
        'string',
        'related objects are unprefixed',
      );
      assert.equal(member.href, undefined);
    }
    const hrefOnly = (await ok('/maximo/oslc/os/mxapiasset?oslc.pageSize=1'))['rdfs:member'] as Member[];
    assert.deepEqual(Object.keys(hrefOnly[0]!), ['rdf:resource']);
    const lean = await ok('/maximo/oslc/os/mxapiasset?oslc.pageSize=1&lean=1');
    assert.deepEqual(Object.keys(lean.member![0]!), ['href']);
  });

  test('relativeuri=1 and x-public-uri decide where every href points', async () => {
    const relative = await ok(
      '/maximo/oslc/os/mxapiasset?oslc.select=assetnum&oslc.pageSize=2&relativeuri=1&lean=1',
    );
    assert.equal(relative.href, 'oslc/os/mxapiasset');
    assert.match(
      String((relative.responseInfo?.nextPage as { href: string }).href),
      /^oslc\/os\/mxapiasset\?pageno=2&/,
    );
    const member = relative.member![0]!;
    assert.match(String(member.href), /^oslc\/os\/mxapiasset\/_/);
    assert.equal(json(await get(`/maximo/${String(member.href)}?lean=1`)).assetnum, member.assetnum);

    const publicUri = 'https://eam.example.com/maximo/api';
    const viaProxy = await ok(
      '/maximo/oslc/os/mxapiasset?oslc.select=assetnum&oslc.pageSize=2&lean=1',
      'MAXADMIN',
      {
        'x-public-uri': publicUri,
      },
    );
    assert.equal(viaProxy.href, `${publicUri}/os/mxapiasset`);
    assert.ok(String(viaProxy.member![0]!.href).startsWith(`${publicUri}/os/mxapiasset/_`));
    assert.ok(
      String((viaProxy.responseInfo?.nextPage as { href: string }).href).startsWith(
        `${publicUri}/os/mxapiasset?`,
      ),
    );
    assert.ok(String(viaProxy.responseInfo?.href).startsWith(`${publicUri}/os/mxapiasset?`));
  });

  test('_dropnulls=0 keeps null attributes; internalvalues=1 adds <attr>_maxvalue', async () => {
    const where = q({
      'oslc.where': 'parent!="*"',
      'oslc.select': 'assetnum,parent,itemnum',
      'oslc.pageSize': '3',
    });
    for (const member of (await ok(`/maximo/api/os/mxapiasset?${where}`)).member!) {
      assert.equal('parent' in member, false, 'nulls are dropped by default');
    }
    for (const member of (await ok(`/maximo/api/os/mxapiasset?${where}&_dropnulls=0`)).member!) {
      assert.equal(member.parent, null);
      assert.equal(member.itemnum, null);
    }
    const synonyms = await sql<{ value: string; maxvalue: string; description: string }>`
      select value, maxvalue, description from synonymdomain where domainid = ${'LOCASSETSTATUS'}`.execute(
      db,
    );
    const byValue = new Map(synonyms.rows.map((row) => [row.value, row]));
    const select = q({ 'oslc.select': 'status', 'oslc.pageSize': '50' });
    for (const member of (await ok(`/maximo/api/os/mxapiasset?${select}&internalvalues=1`)).member!) {
      const synonym = byValue.get(String(member.status))!;
      assert.equal(member.status_maxvalue, synonym.maxvalue);
      assert.equal(member.status_description, synonym.description);
    }
    for (const member of (await ok(`/maximo/api/os/mxapiasset?${select}`)).member!) {
      assert.equal(member.status_maxvalue, undefined);
    }
  });

  test('<child>.where and <child>.orderBy filter and order a child collection', async () => {
    const body = await ok(
      `/maximo/api/os/mxapidomain?${q({ 'oslc.select': 'domainid,synonymdomain{value,maxvalue}', 'oslc.where': 'domainid="LOCASSETSTATUS"', 'synonymdomain.where': 'maxvalue="OPERATING"', 'synonymdomain.orderBy': '-value' })}`,
    );
    const values = (body.member![0]!.synonymdomain as Member[]).map((row) => row.value);
    const expected = (
      await sql<{ value: string }>`select value from synonymdomain
        where domainid = ${'LOCASSETSTATUS'} and maxvalue = ${'OPERATING'} order by value desc`.execute(db)
    ).rows.map((row) => row.value);
    assert.ok(expected.length > 1);
    assert.deepEqual(values, expected);
    const href = String(body.member![0]!.href);
    assert.equal(body.member![0]!.alndomain_collectionref, `${href}/alndomain`);
    const ignored = await ok(
      '/maximo/api/os/mxapidomain?oslc.select=domainid&oslc.pageSize=1&ignorecollectionref=1',
    );
    assert.equal(
      Object.keys(ignored.member![0]!).some((key) => key.endsWith('_collectionref')),
      false,
    );
  });

  test('dot notation, rel.<relation>{...} and attr--alias in oslc.select', async () => {
    const body = await ok(
      `/maximo/api/os/mxapiasset?${q({ 'oslc.select': 'assetuid,assetnum--num,location--loc,location.description,location.status,rel.openwo{wonum}', 'oslc.pageSize': '40' })}`,
    );
    const rows = await sql<{ id: number; location: string; description: string; status: string }>`
      select a.assetuid as id, a.location, l.description, l.status from asset a
      join locations l on l.location = a.location and l.siteid = a.siteid`.execute(db);
    const locations = new Map(rows.rows.map((row) => [row.id, row]));
    const workOrders = await sql<{ id: number; wonum: string }>`select a.assetuid as id, w.wonum from asset a
      join workorder w on w.assetnum = a.assetnum and w.siteid = a.siteid`.execute(db);
    let withWork = 0;
    for (const member of body.member!) {
      const id = Number(member.assetuid);
      const location = locations.get(id)!;
      assert.equal(member.loc, location.location);
      assert.equal(typeof member.num, 'string');
      assert.equal(member.assetnum, undefined, 'an alias replaces the name');
      assert.deepEqual(member.location, { description: location.description, status: location.status });
      const wonums = ((member.openwo ?? []) as Member[]).map((row) => row.wonum).sort();
      const expected = workOrders.rows
        .filter((row) => row.id === id)
        .map((row) => row.wonum)
        .sort();
      assert.deepEqual(wonums, expected);
      if (expected.length > 0) withWork += 1;
    }
    assert.ok(withWork > 0, 'some assets on the page have work orders');
  });

  test('query strings as clients send them: leading ?&, empty and repeated parameters, lean words, any case', async () => {
    const body = await ok(
      '/maximo/api/os/mxapiasset?&lean=1&&oslc.select=assetnum&oslc.select=status&oslc.pageSize=&pageno=&oslc.where=&x=',
    );
    const [all] = await ids(sql`select count(*)::integer as id from asset`);
    assert.equal(body.member!.length, all, 'an empty page size is no page size');
    assert.equal(typeof body.member![0]!.assetnum, 'string', 'the first oslc.select wins');
    assert.equal(body.member![0]!.status, undefined);
    for (const [lean, namespaced] of [
      ['true', false],
      ['TRUE', false],
      ['1', false],
      ['false', true],
      ['0', true],
    ] as const) {
      const shaped = await ok(`/maximo/oslc/os/MxApiAsset?oslc.pageSize=1&lean=${lean}`);
      assert.equal('rdfs:member' in shaped, namespaced, `lean=${lean}`);
    }
    const anyCase = await ok('/maximo/api/os/MXASSET?oslc.pageSize=1&oslc.select=assetnum');
    assert.match(String(anyCase.member![0]!.href), /\/os\/mxasset\/_/);
  });

  test('status = ? ordered by assetnum reads one page straight off an index', async () => {
    const structure = t.services.metadata.findObjectStructure('MXAPIASSET')!;
    const plan = planQuery(t.services.metadata, structure, {
      where: parseWhere('status="OPERATING"'),
      select: parseSelect('assetnum,status'),
      orderBy: parseOrderBy('+assetnum'),
    });
    const compiled = compilePage(db, structure.root.object, plan.root, planFilters(plan), plan.order, {
      limit: 20,
      offset: 0,
    }).compile();
    await sql`analyze asset`.execute(db);
    const result = await db.executeQuery<{ 'QUERY PLAN': unknown }>(
      CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]),
    );
    const raw = result.rows[0]!['QUERY PLAN'];
    const explained = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: PlanNode }>;
    interface PlanNode {
      'Node Type': string;
      'Index Name'?: string;
      Plans?: PlanNode[];
    }
    const nodes: PlanNode[] = [];
    const walk = (node: PlanNode) => {
      nodes.push(node);
      node.Plans?.forEach(walk);
    };
    walk(explained[0]!.Plan);
    assert.equal(nodes[0]!['Node Type'], 'Limit');
    const scan = nodes.find((node) => node['Node Type'] === 'Index Scan');
    assert.equal(scan?.['Index Name'], 'asset_status_assetnum_uid', JSON.stringify(explained));
    assert.ok(!nodes.some((node) => node['Node Type'].includes('Sort')), 'no sort step');
  });
});
