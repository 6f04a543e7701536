import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';
import { encodeRestId } from './rest-id.js';

/**
 * Bad input and refused requests: each gets the error object of docs/errors.md with its status and reason code,
 * and a refused write leaves every table as it was.
 */

const admin = maxauth('MAXADMIN');

/** Tables a write through the object structures can touch; each is compared by row count and newest rowstamp. */
const WRITTEN_TABLES = [
  'asset',
  'locations',
  'item',
  'workorder',
  'maxdomain',
  'alndomain',
  'synonymdomain',
  'numericdomain',
  'person',
  'maxuser',
  'maxgroup',
  'groupuser',
  'site',
] as const;

/** Failed logins are counted on the user row by design, so the auth cases leave `maxuser` out. */
const BUSINESS_TABLES = WRITTEN_TABLES.filter((table) => table !== 'maxuser');

/** Words of SQL, driver and stack-trace text that must never reach a client. */
const INTERNALS =
  /\b(select|insert into|update \S+ set|delete from|relation|constraint|violates|syntax error|column "|node_modules|pglite|postgres)\b|\bat \S+ \(|\.ts:\d+|\.js:\d+/i;

const ERROR_FIELDS = new Set([
  'errorattrname',
  'extendedError',
  'errorobjpath',
  'errattrvalue',
  'correlationid',
  'reasonCode',
  'message',
  'statusCode',
]);

interface Expected {
  status: number;
  reasonCode: string;
  /** API root the moreInfo href must be built on; `/oslc` unless stated. */
  root?: 'oslc' | 'api';
  attrName?: string;
  attrValue?: string;
  objPath?: string;
}

/** Checks the error object strictly: its fields, their types, the status as a string and the moreInfo address. */
function assertError(response: LightMyRequestResponse, expected: Expected): Record<string, unknown> {
  assert.equal(response.statusCode, expected.status, response.body);
  assert.equal(response.headers['content-type'], 'application/json');
  const body = json(response);
  assert.deepEqual(Object.keys(body), ['Error']);
  const error = body.Error!;
  for (const field of Object.keys(error)) assert.ok(ERROR_FIELDS.has(field), `unexpected field ${field}`);
  assert.equal(error.statusCode, String(expected.status));
  assert.equal(error.reasonCode, expected.reasonCode);
  assert.equal(typeof error.message, 'string');
  assert.ok(String(error.message).includes(expected.reasonCode), 'the message carries the reason code');
  assert.doesNotMatch(String(error.message), INTERNALS);
  const root = expected.root ?? 'oslc';
  assert.deepEqual(Object.keys(error.extendedError as Json), ['moreInfo']);
  const moreInfo = (error.extendedError as { moreInfo: Json }).moreInfo;
  assert.deepEqual(Object.keys(moreInfo), ['href']);
  assert.match(
    String(moreInfo.href),
    new RegExp(`^http://localhost(:80)?/maximo/${root}/error/messages/${expected.reasonCode}$`),
  );
  if (expected.attrName !== undefined) assert.equal(error.errorattrname, expected.attrName);
  if (expected.attrValue !== undefined) assert.equal(error.errattrvalue, expected.attrValue);
  if (expected.objPath !== undefined) assert.equal(error.errorobjpath, expected.objPath);
  if (error.errattrvalue !== undefined) assert.equal(typeof error.errattrvalue, 'string');
  return error;
}

type Snapshot = Record<string, string>;

async function snapshot(
  db: Kysely<DynamicDatabase>,
  tables: readonly string[] = WRITTEN_TABLES,
): Promise<Snapshot> {
  const result: Snapshot = {};
  for (const table of tables) {
    const row = await db
      .selectFrom(table)
      .select([sql<number>`count(*)`.as('rows'), sql<number | null>`max(rowstamp)`.as('stamp')])
      .executeTakeFirstOrThrow();
    result[table] = `${String(row.rows)} rows, newest rowstamp ${String(row.stamp)}`;
  }
  return result;
}

describe('error responses', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;
  /** An existing asset of the demo data: its keys, unique id and rest id. */
  let asset: { assetnum: string; siteid: string; assetuid: number; restId: string };

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
    const row = await db
      .selectFrom('asset')
      .select(['assetnum', 'siteid', 'assetuid'])
      .orderBy('assetuid')
      .executeTakeFirstOrThrow();
    asset = {
      assetnum: String(row.assetnum),
      siteid: String(row.siteid),
      assetuid: Number(row.assetuid),
      restId: encodeRestId([String(row.assetnum), String(row.siteid)]),
    };
  });
  after(() => t.close());

  /** Sends a request that must be refused, and checks both the error object and that no table changed. */
  async function refusedWrite(
    options: InjectOptions,
    expected: Expected,
    tables: readonly string[] = WRITTEN_TABLES,
  ): Promise<Record<string, unknown>> {
    const before = await snapshot(db, tables);
    const response = await t.app.inject(options);
    const error = assertError(response, expected);
    assert.deepEqual(await snapshot(db, tables), before, 'nothing was written');
    return error;
  }

  const createAsset = (payload: Record<string, unknown>, headers: Record<string, string> = admin) => ({
    method: 'POST' as const,
    url: '/maximo/oslc/os/mxapiasset',
    headers,
    payload,
  });

  test('unknown site: 400 BMXAA4153E naming siteid', async () => {
    await refusedWrite(createAsset({ assetnum: 'ERR1', siteid: 'NOWHERE', description: 'x' }), {
      status: 400,
      reasonCode: 'BMXAA4153E',
      attrName: 'siteid',
      attrValue: 'NOWHERE',
      objPath: 'asset',
    });
  });

  test('status not in its domain: 400 BMXAA4190E', async () => {
    await refusedWrite(createAsset({ assetnum: 'ERR2', siteid: asset.siteid, status: 'BLAH' }), {
      status: 400,
      reasonCode: 'BMXAA4190E',
      attrName: 'status',
      attrValue: 'BLAH',
      objPath: 'asset',
    });
  });

  test('location that does not exist: 400 BMXAA2661E', async () => {
    await refusedWrite(createAsset({ assetnum: 'ERR3', siteid: asset.siteid, location: 'NOSUCHLOC' }), {
      status: 400,
      reasonCode: 'BMXAA2661E',
      attrName: 'location',
      attrValue: 'NOSUCHLOC',
      objPath: 'asset',
    });
  });

  test('duplicate key: 400 BMXAA4129E', async () => {
    await refusedWrite(
      createAsset({ assetnum: asset.assetnum, siteid: asset.siteid, description: 'again' }),
      {
        status: 400,
        reasonCode: 'BMXAA4129E',
      },
    );
    // The same key in another case is the same key (assetnum is upper case).
    await refusedWrite(
      createAsset({ assetnum: asset.assetnum.toLowerCase(), siteid: asset.siteid.toLowerCase() }),
      {
        status: 400,
        reasonCode: 'BMXAA4129E',
      },
    );
  });

  test('missing required field: 400 BMXAA4195E', async () => {
    // A key with no autokey configured (assetnum would be numbered by the service).
    await refusedWrite(
      {
        ...createAsset({ siteid: asset.siteid, description: 'no number' }),
        url: '/maximo/oslc/os/mxapioperloc',
      },
      { status: 400, reasonCode: 'BMXAA4195E', attrName: 'location', objPath: 'locations' },
    );
    await refusedWrite(createAsset({ assetnum: 'ERR5', description: 'no site' }), {
      status: 400,
      reasonCode: 'BMXAA4195E',
      attrName: 'siteid',
    });
    await refusedWrite(
      { method: 'POST', url: '/maximo/oslc/os/mxapiitem', headers: admin, payload: { itemnum: 'ERRITEM' } },
      { status: 400, reasonCode: 'BMXAA4195E', attrName: 'itemsetid', objPath: 'item' },
    );
  });

  test('wrong type: 400 EAS0010E', async () => {
    await refusedWrite(createAsset({ assetnum: 'ERR6', siteid: asset.siteid, priority: 'abc' }), {
      status: 400,
      reasonCode: 'EAS0010E',
      attrName: 'priority',
      attrValue: 'abc',
      objPath: 'asset',
    });
    await refusedWrite(createAsset({ assetnum: 'ERR6', siteid: asset.siteid, installdate: 'yesterday' }), {
      status: 400,
      reasonCode: 'EAS0010E',
      attrName: 'installdate',
    });
    await refusedWrite(createAsset({ assetnum: 'ERR6', siteid: asset.siteid, isrunning: 'maybe' }), {
      status: 400,
      reasonCode: 'EAS0010E',
      attrName: 'isrunning',
    });
    // The update path refuses the same way and leaves the record as it was.
    await refusedWrite(
      {
        method: 'POST',
        url: `/maximo/oslc/os/mxapiasset/${asset.restId}`,
        headers: { ...admin, 'x-method-override': 'PATCH' },
        payload: { description: 'changed', priority: 'abc' },
      },
      { status: 400, reasonCode: 'EAS0010E', attrName: 'priority' },
    );
  });

  test('values the columns cannot hold are bad input (400), never a server failure', async () => {
    for (const payload of [
      { purchaseprice: 1e12 },
      { installdate: '0000-01-01' },
      { description: 'nul \u0000 inside' },
      { priority: 2 ** 40 },
    ]) {
      const before = await snapshot(db);
      const response = await t.app.inject(
        createAsset({ assetnum: 'ERR7', siteid: asset.siteid, ...payload }),
      );
      assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
      assertError(response, { status: 400, reasonCode: String(json(response).Error?.reasonCode) });
      assert.deepEqual(await snapshot(db), before);
    }
  });

  test('bad rest id and unknown numeric id: 404 BMXAA8727E, on read, update and delete', async () => {
    const missing = encodeRestId(['NOSUCHASSET', asset.siteid]);
    for (const id of ['_bad!id', '_Zm9v', missing, '999999999']) {
      const read = await t.app.inject({
        url: `/maximo/oslc/os/mxapiasset/${encodeURIComponent(id)}`,
        headers: admin,
      });
      const error = assertError(read, { status: 404, reasonCode: 'BMXAA8727E' });
      assert.match(String(error.message), /MXAPIASSET/);
      await refusedWrite(
        {
          method: 'POST',
          url: `/maximo/oslc/os/mxapiasset/${encodeURIComponent(id)}`,
          headers: { ...admin, 'x-method-override': 'PATCH' },
          payload: { description: 'never' },
        },
        { status: 404, reasonCode: 'BMXAA8727E' },
      );
      await refusedWrite(
        { method: 'DELETE', url: `/maximo/oslc/os/mxapiasset/${encodeURIComponent(id)}`, headers: admin },
        { status: 404, reasonCode: 'BMXAA8727E' },
      );
    }
    // A rest id of the right shape for another structure addresses nothing here.
    const read = await t.app.inject({ url: `/maximo/oslc/os/mxapiitem/${asset.restId}`, headers: admin });
    assertError(read, { status: 404, reasonCode: 'BMXAA8727E' });
  });

  test('a malformed address is an error object, not the framework default', async () => {
    const response = await t.app.inject({ url: '/maximo/oslc/os/mxapiasset/_%ZZ', headers: admin });
    assertError(response, { status: 400, reasonCode: String(json(response).Error?.reasonCode) });
  });

  test('malformed JSON: 400 EAS0003E; an empty body (none) or one that is not an object: 400', async () => {
    for (const payload of ['{"assetnum": "ERR8", ', '{assetnum: ERR8}']) {
      await refusedWrite(
        {
          method: 'POST',
          url: '/maximo/oslc/os/mxapiasset',
          headers: { ...admin, 'content-type': 'application/json' },
          payload,
        },
        { status: 400, reasonCode: 'EAS0003E' },
      );
    }
    for (const payload of ['[{"assetnum":"ERR8"}]', '"ERR8"', 'null', '', '  ']) {
      await refusedWrite(
        {
          method: 'POST',
          url: '/maximo/oslc/os/mxapiasset',
          headers: { ...admin, 'content-type': 'application/json' },
          payload,
        },
        { status: 400, reasonCode: 'EAS0004E' },
      );
    }
  });

  test('a read-only user creating, updating or deleting: 400 BMXAA9301E', async () => {
    const smith = maxauth('SMITH');
    await refusedWrite(
      createAsset({ assetnum: 'ERR9', siteid: asset.siteid }, smith),
      { status: 400, reasonCode: 'BMXAA9301E' },
      BUSINESS_TABLES,
    );
    await refusedWrite(
      {
        method: 'POST',
        url: `/maximo/oslc/os/mxapiasset/${asset.restId}`,
        headers: { ...smith, 'x-method-override': 'PATCH' },
        payload: { description: 'not mine to change' },
      },
      { status: 400, reasonCode: 'BMXAA9301E' },
      BUSINESS_TABLES,
    );
    await refusedWrite(
      { method: 'DELETE', url: `/maximo/oslc/os/mxapiasset/${asset.restId}`, headers: smith },
      { status: 400, reasonCode: 'BMXAA9301E' },
      BUSINESS_TABLES,
    );
    const error = await refusedWrite(
      {
        method: 'POST',
        url: `/maximo/oslc/os/mxapiasset/${asset.restId}`,
        headers: { ...smith, 'x-method-override': 'DELETE' },
      },
      { status: 400, reasonCode: 'BMXAA9301E' },
      BUSINESS_TABLES,
    );
    assert.match(String(error.message), /MXAPIASSET/);
    // The same user may read: the refusal is about the right, not the user.
    const read = await t.app.inject({ url: `/maximo/oslc/os/mxapiasset/${asset.restId}`, headers: smith });
    assert.equal(read.statusCode, 200);
  });

  test('no credentials and a wrong password: 401 BMXAA7901E', async () => {
    await refusedWrite(createAsset({ assetnum: 'ERR10', siteid: asset.siteid }, {}), {
      status: 401,
      reasonCode: 'BMXAA7901E',
    });
    await refusedWrite(
      createAsset({ assetnum: 'ERR10', siteid: asset.siteid }, maxauth('WILSON', 'not-the-password')),
      { status: 401, reasonCode: 'BMXAA7901E' },
      BUSINESS_TABLES,
    );
    assertError(await t.app.inject({ url: '/maximo/oslc/os/mxapiasset' }), {
      status: 401,
      reasonCode: 'BMXAA7901E',
    });
    assertError(await t.app.inject({ url: '/maximo/api/os/mxapiasset' }), {
      status: 401,
      reasonCode: 'BMXAA7901E',
      root: 'api',
    });
    // A header that is not base64 of user:password is refused the same way.
    assertError(await t.app.inject({ url: '/maximo/oslc/os/mxapiasset', headers: { maxauth: 'nonsense' } }), {
      status: 401,
      reasonCode: 'BMXAA7901E',
    });
  });

  test('unknown object structure and unknown route: 404', async () => {
    const unknown = await refusedWrite(
      { method: 'POST', url: '/maximo/oslc/os/mxapinothing', headers: admin, payload: { assetnum: 'X' } },
      { status: 404, reasonCode: 'EAS0002E' },
    );
    assert.match(String(unknown.message), /MXAPINOTHING/);
    assertError(await t.app.inject({ url: '/maximo/oslc/os/mxapinothing', headers: admin }), {
      status: 404,
      reasonCode: 'EAS0002E',
    });
    assertError(await t.app.inject({ url: '/maximo/api/os/mxapinothing/1', headers: admin }), {
      status: 404,
      reasonCode: 'EAS0002E',
      root: 'api',
    });
    for (const url of ['/maximo/oslc/nothing/here', '/maximo/oslc/os', '/nowhere']) {
      assertError(await t.app.inject({ url, headers: admin }), { status: 404, reasonCode: 'EAS0001E' });
      assertError(await t.app.inject({ url }), { status: 404, reasonCode: 'EAS0001E' });
    }
    assertError(await t.app.inject({ url: '/maximo/api/nothing/here' }), {
      status: 404,
      reasonCode: 'EAS0001E',
      root: 'api',
    });
    // A member answers PUT with 405, as the deployed systems do (docs/compatibility.md), and writes nothing.
    await refusedWrite(
      { method: 'PUT', url: `/maximo/oslc/os/mxapiasset/${asset.restId}`, headers: admin, payload: {} },
      { status: 405, reasonCode: 'EAS0007E' },
    );
  });

  test('moreInfo follows the route used, x-public-uri and relativeuri; the href answers', async () => {
    const missing = `/os/mxapiasset/${encodeRestId(['NOSUCHASSET', asset.siteid])}`;
    const viaApi = assertError(await t.app.inject({ url: `/maximo/api${missing}`, headers: admin }), {
      status: 404,
      reasonCode: 'BMXAA8727E',
      root: 'api',
    });
    const href = String((viaApi.extendedError as { moreInfo: Json }).moreInfo.href);
    const described = await t.app.inject({ url: new URL(href).pathname });
    assert.equal(described.statusCode, 200, 'the moreInfo address is served');

    const publicUri = await t.app.inject({
      url: `/maximo/oslc${missing}`,
      headers: { ...admin, 'x-public-uri': 'https://eas.example.com/maximo/api' },
    });
    assert.equal(publicUri.statusCode, 404);
    assert.deepEqual(json(publicUri).Error?.extendedError, {
      moreInfo: { href: 'https://eas.example.com/maximo/api/error/messages/BMXAA8727E' },
    });

    const relative = await t.app.inject({ url: `/maximo/oslc${missing}?relativeuri=1`, headers: admin });
    assert.deepEqual(json(relative).Error?.extendedError, {
      moreInfo: { href: 'oslc/error/messages/BMXAA8727E' },
    });
  });

  test('lean=0 answers the namespaced error object', async () => {
    const response = await t.app.inject({
      url: `/maximo/oslc/os/mxapiasset/999999999?lean=0`,
      headers: admin,
    });
    assert.equal(response.statusCode, 404);
    assert.equal(response.headers['content-type'], 'application/json');
    const body = json(response);
    assert.deepEqual(Object.keys(body), ['oslc:Error']);
    const error = body['oslc:Error'] as Json;
    assert.equal(error['oslc:statusCode'], '404');
    assert.equal(error['spi:reasonCode'], 'BMXAA8727E');
    assert.match(String(error['oslc:message']), /BMXAA8727E/);
    assert.match(
      String((error['oslc:extendedError'] as { 'oslc:moreInfo': Json })['oslc:moreInfo']['rdf:resource']),
      /^http:\/\/localhost(:80)?\/maximo\/oslc\/error\/messages\/BMXAA8727E$/,
    );
    assert.equal(error.Error, undefined);

    const withAttribute = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset?lean=0',
      headers: admin,
      payload: { 'spi:assetnum': 'ERR11', 'spi:siteid': 'NOWHERE' },
    });
    const namespaced = json(withAttribute)['oslc:Error'] as Json;
    assert.equal(namespaced['spi:reasonCode'], 'BMXAA4153E');
    assert.equal(namespaced['spi:errorattrname'], 'siteid');
    assert.equal(namespaced['spi:errattrvalue'], 'NOWHERE');
  });

  test('a stale _rowstamp in an update: 409 BMXAA8229W and nothing written; the current one is accepted', async () => {
    const url = `/maximo/oslc/os/mxapiasset/${asset.restId}?lean=1`;
    const first = json(await t.app.inject({ url, headers: admin }));
    const stale = String(first._rowstamp);
    const fresh = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...admin, 'x-method-override': 'PATCH' },
      payload: { description: 'First writer', _rowstamp: stale },
    });
    assert.equal(fresh.statusCode, 204, fresh.body);
    const error = await refusedWrite(
      {
        method: 'POST',
        url,
        headers: { ...admin, 'x-method-override': 'PATCH' },
        payload: { description: 'Second writer, too late', _rowstamp: stale },
      },
      { status: 409, reasonCode: 'BMXAA8229W' },
    );
    assert.match(String(error.message), /ASSET/);
    const now = json(await t.app.inject({ url, headers: admin }));
    assert.equal(now.description, 'First writer');
    const current = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...admin, 'x-method-override': 'PATCH' },
      payload: { description: 'Second writer, refreshed', _rowstamp: now._rowstamp },
    });
    assert.equal(current.statusCode, 204, current.body);
  });

  test('a failing child leaves no parent: every write is one transaction', async () => {
    const group = await refusedWrite(
      {
        method: 'POST',
        url: '/maximo/oslc/os/mxapigroup',
        headers: admin,
        payload: { groupname: 'ERRGROUP', groupuser: [{ userid: 'WILSON' }, { userid: 'NOSUCHUSER' }] },
      },
      { status: 400, reasonCode: 'BMXAA2661E', attrName: 'userid', objPath: 'groupuser' },
    );
    assert.match(String(group.message), /NOSUCHUSER/);
    await refusedWrite(
      {
        method: 'POST',
        url: '/maximo/oslc/os/mxapiperuser',
        headers: admin,
        payload: {
          personid: 'ERRPERSON',
          maxuser: [
            { userid: 'ERRUSER', password: 'whatever-pw', groupuser: [{ groupname: 'NOSUCHGROUP' }] },
          ],
        },
      },
      { status: 400, reasonCode: 'BMXAA2661E', attrName: 'groupname' },
    );
    await refusedWrite(
      {
        method: 'POST',
        url: '/maximo/oslc/os/mxapidomain',
        headers: admin,
        payload: { domainid: 'ERRDOM', domaintype: 'ALN', alndomain: [{ value: 'A' }, { value: 'A' }] },
      },
      { status: 400, reasonCode: 'BMXAA4129E' },
    );
    // An update whose child fails keeps the parent's own change out as well.
    const viewer = await db
      .selectFrom('maxgroup')
      .select('maxgroupid')
      .where('groupname', '=', 'VIEWER')
      .executeTakeFirstOrThrow();
    await refusedWrite(
      {
        method: 'POST',
        url: `/maximo/oslc/os/mxapigroup/${String(viewer.maxgroupid)}`,
        headers: { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
        payload: { description: 'Renamed viewers', groupuser: [{ userid: 'NOSUCHUSER' }] },
      },
      { status: 400, reasonCode: 'BMXAA2661E' },
    );
  });

  test('a database failure answers 500 EAS0500E without SQL or a stack trace', async () => {
    // Take a table away underneath the service: the read and the write both fail inside the database.
    await sql`alter table workorder rename to workorder_hidden`.execute(db);
    try {
      const read = await t.app.inject({ url: '/maximo/oslc/os/mxapiwodetail?lean=1', headers: admin });
      assertError(read, { status: 500, reasonCode: 'EAS0500E' });
      assert.doesNotMatch(read.body, INTERNALS);
      assert.doesNotMatch(read.body, /workorder/i);
      const write = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/os/mxapiwodetail?lean=1',
        headers: admin,
        payload: { wonum: 'ERRWO', siteid: asset.siteid },
      });
      assertError(write, { status: 500, reasonCode: 'EAS0500E' });
      assert.doesNotMatch(write.body, INTERNALS);
      assert.doesNotMatch(write.body, /workorder/i);
    } finally {
      await sql`alter table workorder_hidden rename to workorder`.execute(db);
    }
    const restored = await t.app.inject({
      url: '/maximo/oslc/os/mxapiwodetail?lean=1&oslc.pageSize=1',
      headers: admin,
    });
    assert.equal(restored.statusCode, 200);
  });
});

describe('oversized body', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ EAS_BODY_LIMIT: '2048' });
  });
  after(() => t.close());

  test('a body over EAS_BODY_LIMIT: 413 and nothing written', async () => {
    const db = t.storage.db as unknown as Kysely<DynamicDatabase>;
    const before = await snapshot(db);
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset',
      headers: admin,
      payload: {
        assetnum: 'BIG1',
        siteid: 'BEDFORD',
        description: 'x'.repeat(50),
        serialnum: 'y'.repeat(3000),
      },
    });
    const error = assertError(response, { status: 413, reasonCode: 'EAS0005E' });
    assert.match(String(error.message), /2048/);
    assert.deepEqual(await snapshot(db), before);
    // Just under the limit is read (and then judged on its content).
    const small = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset',
      headers: admin,
      payload: { assetnum: 'BIG2', siteid: 'BEDFORD', description: 'x'.repeat(50) },
    });
    assert.equal(small.statusCode, 201, small.body);
  });
});
