import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import type { DynamicDatabase } from '../../db/schema.js';
import type { ObjectStructure } from '../../metadata/registry.js';
import type { Position, WhereClause, WhereLiteral, WhereTerm } from './ast.js';
import { compileCount, compilePage, compileStableMembers, compileStablePage } from './compile.js';
import { parseOrderBy, parseSelect, parseWhere } from './parse.js';
import { planFilters, planQuery, type QueryRequest } from './plan.js';
import { parseSearchTerms } from './search.js';
import { parseTimeline } from './timeline.js';

/**
 * Golden cases of the query engine, one per operator and literal form of the operator table (README.md, "Operator table"): the text of
 * `oslc.where` → its syntax tree → the SQL the compile stage writes, with its parameters → the members the
 * service answers over HTTP for the demo data. The expected members come from a plain SQL query written for
 * each case (joins where the engine uses subqueries), never from the engine.
 */

const at = (column: number, line = 1): Position => ({ line, column });
const path = (segments: string[], column: number) => ({ segments, position: at(column) });
const str = (value: string, column: number): WhereLiteral => ({
  kind: 'string',
  value,
  position: at(column),
});
const num = (text: string, column: number): WhereLiteral => ({
  kind: 'number',
  value: Number(text),
  text,
  position: at(column),
});
const bool = (value: boolean, column: number): WhereLiteral => ({
  kind: 'boolean',
  value,
  position: at(column),
});
const cmp = (
  where: ReturnType<typeof path>,
  operator: '=' | '!=' | '>' | '>=' | '<' | '<=',
  value: WhereLiteral,
): WhereTerm => ({ kind: 'comparison', path: where, operator, value });
const inList = (where: ReturnType<typeof path>, values: WhereLiteral[]): WhereTerm => ({
  kind: 'in',
  path: where,
  values,
});
const clause = (...terms: WhereTerm[]): WhereClause => ({ terms });

type Ids = RawBuilder<{ id: number }>;

interface GoldenCase {
  name: string;
  structure: 'MXAPIASSET' | 'MXAPIWODETAIL';
  where: string;
  anyTerm?: boolean;
  ast: WhereClause;
  sql: string;
  parameters: readonly unknown[];
  /** The members' unique ids by a plain SQL query of its own. */
  expected: Ids;
  /** The case matches every row (so "not every row" is not checked). */
  everyRow?: true;
}

const COUNT = 'select count(*)::integer as "count" from "asset" as "t0" where ';
const WO_COUNT = 'select count(*)::integer as "count" from "workorder" as "t0" where ';
const assets = (condition: RawBuilder<unknown>): Ids =>
  sql<{ id: number }>`select assetuid as id from asset where ${condition}`;
const workOrders = (condition: RawBuilder<unknown>): Ids =>
  sql<{ id: number }>`select workorderid as id from workorder where ${condition}`;

const cases: readonly GoldenCase[] = [
  {
    name: '= on text',
    structure: 'MXAPIASSET',
    where: 'status="OPERATING"',
    ast: clause(cmp(path(['status'], 1), '=', str('OPERATING', 8))),
    sql: `${COUNT}"t0"."status" = $1`,
    parameters: ['OPERATING'],
    expected: assets(sql`status = ${'OPERATING'}`),
  },
  {
    name: '!= on text',
    structure: 'MXAPIASSET',
    where: 'status!="OPERATING"',
    ast: clause(cmp(path(['status'], 1), '!=', str('OPERATING', 9))),
    sql: `${COUNT}"t0"."status" <> $1`,
    parameters: ['OPERATING'],
    expected: assets(sql`status <> ${'OPERATING'}`),
  },
  {
    name: '> on a decimal with an integer literal',
    structure: 'MXAPIASSET',
    where: 'purchaseprice>50000',
    ast: clause(cmp(path(['purchaseprice'], 1), '>', num('50000', 15))),
    sql: `${COUNT}"t0"."purchaseprice" > $1`,
    parameters: [50000],
    expected: assets(sql`purchaseprice > 50000`),
  },
  {
    name: '>= with a decimal literal',
    structure: 'MXAPIASSET',
    where: 'purchaseprice>=48907.41',
    ast: clause(cmp(path(['purchaseprice'], 1), '>=', num('48907.41', 16))),
    sql: `${COUNT}"t0"."purchaseprice" >= $1`,
    parameters: [48907.41],
    expected: assets(sql`purchaseprice >= 48907.41`),
  },
  {
    name: '< on an integer',
    structure: 'MXAPIASSET',
    where: 'priority<3',
    ast: clause(cmp(path(['priority'], 1), '<', num('3', 10))),
    sql: `${COUNT}"t0"."priority" < $1`,
    parameters: [3],
    expected: assets(sql`priority < 3`),
  },
  {
    name: '<= on an integer',
    structure: 'MXAPIASSET',
    where: 'priority<=2',
    ast: clause(cmp(path(['priority'], 1), '<=', num('2', 11))),
    sql: `${COUNT}"t0"."priority" <= $1`,
    parameters: [2],
    expected: assets(sql`priority <= 2`),
  },
  {
    name: '!= on an integer',
    structure: 'MXAPIASSET',
    where: 'priority!=3',
    ast: clause(cmp(path(['priority'], 1), '!=', num('3', 11))),
    sql: `${COUNT}"t0"."priority" <> $1`,
    parameters: [3],
    expected: assets(sql`priority <> 3`),
  },
  {
    name: 'a negative number',
    structure: 'MXAPIASSET',
    where: 'purchaseprice>-1',
    ast: clause(cmp(path(['purchaseprice'], 1), '>', num('-1', 15))),
    sql: `${COUNT}"t0"."purchaseprice" > $1`,
    parameters: [-1],
    expected: assets(sql`purchaseprice > -1`),
    everyRow: true,
  },
  {
    name: 'in with numbers',
    structure: 'MXAPIASSET',
    where: 'priority in [1,2]',
    ast: clause(inList(path(['priority'], 1), [num('1', 14), num('2', 16)])),
    sql: `${COUNT}"t0"."priority" in ($1, $2)`,
    parameters: [1, 2],
    expected: assets(sql`priority in (1, 2)`),
  },
  {
    name: 'in with strings',
    structure: 'MXAPIASSET',
    where: 'status in ["OPERATING","NOT READY"]',
    ast: clause(inList(path(['status'], 1), [str('OPERATING', 12), str('NOT READY', 24)])),
    sql: `${COUNT}"t0"."status" in ($1, $2)`,
    parameters: ['OPERATING', 'NOT READY'],
    expected: assets(sql`status in (${'OPERATING'}, ${'NOT READY'})`),
  },
  {
    name: 'not in: != "[A,B]"',
    structure: 'MXAPIASSET',
    where: 'location!="[BR300-BLR,BR300-CHL]"',
    ast: clause(cmp(path(['location'], 1), '!=', str('[BR300-BLR,BR300-CHL]', 11))),
    sql: `${COUNT}"t0"."location" not in ($1, $2)`,
    parameters: ['BR300-BLR', 'BR300-CHL'],
    expected: assets(sql`location not in (${'BR300-BLR'}, ${'BR300-CHL'})`),
  },
  {
    name: 'contains "%x%" on ALN is case-insensitive',
    structure: 'MXAPIASSET',
    where: 'description="%pump%"',
    ast: clause(cmp(path(['description'], 1), '=', str('%pump%', 13))),
    sql: `${COUNT}"t0"."description" ilike $1`,
    parameters: ['%pump%'],
    expected: assets(sql`lower(description) like ${'%pump%'}`),
  },
  {
    name: 'starts with "x%"',
    structure: 'MXAPIASSET',
    where: 'description="Air%"',
    ast: clause(cmp(path(['description'], 1), '=', str('Air%', 13))),
    sql: `${COUNT}"t0"."description" ilike $1`,
    parameters: ['Air%'],
    expected: assets(sql`lower(description) like ${'air%'}`),
  },
  {
    name: 'ends with "%x"',
    structure: 'MXAPIASSET',
    where: 'description="%Unit"',
    ast: clause(cmp(path(['description'], 1), '=', str('%Unit', 13))),
    sql: `${COUNT}"t0"."description" ilike $1`,
    parameters: ['%Unit'],
    expected: assets(sql`lower(description) like ${'%unit'}`),
  },
  {
    name: 'like on UPPER upper-cases the pattern',
    structure: 'MXAPIASSET',
    where: 'manufacturer="car%"',
    ast: clause(cmp(path(['manufacturer'], 1), '=', str('car%', 14))),
    sql: `${COUNT}"t0"."manufacturer" like $1`,
    parameters: ['CAR%'],
    expected: assets(sql`manufacturer like ${'CAR%'}`),
  },
  {
    name: 'not like: != "%x%"',
    structure: 'MXAPIASSET',
    where: 'manufacturer!="%ON%"',
    ast: clause(cmp(path(['manufacturer'], 1), '!=', str('%ON%', 15))),
    sql: `${COUNT}"t0"."manufacturer" not like $1`,
    parameters: ['%ON%'],
    expected: assets(sql`manufacturer not like ${'%ON%'}`),
  },
  {
    name: '= on UPPER upper-cases the value',
    structure: 'MXAPIASSET',
    where: 'assettype="it"',
    ast: clause(cmp(path(['assettype'], 1), '=', str('it', 11))),
    sql: `${COUNT}"t0"."assettype" = $1`,
    parameters: ['IT'],
    expected: assets(sql`assettype = ${'IT'}`),
  },
  {
    name: 'a number literal on a text attribute',
    structure: 'MXAPIASSET',
    where: 'assetnum=11430',
    ast: clause(cmp(path(['assetnum'], 1), '=', num('11430', 10))),
    sql: `${COUNT}"t0"."assetnum" = $1`,
    parameters: ['11430'],
    expected: assets(sql`assetnum = ${'11430'}`),
  },
  {
    name: '="*" is not null',
    structure: 'MXAPIASSET',
    where: 'parent="*"',
    ast: clause(cmp(path(['parent'], 1), '=', str('*', 8))),
    sql: `${COUNT}"t0"."parent" is not null`,
    parameters: [],
    expected: assets(sql`parent is not null`),
  },
  {
    name: '!="*" is null',
    structure: 'MXAPIASSET',
    where: 'parent!="*"',
    ast: clause(cmp(path(['parent'], 1), '!=', str('*', 9))),
    sql: `${COUNT}"t0"."parent" is null`,
    parameters: [],
    expected: assets(sql`parent is null`),
  },
  {
    name: 'ISO date with a negative offset',
    structure: 'MXAPIASSET',
    where: 'installdate>="2020-01-01T00:00:00-05:00"',
    ast: clause(cmp(path(['installdate'], 1), '>=', str('2020-01-01T00:00:00-05:00', 14))),
    sql: `${COUNT}"t0"."installdate" >= $1`,
    parameters: [new Date('2020-01-01T05:00:00Z')],
    expected: assets(sql`installdate >= timestamptz '2020-01-01 05:00:00+00'`),
  },
  {
    name: 'ISO date with a positive offset',
    structure: 'MXAPIASSET',
    where: 'installdate<"2015-06-30T12:00:00+02:00"',
    ast: clause(cmp(path(['installdate'], 1), '<', str('2015-06-30T12:00:00+02:00', 13))),
    sql: `${COUNT}"t0"."installdate" < $1`,
    parameters: [new Date('2015-06-30T10:00:00Z')],
    expected: assets(sql`installdate < timestamptz '2015-06-30 10:00:00+00'`),
  },
  {
    name: 'boolean false',
    structure: 'MXAPIASSET',
    where: 'isrunning=false',
    ast: clause(cmp(path(['isrunning'], 1), '=', bool(false, 11))),
    sql: `${COUNT}"t0"."isrunning" = $1`,
    parameters: [false],
    expected: assets(sql`not isrunning`),
  },
  {
    name: 'boolean true',
    structure: 'MXAPIASSET',
    where: 'isrunning=true',
    ast: clause(cmp(path(['isrunning'], 1), '=', bool(true, 11))),
    sql: `${COUNT}"t0"."isrunning" = $1`,
    parameters: [true],
    expected: assets(sql`isrunning`),
  },
  {
    name: 'boolean as 1',
    structure: 'MXAPIASSET',
    where: 'isrunning=1',
    ast: clause(cmp(path(['isrunning'], 1), '=', num('1', 11))),
    sql: `${COUNT}"t0"."isrunning" = $1`,
    parameters: [true],
    expected: assets(sql`isrunning`),
  },
  {
    name: 'boolean as 0',
    structure: 'MXAPIASSET',
    where: 'isrunning=0',
    ast: clause(cmp(path(['isrunning'], 1), '=', num('0', 11))),
    sql: `${COUNT}"t0"."isrunning" = $1`,
    parameters: [false],
    expected: assets(sql`not isrunning`),
  },
  {
    name: 'dot notation through one relation',
    structure: 'MXAPIASSET',
    where: 'location.status="NOT READY"',
    ast: clause(cmp(path(['location', 'status'], 1), '=', str('NOT READY', 17))),
    sql:
      `${COUNT}(select "t0_r1"."status" as "value" from "locations" as "t0_r1" ` +
      `where "t0_r1"."location" = "t0"."location" and "t0_r1"."siteid" = "t0"."siteid" limit $1) = $2`,
    parameters: [1, 'NOT READY'],
    expected: sql<{ id: number }>`select a.assetuid as id from asset a
      join locations l on l.location = a.location and l.siteid = a.siteid where l.status = ${'NOT READY'}`,
  },
  {
    name: 'dot notation through two relations',
    structure: 'MXAPIASSET',
    where: 'parentasset.location.status="NOT READY"',
    ast: clause(cmp(path(['parentasset', 'location', 'status'], 1), '=', str('NOT READY', 29))),
    sql:
      `${COUNT}(select "t0_r2"."status" as "value" from "asset" as "t0_r1" ` +
      `inner join "locations" as "t0_r2" on "t0_r2"."location" = "t0_r1"."location" and "t0_r2"."siteid" = "t0_r1"."siteid" ` +
      `where "t0_r1"."assetnum" = "t0"."parent" and "t0_r1"."siteid" = "t0"."siteid" limit $1) = $2`,
    parameters: [1, 'NOT READY'],
    expected: sql<{ id: number }>`select a.assetuid as id from asset a
      join asset p on p.assetnum = a.parent and p.siteid = a.siteid
      join locations l on l.location = p.location and l.siteid = p.siteid where l.status = ${'NOT READY'}`,
  },
  {
    name: 'dot notation with a contains pattern',
    structure: 'MXAPIASSET',
    where: 'site.description="%Nashua%"',
    ast: clause(cmp(path(['site', 'description'], 1), '=', str('%Nashua%', 18))),
    sql:
      `${COUNT}(select "t0_r1"."description" as "value" from "site" as "t0_r1" ` +
      `where "t0_r1"."siteid" = "t0"."siteid" limit $1) ilike $2`,
    parameters: [1, '%Nashua%'],
    expected: sql<{ id: number }>`select a.assetuid as id from asset a
      join site s on s.siteid = a.siteid where lower(s.description) like ${'%nashua%'}`,
  },
  {
    name: 'and of three terms',
    structure: 'MXAPIASSET',
    where: 'status="OPERATING" and siteid="BEDFORD" and priority>=3',
    ast: clause(
      cmp(path(['status'], 1), '=', str('OPERATING', 8)),
      cmp(path(['siteid'], 24), '=', str('BEDFORD', 31)),
      cmp(path(['priority'], 45), '>=', num('3', 55)),
    ),
    sql: `${COUNT}("t0"."status" = $1 and "t0"."siteid" = $2 and "t0"."priority" >= $3)`,
    parameters: ['OPERATING', 'BEDFORD', 3],
    expected: assets(sql`status = ${'OPERATING'} and siteid = ${'BEDFORD'} and priority >= 3`),
  },
  {
    name: 'opmodeor=1 ORs the and-joined terms',
    structure: 'MXAPIASSET',
    where: 'siteid="NASHUA" and status="DECOMMISSIONED"',
    anyTerm: true,
    ast: clause(
      cmp(path(['siteid'], 1), '=', str('NASHUA', 8)),
      cmp(path(['status'], 21), '=', str('DECOMMISSIONED', 28)),
    ),
    sql: `${COUNT}("t0"."siteid" = $1 or "t0"."status" = $2)`,
    parameters: ['NASHUA', 'DECOMMISSIONED'],
    expected: assets(sql`siteid = ${'NASHUA'} or status = ${'DECOMMISSIONED'}`),
  },
  {
    name: 'work orders: a UTC date and an in list',
    structure: 'MXAPIWODETAIL',
    where: 'reportdate>="2024-12-01T00:00:00Z" and status in ["WAPPR","APPR"]',
    ast: clause(
      cmp(path(['reportdate'], 1), '>=', str('2024-12-01T00:00:00Z', 13)),
      inList(path(['status'], 40), [str('WAPPR', 51), str('APPR', 59)]),
    ),
    sql: `${WO_COUNT}("t0"."reportdate" >= $1 and "t0"."status" in ($2, $3))`,
    parameters: [new Date('2024-12-01T00:00:00Z'), 'WAPPR', 'APPR'],
    expected: workOrders(
      sql`reportdate >= timestamptz '2024-12-01 00:00:00+00' and status in (${'WAPPR'}, ${'APPR'})`,
    ),
  },
  {
    name: 'work orders: a decimal duration',
    structure: 'MXAPIWODETAIL',
    where: 'estdur>2.5',
    ast: clause(cmp(path(['estdur'], 1), '>', num('2.5', 8))),
    sql: `${WO_COUNT}"t0"."estdur" > $1`,
    parameters: [2.5],
    expected: workOrders(sql`estdur > 2.5`),
  },
];

const UNIQUE_ID = { MXAPIASSET: 'assetuid', MXAPIWODETAIL: 'workorderid' } as const;

describe('query engine golden cases', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;
  const structure = (name: string): ObjectStructure => t.services.metadata.findObjectStructure(name)!;
  const rowCount = async (table: string): Promise<number> =>
    Number(
      (await sql<{ n: number }>`select count(*)::integer as n from ${sql.table(table)}`.execute(db)).rows[0]!
        .n,
    );

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  /** The unique ids of every member the service answers for a where clause (one page holds them all). */
  async function served(kase: GoldenCase): Promise<number[]> {
    const uniqueId = UNIQUE_ID[kase.structure];
    const query = new URLSearchParams({
      lean: '1',
      'oslc.select': uniqueId,
      'oslc.pageSize': '1000',
      'oslc.where': kase.where,
      ...(kase.anyTerm && { opmodeor: '1' }),
    });
    const response = await t.app.inject({
      url: `/maximo/oslc/os/${kase.structure.toLowerCase()}?${query.toString()}`,
      headers: maxauth('MAXADMIN'),
    });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.equal(body.responseInfo?.nextPage, undefined, 'one page holds every member');
    return (body.member ?? []).map((member) => Number(member[uniqueId])).sort((a, b) => a - b);
  }

  for (const kase of cases) {
    test(`${kase.name}: ${kase.where}`, async () => {
      const ast = parseWhere(kase.where);
      assert.deepEqual(ast, kase.ast, 'syntax tree');

      const request: QueryRequest = { where: ast, anyTerm: kase.anyTerm ?? false };
      const plan = planQuery(t.services.metadata, structure(kase.structure), request);
      const compiled = compileCount(db, plan.structure.root.object, planFilters(plan)).compile();
      assert.equal(compiled.sql, kase.sql, 'SQL text');
      assert.deepEqual(compiled.parameters, kase.parameters, 'bound parameters');

      const expected = (await kase.expected.execute(db)).rows
        .map((row) => Number(row.id))
        .sort((a, b) => a - b);
      assert.ok(expected.length > 0, 'the case finds something in the demo data');
      if (!kase.everyRow) {
        const table = plan.structure.root.object.table;
        assert.ok(expected.length < (await rowCount(table)), 'the case does not find every row');
      }
      assert.deepEqual(await served(kase), expected, 'members');
    });
  }

  test('or is not part of the language: 400 BMXAA8744E with line and column', async () => {
    for (const [where, position] of [
      ['status="OPERATING" or siteid="BEDFORD"', 'at line 1, column 20'],
      ['status="OPERATING"\nor siteid="BEDFORD"', 'at line 2, column 1'],
    ] as const) {
      const response = await t.app.inject({
        url: `/maximo/api/os/mxapiasset?oslc.where=${encodeURIComponent(where)}`,
        headers: maxauth('MAXADMIN'),
      });
      assert.equal(response.statusCode, 400);
      const error = json(response).Error!;
      assert.equal(error.reasonCode, 'BMXAA8744E');
      assert.equal(error.statusCode, '400');
      assert.match(String(error.message), /Encountered " <IDENTIFIER> "or ""/);
      assert.ok(String(error.message).includes(position), String(error.message));
      assert.match(String(error.message), /Was expecting: <BOOLEAN_OP>/);
    }
  });

  test('a page: selected attributes, a dot-notation value, order, limit + 1 and offset', () => {
    const plan = planQuery(t.services.metadata, structure('MXAPIASSET'), {
      where: parseWhere('status="OPERATING"'),
      select: parseSelect('assetnum,location.description'),
      orderBy: parseOrderBy('-priority,+assetnum'),
    });
    const compiled = compilePage(db, plan.structure.root.object, plan.root, planFilters(plan), plan.order, {
      limit: 10,
      offset: 20,
    }).compile();
    assert.equal(
      compiled.sql,
      'select "t0"."assetnum" as "assetnum", "t0"."siteid" as "siteid", "t0"."assetuid" as "assetuid", ' +
        '"t0"."rowstamp" as "rowstamp", (select "t0_r1"."description" as "value" from "locations" as "t0_r1" ' +
        'where "t0_r1"."location" = "t0"."location" and "t0_r1"."siteid" = "t0"."siteid" limit $1) as "__related0" ' +
        'from "asset" as "t0" where "t0"."status" = $2 ' +
        'order by "t0"."priority" desc, "t0"."assetnum" asc, "t0"."assetuid" asc limit $3 offset $4',
    );
    assert.deepEqual(compiled.parameters, [1, 'OPERATING', 11, 20]);
  });

  test('stable paging: the member set is numbered in page order, pages are read by position', () => {
    const plan = planQuery(t.services.metadata, structure('MXAPIASSET'), {
      where: parseWhere('siteid="NASHUA"'),
      select: parseSelect('assetnum'),
      orderBy: parseOrderBy('-assetnum'),
    });
    const object = plan.structure.root.object;
    const stableId = 'AAAAAAAAAAAAAAAAAAAAAAAA';
    const members = compileStableMembers(db, object, planFilters(plan), plan.order, stableId).compile();
    assert.equal(
      members.sql,
      'insert into "oslc_stable_member" ("stableid", "position", "uniqueid") select cast($1 as varchar) as "stableid", ' +
        'row_number() over (order by "t0"."assetnum" desc, "t0"."assetuid" asc) as "position", ' +
        '"t0"."assetuid" as "uniqueid" from "asset" as "t0" where "t0"."siteid" = $2',
    );
    assert.deepEqual(members.parameters, [stableId, 'NASHUA']);
    const page = compileStablePage(db, object, plan.root, stableId, { limit: 5, offset: 10 }).compile();
    assert.equal(
      page.sql,
      'select "t0"."assetnum" as "assetnum", "t0"."siteid" as "siteid", "t0"."assetuid" as "assetuid", ' +
        '"t0"."rowstamp" as "rowstamp" from "asset" as "t0" inner join "oslc_stable_member" as "s" ' +
        'on "s"."uniqueid" = "t0"."assetuid" where "s"."stableid" = $1 and "s"."position" > $2 ' +
        'and "s"."position" <= $3 order by "s"."position" asc',
    );
    assert.deepEqual(page.parameters, [stableId, 10, 15]);
  });

  test('search terms: every (term, attribute) pair ORed, wildcards in a term taken literally', async () => {
    const terms = parseSearchTerms('pump ""Air Handling"" 50%_off');
    assert.deepEqual(terms, ['pump', 'Air Handling', '50%_off']);
    const plan = planQuery(t.services.metadata, structure('MXAPIASSET'), {
      search: { terms: ['pump', 'Air Handling'] },
    });
    const compiled = compileCount(db, plan.structure.root.object, planFilters(plan)).compile();
    assert.equal(
      compiled.sql,
      `${COUNT}("t0"."assetnum" ilike $1 or "t0"."siteid" ilike $2 or "t0"."description" ilike $3 ` +
        `or "t0"."assetnum" ilike $4 or "t0"."siteid" ilike $5 or "t0"."description" ilike $6)`,
    );
    assert.deepEqual(compiled.parameters, [
      '%pump%',
      '%pump%',
      '%pump%',
      '%Air Handling%',
      '%Air Handling%',
      '%Air Handling%',
    ]);
    const literal = planQuery(t.services.metadata, structure('MXAPIASSET'), {
      search: { terms: ['50%_off\\'], attributes: ['description'] },
    });
    const escaped = compileCount(db, literal.structure.root.object, planFilters(literal)).compile();
    assert.equal(escaped.sql, `${COUNT}"t0"."description" ilike $1`);
    assert.deepEqual(escaped.parameters, ['%50\\%\\_off\\\\%']);
    // Executed, the escaped pattern finds nothing (no description holds that text) instead of everything.
    const { rows } = await db.executeQuery<{ count: number }>(escaped);
    assert.equal(Number(rows[0]!.count), 0);
  });

  test('saved query, where clause and time line are ANDed, each a group of its own', () => {
    const plan = planQuery(
      t.services.metadata,
      structure('MXAPIWODETAIL'),
      {
        where: parseWhere('siteid="BEDFORD"'),
        savedQuery: 'OPEN_WORK',
        timeline: parseTimeline('-3M', 'reportdate=2025-01-06T00:00:00Z'),
      },
      new Date('2030-01-01T00:00:00Z'),
    );
    const compiled = compileCount(db, plan.structure.root.object, planFilters(plan)).compile();
    assert.equal(
      compiled.sql,
      `${WO_COUNT}"t0"."siteid" = $1 and "t0"."status" in ($2, $3, $4, $5, $6) ` +
        `and ("t0"."reportdate" >= $7 and "t0"."reportdate" <= $8)`,
    );
    assert.deepEqual(compiled.parameters, [
      'BEDFORD',
      'WAPPR',
      'APPR',
      'WSCH',
      'WMATL',
      'INPRG',
      new Date('2024-10-06T00:00:00Z'),
      new Date('2025-01-06T00:00:00Z'),
    ]);
  });

  test('time line ranges: -, + and +- around now, calendar months clamped to the month end', () => {
    const now = new Date('2025-03-31T12:00:00Z');
    const bounds = (range: string, attribute = 'reportdate') => {
      const plan = planQuery(
        t.services.metadata,
        structure('MXAPIWODETAIL'),
        { timeline: parseTimeline(range, attribute) },
        now,
      );
      return compileCount(db, plan.structure.root.object, planFilters(plan))
        .compile()
        .parameters.map((value) => (value as Date).toISOString());
    };
    assert.deepEqual(bounds('-1M'), ['2025-02-28T12:00:00.000Z', '2025-03-31T12:00:00.000Z']);
    assert.deepEqual(bounds('+3M'), ['2025-03-31T12:00:00.000Z', '2025-06-30T12:00:00.000Z']);
    assert.deepEqual(bounds('+-1Y'), ['2024-03-31T12:00:00.000Z', '2026-03-31T12:00:00.000Z']);
    assert.deepEqual(bounds(' 2W'), ['2025-03-31T12:00:00.000Z', '2025-04-14T12:00:00.000Z'], 'a decoded +');
    assert.deepEqual(bounds('-10D'), ['2025-03-21T12:00:00.000Z', '2025-03-31T12:00:00.000Z']);
    assert.deepEqual(bounds('-1d', 'reportdate=2024-02-29T00:00:00 05:00'), [
      '2024-02-27T19:00:00.000Z',
      '2024-02-28T19:00:00.000Z',
    ]);
  });
});
