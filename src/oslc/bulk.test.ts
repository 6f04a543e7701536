import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';

/**
 * `x-method-override: BULK`, `SYNC` and `MERGESYNC`, consistent 405s for other overrides, `transactionid`
 * idempotent writes, and ETag / `If-Match` (docs/compatibility.md, "BULK and SYNC" and "Writes").
 */

type Body = Record<string, unknown>;

let ctx: TestApp;
let db: Kysely<DynamicDatabase>;
const admin = maxauth('MAXADMIN');

before(async () => {
  ctx = await startTestApp();
  db = ctx.storage.db as unknown as Kysely<DynamicDatabase>;
});
after(async () => ctx.close());

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return ctx.app.inject({ method: 'POST', url, headers: { ...admin, ...headers }, payload: body as Body });
}

const pathOf = (href: string): string => new URL(href).pathname;

async function asset(assetnum: string): Promise<Record<string, unknown> | undefined> {
  return db.selectFrom('asset').selectAll().where('assetnum', '=', assetnum).executeTakeFirst();
}

async function createAsset(assetnum: string, description = 'Pump'): Promise<string> {
  const response = await post('/maximo/oslc/os/mxapiasset', { assetnum, siteid: 'BEDFORD', description });
  assert.equal(response.statusCode, 201, response.body);
  return String(response.headers.location);
}

describe('BULK', () => {
  test('three elements with the middle one failing: per-element statuses, the other two applied', async () => {
    const existing = await createAsset('BULK-UPD');
    const response = await post(
      '/maximo/api/os/mxapiasset',
      [
        { assetnum: 'BULK-1', siteid: 'BEDFORD', description: 'First' },
        { assetnum: 'BULK-2', siteid: 'NOSUCHSITE', description: 'Second' },
        { _action: 'Update', href: existing, description: 'Updated in bulk' },
      ],
      { 'x-method-override': 'BULK' },
    );
    assert.equal(response.statusCode, 200, response.body);
    const results = JSON.parse(response.body) as Array<Record<string, Record<string, unknown>>>;
    assert.equal(results.length, 3);
    assert.equal(results[0]!._responsemeta!.status, '201');
    assert.match(String(results[0]!._responsemeta!.Location), /\/api\/os\/mxapiasset\/_/);
    assert.equal(results[1]!._responsemeta!.status, '400');
    const error = results[1]!._responsedata!.Error as Record<string, unknown>;
    assert.equal(error.errorattrname, 'siteid');
    assert.equal(results[2]!._responsemeta!.status, '204');

    assert.equal((await asset('BULK-1'))?.description, 'First');
    assert.equal(await asset('BULK-2'), undefined);
    assert.equal((await asset('BULK-UPD'))?.description, 'Updated in bulk');
  });

  test('the _data/_meta form: create, MERGE, DELETE, with properties per element', async () => {
    const doomed = await createAsset('BULK-DEL');
    const merged = await createAsset('BULK-MRG');
    const response = await post(
      '/maximo/oslc/os/mxapiasset',
      [
        { _data: { assetnum: 'BULK-META', siteid: 'BEDFORD' }, _meta: { properties: 'assetnum,siteid' } },
        {
          _data: { description: 'Merged' },
          _meta: { method: 'MERGE', uri: merged, properties: 'description' },
        },
        { _meta: { method: 'DELETE', uri: doomed } },
        { _action: 'Delete', href: doomed },
      ],
      { 'x-method-override': 'BULK' },
    );
    assert.equal(response.statusCode, 200, response.body);
    const results = JSON.parse(response.body) as Array<Record<string, Record<string, unknown>>>;
    assert.deepEqual(
      results.map((result) => result._responsemeta!.status),
      ['201', '200', '204', '404'],
    );
    assert.equal(results[0]!._responsedata!['spi:assetnum'], 'BULK-META');
    assert.equal(results[1]!._responsedata!['spi:description'], 'Merged');
    assert.ok(await asset('BULK-META'));
    assert.equal(await asset('BULK-DEL'), undefined);
    assert.equal((await asset('BULK-MRG'))?.description, 'Merged');
  });

  test('each element needs its own right; a body that is not an array is refused', async () => {
    const response = await post(
      '/maximo/oslc/os/mxapiasset',
      [{ assetnum: 'BULK-SMITH', siteid: 'BEDFORD' }],
      { ...maxauth('SMITH'), 'x-method-override': 'BULK' },
    );
    assert.equal(response.statusCode, 200, response.body);
    const results = JSON.parse(response.body) as Array<Record<string, Record<string, unknown>>>;
    assert.equal(results[0]!._responsemeta!.status, '400');
    assert.equal((results[0]!._responsedata!.Error as Record<string, unknown>).reasonCode, 'BMXAA9301E');
    assert.equal(await asset('BULK-SMITH'), undefined);

    const notArray = await post(
      '/maximo/oslc/os/mxapiasset',
      { assetnum: 'X' },
      { 'x-method-override': 'BULK' },
    );
    assert.equal(notArray.statusCode, 400);
    assert.equal(json(notArray).Error?.reasonCode, 'EAS0004E');
    const foreign = await post(
      '/maximo/oslc/os/mxapiasset',
      [{ _action: 'Delete', href: 'http://localhost/maximo/oslc/os/mxapiwodetail/1' }],
      { 'x-method-override': 'BULK' },
    );
    const foreignResult = JSON.parse(foreign.body) as Array<Record<string, Record<string, unknown>>>;
    assert.equal(foreignResult[0]!._responsemeta!.status, '400');
  });
});

describe('SYNC and MERGESYNC', () => {
  test('SYNC creates when the key names nothing, and updates (replacing children) when it names a record', async () => {
    const created = await post(
      '/maximo/oslc/os/mxapiasset',
      { assetnum: 'SYNC-1', siteid: 'BEDFORD', description: 'Synced' },
      { 'x-method-override': 'SYNC' },
    );
    assert.equal(created.statusCode, 201, created.body);
    assert.ok(created.headers.location);
    const updated = await post(
      '/maximo/oslc/os/mxapiasset',
      { assetnum: 'sync-1', siteid: 'BEDFORD', description: 'Synced again' },
      { 'x-method-override': 'SYNC', properties: 'description' },
    );
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(json(updated)['spi:description'], 'Synced again');
    const rows = await db
      .selectFrom('asset')
      .select('description')
      .where('assetnum', '=', 'SYNC-1')
      .execute();
    assert.deepEqual(rows, [{ description: 'Synced again' }]);
  });

  test('MERGESYNC (or SYNC with patchtype MERGE) merges child collections', async () => {
    const body = {
      domainid: 'SYNCDOM',
      domaintype: 'ALN',
      maxtype: 'UPPER',
      length: 10,
      alndomain: [{ value: 'A' }],
    };
    const created = await post('/maximo/oslc/os/mxapidomain', body, { 'x-method-override': 'MERGESYNC' });
    assert.equal(created.statusCode, 201, created.body);
    const merged = await post(
      '/maximo/oslc/os/mxapidomain',
      { domainid: 'SYNCDOM', alndomain: [{ value: 'B' }] },
      { 'x-method-override': 'MERGESYNC' },
    );
    assert.equal(merged.statusCode, 204, merged.body);
    const viaPatchtype = await post(
      '/maximo/oslc/os/mxapidomain',
      { domainid: 'SYNCDOM', alndomain: [{ value: 'C' }] },
      { 'x-method-override': 'SYNC', patchtype: 'MERGE' },
    );
    assert.equal(viaPatchtype.statusCode, 204, viaPatchtype.body);
    const values = await db
      .selectFrom('alndomain')
      .select('value')
      .where('domainid', '=', 'SYNCDOM')
      .orderBy('value')
      .execute();
    assert.deepEqual(
      values.map((row) => row.value),
      ['A', 'B', 'C'],
    );
    const replaced = await post(
      '/maximo/oslc/os/mxapidomain',
      { domainid: 'SYNCDOM', alndomain: [{ value: 'D' }] },
      { 'x-method-override': 'SYNC' },
    );
    assert.equal(replaced.statusCode, 204, replaced.body);
    const after = await db
      .selectFrom('alndomain')
      .select('value')
      .where('domainid', '=', 'SYNCDOM')
      .execute();
    assert.deepEqual(
      after.map((row) => row.value),
      ['D'],
    );
  });

  test('bad input to SYNC is a 400 naming the attribute, and nothing is written', async () => {
    const response = await post(
      '/maximo/oslc/os/mxapiasset',
      { assetnum: 'SYNC-BAD', siteid: 'BEDFORD', priority: 'high' },
      { 'x-method-override': 'SYNC' },
    );
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(json(response).Error?.errorattrname, 'priority');
    assert.equal(await asset('SYNC-BAD'), undefined);
  });

  test('a PATCH whose body is {"_action": "Delete"} deletes the resource, with the delete right only', async () => {
    const href = pathOf(await createAsset('ACT-DEL'));
    const refused = await post(
      href,
      { _action: 'Delete' },
      { ...maxauth('SMITH'), 'x-method-override': 'PATCH' },
    );
    assert.equal(refused.statusCode, 400);
    assert.ok(await asset('ACT-DEL'));
    const deleted = await post(href, { _action: 'Delete' }, { 'x-method-override': 'PATCH' });
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal(await asset('ACT-DEL'), undefined);
  });

  test('unsupported overrides are 405 error objects everywhere', async () => {
    const href = pathOf(await createAsset('OVR-1'));
    for (const [url, override] of [
      ['/maximo/oslc/os/mxapiasset', 'PUT'],
      ['/maximo/oslc/os/mxapiasset', 'PATCH'],
      [href, 'BULK'],
      [href, 'SYNC'],
      [`${href}/nosuch`, 'SYNC'],
    ] as const) {
      const response = await post(url, {}, { 'x-method-override': override });
      assert.equal(response.statusCode, 405, `${url} ${override}: ${response.body}`);
      assert.equal(json(response).Error?.reasonCode, 'EAS0007E');
      assert.equal(json(response).Error?.statusCode, '405');
    }
  });
});

describe('transactionid', () => {
  test('a second create with the same transactionid is 409 BMXAA9524E and writes nothing', async () => {
    const headers = { transactionid: 'txn-create-1' };
    const first = await post('/maximo/oslc/os/mxapiasset', { assetnum: 'TXN-1', siteid: 'BEDFORD' }, headers);
    assert.equal(first.statusCode, 201, first.body);
    const second = await post(
      '/maximo/oslc/os/mxapiasset',
      { assetnum: 'TXN-2', siteid: 'BEDFORD' },
      headers,
    );
    assert.equal(second.statusCode, 409, second.body);
    assert.equal(json(second).Error?.reasonCode, 'BMXAA9524E');
    assert.match(String(json(second).Error?.message), /with resource ID MXAPIASSET\/\d+/);
    assert.equal(await asset('TXN-2'), undefined);
  });

  test('two requests with one id at once: one writes, the other is refused as a repeat', async () => {
    const headers = { transactionid: 'txn-race' };
    // The same body twice, as a client retrying a lost answer sends it: the repeat is a 409, not a duplicate key.
    const [a, b] = await Promise.all([
      post('/maximo/oslc/os/mxapiasset', { assetnum: 'TXN-RA', siteid: 'BEDFORD' }, headers),
      post('/maximo/oslc/os/mxapiasset', { assetnum: 'TXN-RA', siteid: 'BEDFORD' }, headers),
    ]);
    assert.deepEqual([a.statusCode, b.statusCode].sort(), [201, 409]);
    const rows = await db
      .selectFrom('asset')
      .select('assetnum')
      .where('assetnum', 'in', ['TXN-RA', 'TXN-RB'])
      .execute();
    assert.equal(rows.length, 1);
  });

  test('updates and deletes with a used id are refused too; a failed write does not use up its id', async () => {
    const href = pathOf(await createAsset('TXN-U'));
    const patch = { 'x-method-override': 'PATCH', transactionid: 'txn-update' };
    const failed = await post(href, { siteid: 'NASHUA' }, patch);
    assert.equal(failed.statusCode, 400);
    assert.equal((await post(href, { description: 'Once' }, patch)).statusCode, 204);
    const again = await post(href, { description: 'Twice' }, patch);
    assert.equal(again.statusCode, 409);
    assert.equal((await asset('TXN-U'))?.description, 'Once');
  });
});

describe('ETag and If-Match', () => {
  test('a resource carries an ETag; a stale If-Match is 412 and writes nothing; the current one writes', async () => {
    const location = await createAsset('ETAG-1', 'Before');
    const href = pathOf(location);
    const read = await ctx.app.inject({ method: 'GET', url: href, headers: admin });
    const etag = String(read.headers.etag);
    assert.match(etag, /^"\d+"$/);
    const first = await post(
      href,
      { description: 'First' },
      { 'x-method-override': 'PATCH', 'if-match': etag },
    );
    assert.equal(first.statusCode, 204, first.body);
    assert.ok(first.headers.etag);
    assert.notEqual(first.headers.etag, etag);

    const stale = await post(
      href,
      { description: 'Stale' },
      { 'x-method-override': 'PATCH', 'if-match': etag },
    );
    assert.equal(stale.statusCode, 412, stale.body);
    assert.equal(json(stale).Error?.reasonCode, 'BMXAA8229W');
    assert.equal((await asset('ETAG-1'))?.description, 'First');

    const staleDelete = await ctx.app.inject({
      method: 'DELETE',
      url: href,
      headers: { ...admin, 'if-match': etag },
    });
    assert.equal(staleDelete.statusCode, 412);
    assert.ok(await asset('ETAG-1'));

    const any = await post(href, { description: 'Any' }, { 'x-method-override': 'PATCH', 'if-match': '*' });
    assert.equal(any.statusCode, 204);
    assert.equal((await asset('ETAG-1'))?.description, 'Any');
  });

  test('child members carry an ETag and honour If-Match', async () => {
    const groups = await ctx.app.inject({
      method: 'GET',
      url: '/maximo/oslc/os/mxapigroup?lean=1&oslc.where=groupname="MAINT"',
      headers: admin,
    });
    const group = pathOf(String(json(groups).member?.[0]?.href));
    const members = json(
      await ctx.app.inject({ method: 'GET', url: `${group}/groupuser?lean=1`, headers: admin }),
    );
    const localref = pathOf(String(members.member?.[0]?.localref));
    const read = await ctx.app.inject({ method: 'GET', url: localref, headers: admin });
    assert.match(String(read.headers.etag), /^"\d+"$/);
    const stale = await ctx.app.inject({
      method: 'DELETE',
      url: localref,
      headers: { ...admin, 'if-match': '"1"' },
    });
    assert.equal(stale.statusCode, 412);
    const rows = await db.selectFrom('groupuser').select('userid').where('groupname', '=', 'MAINT').execute();
    assert.equal(rows.length, 1);
  });
});
