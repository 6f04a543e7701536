import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { openTestStorage } from '../../test/helpers/storage.js';
import { assetAssetId } from '../db/migrations/0027-asset-assetid.js';

/**
 * The smaller mismatches public clients met (docs/compatibility.md), each in the shape the client sends: `assetid`
 * selected and filtered (a Postman collection, a GIS workflow library), whoami's `loginID`/`userName`/`langcode`
 * (a typed client), a child collection the structure lacks under an existing asset (`doclinks`), the PATCH verb,
 * and the OpenAPI schema of an alias (an MCP server's `get_schema_details` reads `RESOURCE_<name>.properties`).
 */

const admin = maxauth('MAXADMIN');
const wilson = maxauth('WILSON');

describe('client shapes', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const get = (url: string, headers: Record<string, string> = admin) =>
    t.app.inject({ method: 'GET', url, headers });

  test('assetid: selected on every asset, distinct, filterable, numbered on create', async () => {
    const page = await get(
      '/maximo/api/os/mxapiasset?lean=1&oslc.select=assetnum,siteid,assetid&oslc.pageSize=1000',
    );
    assert.equal(page.statusCode, 200, page.body);
    const members = json(page).member ?? [];
    assert.ok(members.length > 10, 'the demo assets');
    const ids = members.map((member) => member.assetid);
    assert.ok(
      ids.every((id) => typeof id === 'number' && Number.isInteger(id)),
      JSON.stringify(ids),
    );
    assert.equal(new Set(ids).size, ids.length);

    const one = members[3]!;
    const filtered = await get(
      `/maximo/api/os/mxapiasset?lean=1&oslc.select=assetnum,siteid&oslc.where=${encodeURIComponent(`assetid=${String(one.assetid)}`)}`,
    );
    assert.equal(filtered.statusCode, 200, filtered.body);
    assert.deepEqual(
      (json(filtered).member ?? []).map((member) => [member.assetnum, member.siteid]),
      [[one.assetnum, one.siteid]],
    );

    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/api/os/mxapiasset?lean=1',
      headers: { ...admin, properties: 'assetnum,assetid' },
      // A sent assetid is passed over: the database numbers it.
      payload: { assetnum: 'ASSETID1', siteid: 'BEDFORD', assetid: 5 },
    });
    assert.equal(created.statusCode, 201, created.body);
    const assetid = json(created).assetid;
    assert.ok(typeof assetid === 'number' && assetid > Math.max(...(ids as number[])), String(assetid));
  });

  test('whoami carries loginID, userName and langcode', async () => {
    const response = await get('/maximo/oslc/whoami?lean=1', wilson);
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.equal(body.loginID, 'WILSON');
    assert.equal(body.userName, 'WILSON');
    assert.equal(body.langcode, 'EN');
    assert.equal(body.loginUserName, 'WILSON');
  });

  test('a child collection the structure lacks, under an existing asset, does not read as a missing record', async () => {
    const page = json(await get('/maximo/oslc/os/mxapiasset?lean=1&oslc.select=assetnum&oslc.pageSize=1'));
    const href = new URL(String(page.member![0]!.href)).pathname;
    const lacking = await get(`${href}/nosuchchild?lean=1`);
    assert.equal(lacking.statusCode, 404, lacking.body);
    const error = json(lacking).Error!;
    assert.equal(error.reasonCode, 'EAS0024E');
    assert.match(String(error.message), /has no child collection nosuchchild; the resource .+ exists/);
    assert.doesNotMatch(String(error.message), /does not exist in the system/);

    const missing = await get('/maximo/oslc/os/mxapiasset/_Tk9TVUNILUJFREZPUkQ-/nosuchchild?lean=1');
    assert.equal(missing.statusCode, 404, missing.body);
    assert.equal(json(missing).Error?.reasonCode, 'BMXAA8727E');
  });

  test('the PATCH and PUT verbs answer a method error with Allow, not "no resource"', async () => {
    const page = json(await get('/maximo/oslc/os/mxapiasset?lean=1&oslc.select=assetnum&oslc.pageSize=1'));
    const href = new URL(String(page.member![0]!.href)).pathname;
    for (const [method, url, allow] of [
      ['PATCH', href, 'GET, POST, DELETE'],
      ['PUT', href, 'GET, POST, DELETE'],
      ['PATCH', '/maximo/oslc/os/mxapiasset', 'GET, POST'],
      ['PATCH', `${href}/assetspec`, 'GET, POST, DELETE'],
    ] as const) {
      const response = await t.app.inject({
        method,
        url,
        headers: { ...admin, 'content-type': 'application/json' },
        payload: { description: 'never written' },
      });
      assert.equal(response.statusCode, 405, `${method} ${url}: ${response.body}`);
      assert.equal(response.headers.allow, allow);
      const error = json(response).Error!;
      assert.equal(error.reasonCode, 'EAS0007E');
      assert.match(String(error.message), /x-method-override: PATCH/);
    }
    const anonymous = await t.app.inject({ method: 'PATCH', url: href, payload: {} });
    assert.equal(anonymous.statusCode, 401, anonymous.body);
  });

  test("IBM's Python client: wsmethod:createFollowUp answers the new work order, action=duplicate the copy", async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/api/os/mxapiwodetail?lean=1',
      headers: admin,
      payload: {
        siteid: 'BEDFORD',
        description: 'Replace filter',
        worktype: 'PM',
        wopriority: 2,
        location: 'BR200-L1',
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const href = new URL(String(created.headers.location)).pathname;
    const original = json(await get(`${href}?lean=1&oslc.select=wonum,status,worktype,siteid`));

    // invoke_method: the member as fetched, POSTed with the MERGE override; the answer's wonum is read.
    const followUp = await t.app.inject({
      method: 'POST',
      url: `${href}?action=wsmethod:createFollowUp`,
      headers: {
        ...wilson,
        'x-method-override': 'PATCH',
        patchtype: 'MERGE',
        'content-type': 'application/json',
      },
      payload: original,
    });
    assert.ok(followUp.statusCode < 300, followUp.body);
    const next = json(followUp);
    assert.ok(typeof next.wonum === 'string' && next.wonum !== original.wonum, String(next.wonum));
    assert.equal(next.origrecordid, original.wonum);
    assert.equal(next.origrecordclass, 'WORKORDER');
    assert.equal(next.description, 'Replace filter');
    assert.equal(next.location, 'BR200-L1');
    assert.equal(next.status, 'WAPPR');
    const stored = await get(
      `/maximo/api/os/mxapiwodetail?lean=1&oslc.select=wonum&oslc.where=${encodeURIComponent(`origrecordid="${String(original.wonum)}"`)}`,
    );
    assert.deepEqual(
      (json(stored).member ?? []).map((member) => member.wonum),
      [next.wonum],
    );
    const reader = await t.app.inject({
      method: 'POST',
      url: `${href}?action=wsmethod:createFollowUp`,
      headers: { ...maxauth('SMITH'), 'x-method-override': 'PATCH', patchtype: 'MERGE' },
      payload: {},
    });
    assert.equal(reader.statusCode, 400, reader.body);
    assert.equal(json(reader).Error?.reasonCode, 'BMXAA9301E');

    // duplicate: GET with the action; the copy is JSON, nothing written.
    const count = async () =>
      json(
        await get('/maximo/api/os/mxapiwodetail?lean=1&oslc.select=wonum&oslc.pageSize=1&collectioncount=1'),
      ).responseInfo?.totalCount;
    const before = await count();
    const duplicate = await get(`${href}?action=duplicate`);
    assert.equal(duplicate.statusCode, 200, duplicate.body);
    const copy = json(duplicate);
    assert.equal(copy.description, 'Replace filter');
    assert.equal(copy.worktype, 'PM');
    assert.equal(copy.siteid, 'BEDFORD');
    assert.equal(copy.orgid, 'EAGLENA');
    assert.equal(copy.status, 'WAPPR');
    assert.equal(copy.wonum, undefined);
    assert.equal(copy.workorderid, undefined);
    assert.equal(await count(), before);
    const posted = await t.app.inject({
      method: 'POST',
      url: '/maximo/api/os/mxapiwodetail?lean=1',
      headers: admin,
      payload: copy,
    });
    assert.equal(posted.statusCode, 201, posted.body);
  });

  test('the OpenAPI document has a resource schema under each alias (RESOURCE_MXWO)', async () => {
    const response = await get('/maximo/oslc/oas/api');
    assert.equal(response.statusCode, 200);
    const schemas = (json(response).components as { schemas: Record<string, { properties?: object }> })
      .schemas;
    for (const name of ['MXWO', 'MXAPIWODETAIL', 'MXASSET', 'MXSR']) {
      const properties = schemas[`RESOURCE_${name}`]?.properties as Record<string, unknown> | undefined;
      assert.ok(properties, name);
    }
    assert.ok('wonum' in (schemas.RESOURCE_MXWO!.properties as object));
    assert.deepEqual(schemas.RESOURCE_MXWO, schemas.RESOURCE_MXAPIWODETAIL);
  });
});

describe('assetid by migration', () => {
  test('assets stored before the column existed are numbered when it is added; applied twice, the same', async () => {
    const storage = await openTestStorage();
    try {
      const db = storage.db;
      await sql`drop index if exists asset_assetid`.execute(db);
      await sql`alter table asset drop column assetid`.execute(db);
      await sql`insert into asset (assetnum, siteid, orgid, status, statusdate)
        values ('BEFOREID', 'BEDFORD', 'EAGLENA', 'OPERATING', now())`.execute(db);
      for (const statement of assetAssetId.statements) await sql.raw(statement).execute(db);
      const numbered = async () =>
        (
          await sql<{ assetnum: string; assetid: number | null }>`select assetnum, assetid from asset
            order by assetuid`.execute(db)
        ).rows;
      const rows = await numbered();
      assert.ok(rows.length > 10);
      assert.ok(
        rows.every((row) => row.assetid !== null),
        JSON.stringify(rows.slice(0, 3)),
      );
      assert.equal(new Set(rows.map((row) => row.assetid)).size, rows.length);
      assert.ok(rows.some((row) => row.assetnum === 'BEFOREID'));
      for (const statement of assetAssetId.statements) await sql.raw(statement).execute(db);
      assert.deepEqual(await numbered(), rows);
    } finally {
      await storage.close();
    }
  });
});
