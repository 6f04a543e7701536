import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../app.js';
import { json, maxauth, startTestApp, testConfig, type Json, type TestApp } from '../../test/helpers/app.js';

/**
 * Database configuration on one database served by two app instances (the real two-process points, on PostgreSQL,
 * are in multiprocess.test.ts): staging through MXAPIMAXATTRIBUTECFG, apply refused without admin mode and applied
 * with it, the new attribute read, filtered, sorted and written through MXAPIASSET on both instances, a failing
 * apply that changes nothing, non-structural changes without admin mode, a restart, and the service API.
 */
const ROOT = '/maximo/oslc';

function sessionCookie(response: LightMyRequestResponse): string {
  const line = ([] as string[])
    .concat(response.headers['set-cookie'] ?? [])
    .find((cookie) => cookie.startsWith('JSESSIONID='));
  assert.ok(line, `a session cookie: ${response.statusCode} ${response.body}`);
  return line.split(';')[0]!;
}

const reasonCode = (response: LightMyRequestResponse): unknown => json(response).Error?.reasonCode;

/**
 * Retries `check` until it passes or ten seconds have gone by: the other instance hears an apply through the bus,
 * usually within milliseconds, but on cores shared with other test processes (CI) a notification has taken over a
 * second. What is tested is that it is heard at all; no time is promised for it (docs/dbconfig.md).
 */
async function eventually(check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

describe('database configuration', () => {
  let t: TestApp;
  let other: FastifyInstance;
  let cookie: string;
  let otherCookie: string;

  const request = (
    app: FastifyInstance,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    app.inject({
      method,
      url: `${ROOT}${path}`,
      headers: {
        ...((app === other ? otherCookie : cookie) !== undefined && {
          cookie: app === other ? otherCookie : cookie,
        }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
  const stage = async (change: Record<string, unknown>) => {
    const response = await request(t.app, 'POST', '/os/mxapimaxattributecfg?lean=1', change);
    assert.equal(response.statusCode, 201, response.body);
  };
  const apply = () => request(t.app, 'POST', '/dbconfig/apply');
  const adminMode = async (on: boolean) => {
    const response = await request(t.app, 'POST', `/adminmode/${on ? 'on' : 'off'}`, {});
    assert.equal(response.statusCode, 200, response.body);
    // With no ordinary session left the state is 1 at once (docs/adminmode.md).
    assert.equal(json(response).state, on ? 1 : 0);
  };
  const columns = async (table: string): Promise<string[]> => {
    const result = await sql<{ column_name: string }>`
      select column_name from information_schema.columns
       where table_schema = current_schema() and table_name = ${table}`.execute(t.storage.db);
    return result.rows.map((row) => row.column_name);
  };
  const pending = async (): Promise<Json[]> => {
    const response = await request(t.app, 'GET', '/os/mxapimaxattributecfg?lean=1&oslc.select=*');
    assert.equal(response.statusCode, 200, response.body);
    return json(response).member ?? [];
  };
  const assets = async (app: FastifyInstance, query: string) => {
    const response = await request(app, 'GET', `/os/mxapiasset?lean=1&${query}`);
    return { response, members: json(response).member ?? [] };
  };

  before(async () => {
    t = await startTestApp();
    const built = await buildApp(testConfig({ EAS_SERVER_NAME: 'OTHER' }), t.storage);
    other = built.app;
    await other.ready();
    cookie = sessionCookie(await request(t.app, 'POST', '/login', undefined, maxauth('MAXADMIN')));
    otherCookie = sessionCookie(await request(other, 'POST', '/login', undefined, maxauth('MAXADMIN')));
  });
  after(async () => {
    await other.close();
    await t.close();
  });

  test('only administrators apply; changes are checked when staged', async () => {
    const wilson = await t.app.inject({
      method: 'POST',
      url: `${ROOT}/dbconfig/apply`,
      headers: maxauth('WILSON'),
    });
    assert.ok([401, 403].includes(wilson.statusCode) || reasonCode(wilson) !== undefined, wilson.body);
    assert.notEqual(wilson.statusCode, 200);
    const refusals: Array<[Record<string, unknown>, string]> = [
      [
        { objectname: 'NOSUCH', attributename: 'XA', changetype: 'ADD', maxtype: 'ALN', length: 5 },
        'EAS0170E',
      ],
      [
        { objectname: 'ASSET', attributename: '1BAD', changetype: 'ADD', maxtype: 'ALN', length: 5 },
        'EAS0171E',
      ],
      [
        { objectname: 'ASSET', attributename: 'DESCRIPTION', changetype: 'ADD', maxtype: 'ALN', length: 5 },
        'EAS0172E',
      ],
      [{ objectname: 'ASSET', attributename: 'ROWSTAMP', changetype: 'ADD', maxtype: 'INTEGER' }, 'EAS0172E'],
      [{ objectname: 'ASSET', attributename: 'STATUS', changetype: 'REMOVE' }, 'EAS0173E'],
      [{ objectname: 'ASSET', attributename: 'XA', changetype: 'ADD', maxtype: 'ALN' }, 'EAS0174E'],
      [{ objectname: 'ASSET', attributename: 'XA', changetype: 'ADD', maxtype: 'BLOB' }, 'EAS0174E'],
      [
        {
          objectname: 'ASSET',
          attributename: 'XA',
          changetype: 'ADD',
          maxtype: 'INTEGER',
          defaultvalue: 'x',
        },
        'EAS0174E',
      ],
      [
        {
          objectname: 'ASSET',
          attributename: 'XA',
          changetype: 'ADD',
          maxtype: 'ALN',
          length: 4,
          domainid: 'NONE',
        },
        'EAS0174E',
      ],
    ];
    for (const [change, code] of refusals) {
      const response = await request(t.app, 'POST', '/os/mxapimaxattributecfg?lean=1', change);
      assert.equal(response.statusCode, 400, JSON.stringify(change));
      assert.equal(reasonCode(response), code, `${JSON.stringify(change)}: ${response.body}`);
    }
    assert.deepEqual(await pending(), []);
  });

  test('a structural change with admin mode off is refused with BMXAA0578E and applies nothing', async () => {
    await stage({
      objectname: 'asset',
      attributename: 'xcriticality',
      changetype: 'add',
      maxtype: 'INTEGER',
      title: 'Criticality',
    });
    const [staged] = await pending();
    assert.equal(staged?.attributename, 'XCRITICALITY');
    assert.equal(staged?.changeby, 'MAXADMIN');
    const refused = await apply();
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(reasonCode(refused), 'BMXAA0578E');
    assert.ok(!(await columns('asset')).includes('xcriticality'));
    assert.equal((await pending()).length, 1);
    const { response } = await assets(t.app, 'oslc.where=xcriticality=1');
    assert.equal(reasonCode(response), 'EAS0020E', 'the attribute is not in the metadata');
  });

  test('with admin mode on it is applied, and read, filtered, sorted and written on both instances', async () => {
    await adminMode(true);
    await stage({
      objectname: 'ASSET',
      attributename: 'XSUPPLIERREF',
      changetype: 'ADD',
      maxtype: 'UPPER',
      length: 12,
    });
    await stage({
      objectname: 'ASSET',
      attributename: 'XRATING',
      changetype: 'ADD',
      maxtype: 'DECIMAL',
      length: 6,
      scale: 2,
    });
    await stage({
      objectname: 'ASSET',
      attributename: 'XCLASS',
      changetype: 'ADD',
      maxtype: 'ALN',
      length: 16,
      domainid: 'ASSETTYPE',
    });
    await stage({ objectname: 'ASSET', attributename: 'XINSPECTED', changetype: 'ADD', maxtype: 'DATE' });
    const applied = await apply();
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(json(applied).structural, true);
    assert.equal((json(applied).applied as unknown[]).length, 5);
    assert.deepEqual(await pending(), []);
    for (const column of ['xcriticality', 'xsupplierref', 'xrating', 'xclass', 'xinspected']) {
      assert.ok((await columns('asset')).includes(column), column);
    }

    const { members } = await assets(
      t.app,
      'oslc.select=assetnum,siteid&oslc.orderBy=%2Bassetnum&oslc.pageSize=3',
    );
    const ids = members.map((member) => String(member.href).split('/').pop());
    for (const [index, id] of ids.entries()) {
      const patched = await t.app.inject({
        method: 'POST',
        url: `${ROOT}/os/mxapiasset/${id}?lean=1`,
        headers: { cookie, 'content-type': 'application/json', 'x-method-override': 'PATCH' },
        payload: JSON.stringify({
          xcriticality: 10 + index,
          xsupplierref: `ref-${index}`,
          xrating: 1.25 + index,
        }),
      });
      assert.equal(patched.statusCode, 204, patched.body);
    }
    for (const app of [t.app, other]) {
      await eventually(async () => {
        const { response, members: found } = await assets(
          app,
          'oslc.select=assetnum,xcriticality,xsupplierref,xrating&oslc.where=xcriticality>=10&oslc.orderBy=-xcriticality',
        );
        assert.equal(response.statusCode, 200, response.body);
        assert.deepEqual(
          found.map((member) => [member.xcriticality, member.xsupplierref, member.xrating]),
          [
            [12, 'REF-2', 3.25],
            [11, 'REF-1', 2.25],
            [10, 'REF-0', 1.25],
          ],
        );
      });
    }

    const created = await other.inject({
      method: 'POST',
      url: `${ROOT}/os/mxapiasset?lean=1`,
      headers: {
        cookie: otherCookie,
        'content-type': 'application/json',
        properties: 'assetnum,xcriticality,xclass,xinspected',
      },
      payload: JSON.stringify({
        assetnum: 'DBCFG1',
        siteid: 'BEDFORD',
        xcriticality: 99,
        xclass: 'FACILITIES',
        xinspected: '2026-03-04',
      }),
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(json(created).xcriticality, 99);
    assert.equal(json(created).xinspected, '2026-03-04T00:00:00+00:00');
    const { members: byDomain } = await assets(
      t.app,
      'oslc.select=assetnum,xclass&oslc.where=xclass="FACILITIES"',
    );
    assert.deepEqual(
      byDomain.map((member) => member.assetnum),
      ['DBCFG1'],
    );

    const outside = await other.inject({
      method: 'POST',
      url: `${ROOT}/os/mxapiasset?lean=1`,
      headers: { cookie: otherCookie, 'content-type': 'application/json' },
      payload: JSON.stringify({ assetnum: 'DBCFG2', siteid: 'BEDFORD', xclass: 'NOTATYPE' }),
    });
    assert.equal(reasonCode(outside), 'BMXAA4190E', outside.body);
    const tooLong = await t.app.inject({
      method: 'POST',
      url: `${ROOT}/os/mxapiasset?lean=1`,
      headers: { cookie, 'content-type': 'application/json' },
      payload: JSON.stringify({ assetnum: 'DBCFG3', siteid: 'BEDFORD', xrating: 12345.5 }),
    });
    assert.equal(reasonCode(tooLong), 'EAS0018E', 'numeric(6, 2) holds up to 9999.99');

    const list = await request(
      other,
      'GET',
      `/os/mxapiasset/${ids[0]}/getlist~xclass?lean=1&oslc.select=value`,
    );
    assert.equal(list.statusCode, 200, list.body);
    assert.ok(
      (json(list).member ?? []).some((member) => member.value === 'FACILITIES'),
      list.body,
    );

    const schema = await request(other, 'GET', '/jsonschemas/mxapiasset');
    const properties = json(schema).properties as Record<string, Record<string, unknown>>;
    assert.equal(properties.xcriticality?.title, 'Criticality');
    assert.equal(properties.xsupplierref?.maxLength, 12);

    const listed = await request(other, 'GET', '/dbconfig/attributes?lean=1');
    assert.deepEqual(
      (json(listed).member ?? []).map((member) => member.attributename),
      ['XCRITICALITY', 'XSUPPLIERREF', 'XRATING', 'XCLASS', 'XINSPECTED'],
    );
  });

  test('a failing apply leaves table, metadata and pending changes unchanged, and answers an error object', async () => {
    await stage({
      objectname: 'ASSET',
      attributename: 'XOWNERCODE',
      changetype: 'ADD',
      maxtype: 'ALN',
      length: 10,
      required: true,
    });
    await stage({
      objectname: 'ASSET',
      attributename: 'XCRITICALITY',
      changetype: 'CHANGE',
      title: 'Criticality rank',
    });
    const version = t.services.metadata.version;
    const failed = await apply();
    assert.equal(failed.statusCode, 400, failed.body);
    assert.equal(reasonCode(failed), 'EAS0175E');
    assert.equal(json(failed).Error?.errattrvalue, 'XOWNERCODE');
    assert.ok(!(await columns('asset')).includes('xownercode'));
    assert.equal(t.services.metadata.version, version);
    assert.equal(t.services.metadata.object('ASSET').attributes.get('xcriticality')?.title, 'Criticality');
    assert.equal((await pending()).length, 2);

    // With a default the rows get it, and the column becomes required.
    const owner = (await pending()).find((row) => row.attributename === 'XOWNERCODE')!;
    const patched = await t.app.inject({
      method: 'POST',
      url: `${ROOT}/os/mxapimaxattributecfg/${String(owner.href).split('/').pop()}?lean=1`,
      headers: { cookie, 'content-type': 'application/json', 'x-method-override': 'PATCH' },
      payload: JSON.stringify({ defaultvalue: 'UNASSIGNED' }),
    });
    assert.equal(patched.statusCode, 204, patched.body);
    const applied = await apply();
    assert.equal(applied.statusCode, 200, applied.body);
    await eventually(async () => {
      const { members } = await assets(other, 'oslc.select=xownercode&oslc.where=xownercode="UNASSIGNED"');
      assert.ok(members.length > 0);
    });
    const missing = await t.app.inject({
      method: 'POST',
      url: `${ROOT}/os/mxapiasset?lean=1`,
      headers: { cookie, 'content-type': 'application/json' },
      payload: JSON.stringify({ assetnum: 'DBCFG4', siteid: 'BEDFORD', xownercode: null }),
    });
    assert.equal(reasonCode(missing), 'BMXAA4195E', missing.body);
  });

  test('non-structural changes apply without admin mode; structural ones still need it', async () => {
    await adminMode(false);
    await stage({
      objectname: 'ASSET',
      attributename: 'XSUPPLIERREF',
      changetype: 'CHANGE',
      title: 'Supplier reference',
      defaultvalue: 'none',
    });
    const applied = await apply();
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(json(applied).structural, false);
    await eventually(async () => {
      const schema = await request(other, 'GET', '/jsonschemas/mxapiasset');
      const properties = json(schema).properties as Record<string, Record<string, unknown>>;
      assert.equal(properties.xsupplierref?.title, 'Supplier reference');
    });
    const created = await other.inject({
      method: 'POST',
      url: `${ROOT}/os/mxapiasset?lean=1`,
      headers: { cookie: otherCookie, 'content-type': 'application/json', properties: 'xsupplierref' },
      payload: JSON.stringify({ assetnum: 'DBCFG5', siteid: 'BEDFORD' }),
    });
    assert.equal(json(created).xsupplierref, 'NONE', 'the default, upper case');

    // A change names only what it changes; an empty text clears the default.
    const createdWithDefault = async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: `${ROOT}/os/mxapiasset?lean=1`,
        headers: { cookie, 'content-type': 'application/json', properties: 'xsupplierref' },
        payload: JSON.stringify({ siteid: 'BEDFORD' }),
      });
      assert.equal(response.statusCode, 201, response.body);
      return json(response).xsupplierref;
    };
    await stage({
      objectname: 'ASSET',
      attributename: 'XSUPPLIERREF',
      changetype: 'CHANGE',
      title: 'Supplier',
    });
    assert.equal((await apply()).statusCode, 200);
    assert.equal(await createdWithDefault(), 'NONE');
    await stage({
      objectname: 'ASSET',
      attributename: 'XSUPPLIERREF',
      changetype: 'CHANGE',
      defaultvalue: '',
    });
    assert.equal((await apply()).statusCode, 200);
    assert.equal(await createdWithDefault(), undefined);
    assert.equal(t.services.metadata.object('ASSET').attributes.get('xsupplierref')?.title, 'Supplier');

    await stage({ objectname: 'ASSET', attributename: 'XSUPPLIERREF', changetype: 'CHANGE', length: 20 });
    assert.equal(reasonCode(await apply()), 'BMXAA0578E');
    await request(
      t.app,
      'DELETE',
      '/os/mxapimaxattributecfg/' +
        String((await pending())[0]!.href)
          .split('/')
          .pop(),
    );
    assert.deepEqual(await pending(), []);
  });

  test('a restart keeps the custom attributes; a removed one is gone everywhere', async () => {
    const restarted = await buildApp(testConfig({ EAS_SERVER_NAME: 'RESTARTED' }), t.storage);
    await restarted.app.ready();
    try {
      const attribute = restarted.services.metadata.object('ASSET').attributes.get('xcriticality');
      assert.equal(attribute?.title, 'Criticality rank');
      const restartedCookie = sessionCookie(
        await restarted.app.inject({ method: 'POST', url: `${ROOT}/login`, headers: maxauth('MAXADMIN') }),
      );
      const read = await restarted.app.inject({
        method: 'GET',
        url: `${ROOT}/os/mxapiasset?lean=1&oslc.select=assetnum,xcriticality&oslc.where=xcriticality=99`,
        headers: { cookie: restartedCookie },
      });
      assert.deepEqual(
        (json(read).member ?? []).map((member) => member.assetnum),
        ['DBCFG1'],
      );
    } finally {
      await restarted.app.close();
    }

    await adminMode(true);
    await stage({ objectname: 'ASSET', attributename: 'XINSPECTED', changetype: 'REMOVE' });
    assert.equal((await apply()).statusCode, 200);
    assert.ok(!(await columns('asset')).includes('xinspected'));
    await eventually(async () => {
      const { response } = await assets(other, 'oslc.where=xinspected="2026-03-04"');
      assert.equal(reasonCode(response), 'EAS0020E');
    });
    await adminMode(false);
  });

  test("the service API stages and applies inside a caller's transaction, which may roll it all back", async () => {
    const { dbconfig } = t.services;
    await adminMode(true);
    const rolledBack = new Error('the package deploy failed');
    await assert.rejects(
      t.storage.db.transaction().execute(async (transaction) => {
        await dbconfig.stageChanges(
          [{ objectname: 'WORKORDER', attributename: 'XPERMIT', changetype: 'ADD', maxtype: 'YORN' }],
          'MIGRATION',
          { transaction },
        );
        const result = await dbconfig.applyPending('MIGRATION', { transaction });
        assert.deepEqual(
          result.applied.map((change) => change.attributename),
          ['XPERMIT'],
        );
        throw rolledBack;
      }),
      rolledBack,
    );
    assert.ok(!(await columns('workorder')).includes('xpermit'));
    assert.deepEqual(await dbconfig.listPendingChanges(), []);

    await t.storage.db.transaction().execute(async (transaction) => {
      await dbconfig.stageChanges(
        [
          {
            objectname: 'WORKORDER',
            attributename: 'XPERMIT',
            changetype: 'ADD',
            maxtype: 'YORN',
            defaultvalue: 'N',
            required: true,
          },
        ],
        'MIGRATION',
        { transaction },
      );
      await dbconfig.applyPending('MIGRATION', { transaction });
    });
    await dbconfig.refresh();
    assert.ok((await columns('workorder')).includes('xpermit'));
    const custom = await dbconfig.listCustomAttributes();
    assert.deepEqual(
      custom.filter((row) => row.objectname === 'WORKORDER').map((row) => [row.attributename, row.changeby]),
      [['XPERMIT', 'MIGRATION']],
    );
    const response = await request(
      t.app,
      'GET',
      '/os/mxapiwodetail?lean=1&oslc.select=wonum,xpermit&oslc.where=xpermit=0&oslc.pageSize=1',
    );
    assert.equal(response.statusCode, 200, response.body);
    assert.equal((json(response).member ?? [])[0]?.xpermit, false);
    await adminMode(false);
  });
});
