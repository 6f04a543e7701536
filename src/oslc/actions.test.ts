import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';

/** `action=` on object-structure routes: `wsmethod:changeStatus`, `action=new`, and refusals that write nothing. */

const admin = maxauth('MAXADMIN');
const WO = '/maximo/oslc/os/mxapiwodetail';

describe('actions', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  async function createWorkOrder(wonum: string): Promise<string> {
    const created = await t.app.inject({
      method: 'POST',
      url: `${WO}?lean=1`,
      headers: admin,
      payload: { wonum, siteid: 'BEDFORD', description: 'Action test' },
    });
    assert.equal(created.statusCode, 201, created.body);
    return String(created.headers.location);
  }

  const stored = async (wonum: string) =>
    db.selectFrom('workorder').selectAll().where('wonum', '=', wonum).executeTakeFirstOrThrow();
  const history = async (wonum: string) =>
    db
      .selectFrom('wostatus')
      .select(['status', 'memo', 'changeby', 'changedate'])
      .where('wonum', '=', wonum)
      .orderBy('wostatusid')
      .execute();

  const changeStatus = (location: string, body: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `${location}?lean=1&action=wsmethod:changeStatus`,
      headers: { ...admin, 'x-method-override': 'PATCH', ...headers },
      payload: body as Record<string, unknown>,
    });

  test('changeStatus: an allowed transition sets status and statusdate and writes a history row', async () => {
    const location = await createWorkOrder('ACT1');
    const created = await history('ACT1');
    assert.deepEqual(
      created.map((row) => row.status),
      ['WAPPR'],
      'a create records its first status',
    );
    const date = '2025-03-04T05:06:07+00:00';
    const answer = await changeStatus(location, { status: 'appr', date, memo: 'Approved by phone' });
    assert.equal(answer.statusCode, 204, answer.body);
    assert.equal(answer.body, '');
    const row = await stored('ACT1');
    assert.equal(row.status, 'APPR');
    assert.equal((row.statusdate as Date).toISOString(), new Date(date).toISOString(), 'backdated');
    const rows = await history('ACT1');
    assert.deepEqual(
      rows.map((entry) => [entry.status, entry.memo, entry.changeby]),
      [
        ['WAPPR', null, 'MAXADMIN'],
        ['APPR', 'Approved by phone', 'MAXADMIN'],
      ],
    );
    assert.equal((rows[1]!.changedate as Date).toISOString(), new Date(date).toISOString());

    // With a properties header the changed resource comes back; without the override it is the same method.
    const withProperties = await t.app.inject({
      method: 'POST',
      url: `${location}?lean=1&action=wsmethod:changeStatus`,
      headers: { ...admin, properties: 'wonum,status' },
      payload: { status: 'INPRG' },
    });
    assert.equal(withProperties.statusCode, 200, withProperties.body);
    assert.equal(json(withProperties).status, 'INPRG');
    assert.equal((await history('ACT1')).length, 3);
  });

  test('changeStatus: a refused transition, a value outside the domain and bad parameters write nothing', async () => {
    const location = await createWorkOrder('ACT2');
    assert.equal((await changeStatus(location, { status: 'COMP' })).statusCode, 204);
    const before = await stored('ACT2');
    const refusals: Array<[unknown, string, string]> = [
      [{ status: 'WAPPR' }, 'EAS0111E', 'status'],
      [{ status: 'NOSUCH' }, 'BMXAA4190E', 'status'],
      [{ memo: 'no status' }, 'BMXAA4195E', 'status'],
      [{ status: 'CLOSE', date: 'yesterday' }, 'EAS0010E', 'date'],
      [{ status: 'CLOSE', date: '2999-01-01T00:00:00Z' }, 'EAS0004E', 'date'],
      [{ status: 'CLOSE', memo: 'x'.repeat(255) }, 'EAS0011E', 'memo'],
      [{ status: 'CLOSE', memo: 12 }, 'EAS0010E', 'memo'],
      [{ status: ['CLOSE'] }, 'EAS0010E', 'status'],
    ];
    for (const [body, code, attribute] of refusals) {
      const answer = await changeStatus(location, body);
      assert.equal(answer.statusCode, 400, `${JSON.stringify(body)}: ${answer.body}`);
      const error = json(answer).Error!;
      assert.equal(error.reasonCode, code, JSON.stringify(body));
      assert.equal(error.errorattrname, attribute, JSON.stringify(body));
    }
    const after = await stored('ACT2');
    assert.equal(after.rowstamp, before.rowstamp, 'nothing written');
    assert.deepEqual(
      (await history('ACT2')).map((row) => row.status),
      ['WAPPR', 'COMP'],
    );
    // Closed stays closed.
    assert.equal((await changeStatus(location, { status: 'CLOSE' })).statusCode, 204);
    const reopened = await changeStatus(location, { status: 'APPR' });
    assert.equal(json(reopened).Error?.reasonCode, 'EAS0111E');
  });

  test('changeStatus on an asset, by numeric id; a decommissioned asset stays so', async () => {
    const asset = await db
      .selectFrom('asset')
      .select(['assetuid', 'assetnum', 'status'])
      .where('status', '=', 'OPERATING')
      .orderBy('assetuid')
      .executeTakeFirstOrThrow();
    const url = `/maximo/api/os/mxapiasset/${String(asset.assetuid)}`;
    assert.equal((await changeStatus(url, { status: 'DECOMMISSIONED', memo: 'scrapped' })).statusCode, 204);
    const rows = await db
      .selectFrom('assetstatus')
      .select(['status', 'memo'])
      .where('assetnum', '=', asset.assetnum)
      .orderBy('assetstatusid')
      .execute();
    assert.deepEqual(rows.at(-1), { status: 'DECOMMISSIONED', memo: 'scrapped' });
    assert.equal(rows.length, 2, 'the demo status and the change');
    assert.equal(json(await changeStatus(url, { status: 'OPERATING' })).Error?.reasonCode, 'EAS0111E');
  });

  test('an unknown action, or an empty one, is 400 and writes nothing, on every route', async () => {
    const location = await createWorkOrder('ACT3');
    const before = await stored('ACT3');
    const workOrders = await db
      .selectFrom('workorder')
      .select(db.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const attempts = [
      { method: 'POST', url: `${location}?action=wsmethod:frobnicate`, patch: true },
      { method: 'POST', url: `${location}?action=`, patch: true },
      { method: 'POST', url: `${location}?action=wsmethod:changeStatus`, patch: false, override: 'DELETE' },
      { method: 'DELETE', url: `${location}?action=wsmethod:changeStatus` },
      { method: 'GET', url: `${location}?action=system:candelete` },
      { method: 'GET', url: `${WO}?action=wsmethod:changeStatus` },
      { method: 'POST', url: `${WO}?action=create`, body: { wonum: 'ACT3X', siteid: 'BEDFORD' } },
    ] as const;
    for (const attempt of attempts) {
      const answer = await t.app.inject({
        method: attempt.method,
        url: attempt.url,
        headers: {
          ...admin,
          ...('patch' in attempt && attempt.patch && { 'x-method-override': 'PATCH' }),
          ...('override' in attempt && { 'x-method-override': attempt.override }),
        },
        ...((attempt.method === 'POST' && {
          payload: 'body' in attempt ? attempt.body : { description: 'must not be written', status: 'APPR' },
        }) as object),
      });
      assert.equal(answer.statusCode, 400, `${attempt.method} ${attempt.url}: ${answer.body}`);
      assert.equal(json(answer).Error?.reasonCode, 'EAS0110E', attempt.url);
      assert.equal(json(answer).Error?.errorattrname, 'action');
    }
    const after = await stored('ACT3');
    assert.equal(after.rowstamp, before.rowstamp);
    assert.equal(after.description, 'Action test');
    const count = await db.selectFrom('workorder').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), Number(workOrders.n));
    // Structures without a status history have no changeStatus.
    const group = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapigroup/_TUFJTlQ-?action=wsmethod:changeStatus',
      headers: { ...admin, 'x-method-override': 'PATCH' },
      payload: { status: 'ACTIVE' },
    });
    assert.equal(json(group).Error?.reasonCode, 'EAS0110E');
  });

  test('action=new: GET and POST answer a new record with its defaults and write nothing', async () => {
    const count = async () =>
      Number((await db.selectFrom('workorder').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    const got = await t.app.inject({ method: 'GET', url: `${WO}?lean=1&action=new`, headers: admin });
    assert.equal(got.statusCode, 200, got.body);
    const template = json(got);
    assert.equal(template.status, 'WAPPR');
    assert.equal(template.woclass, 'WORKORDER');
    assert.equal(template.istask, false);
    assert.match(String(template.reportdate), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    assert.equal(template.wonum, undefined, 'no number is issued for a record not created');

    const posted = await t.app.inject({
      method: 'POST',
      url: `${WO}?action=NEW`,
      headers: admin,
      payload: { siteid: 'nashua', description: 'Template' },
    });
    assert.equal(posted.statusCode, 200, posted.body);
    const namespaced = json(posted);
    assert.equal(namespaced['spi:siteid'], 'NASHUA');
    assert.equal(namespaced['spi:orgid'], 'EAGLENA', 'the organization follows the site');
    assert.equal(namespaced['spi:description'], 'Template');
    assert.equal(namespaced['spi:status'], 'WAPPR');

    const bad = await t.app.inject({
      method: 'POST',
      url: `${WO}?action=new`,
      headers: admin,
      payload: { wopriority: 'high' },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).Error?.errorattrname, 'wopriority');
    assert.equal(await count(), before);
  });
});
