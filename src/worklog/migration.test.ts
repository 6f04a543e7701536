import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dynamicView } from '../db/schema.js';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * Work logs travel with their work orders in a SNAPSHOT package (docs/compatibility.md, "Work logs"): the package
 * carries the `worklog` child collection like any other, and the target's work order has the same logs. (A work
 * log's key is its unique id, which differs between deployments: a carried log equal to one the work order holds is
 * that log, docs/migration.md "Work logs and attachments".)
 */
const admin = maxauth('MAXADMIN');

async function post(app: TestApp, url: string, body: unknown) {
  return app.app.inject({
    method: 'POST',
    url: `/maximo/oslc${url}`,
    headers: admin,
    payload: body as object,
  });
}

async function worklogsOf(app: TestApp, wonum: string): Promise<unknown[]> {
  const response = await app.app.inject({
    method: 'GET',
    url: `/maximo/oslc/os/mxapiwodetail?lean=1&oslc.select=wonum,siteid,description,worklog{description,description_longdescription,logtype,clientviewable,class}&oslc.where=${encodeURIComponent(`wonum="${wonum}"`)}`,
    headers: admin,
  });
  assert.equal(response.statusCode, 200, response.body);
  return (json(response).member ?? []).map((member) => ({
    wonum: member.wonum,
    siteid: member.siteid,
    description: member.description,
    worklog: ((member.worklog as Array<Record<string, unknown>> | undefined) ?? [])
      .map(({ href: _h, _rowstamp: _r, localref: _l, ...log }) => log)
      .sort((a, b) => String(a.description).localeCompare(String(b.description))),
  }));
}

describe('work logs in migration packages', () => {
  let source: TestApp;
  let target: TestApp;

  before(async () => {
    [source, target] = await Promise.all([startTestApp(), startTestApp()]);
  });
  after(async () => {
    await Promise.all([source?.close(), target?.close()]);
  });

  test('a SNAPSHOT package moves work orders with their work logs', async () => {
    const created = await post(source, '/os/mxapiwodetail?lean=1', {
      wonum: 'MIGWL1',
      siteid: 'BEDFORD',
      description: 'Moved with its logs',
      worklog: [
        { description: 'Checked the motor', logtype: 'WORK', description_longdescription: 'Bearings fine.' },
        { description: 'Told the tenant', logtype: 'UPDATE', clientviewable: true },
      ],
    });
    assert.equal(created.statusCode, 201, created.body);
    const definition = await post(source, '/os/mxapidmpkgdef', {
      pkgdefname: 'WLSNAP',
      type: 'SNAPSHOT',
      status: 'APPR',
      dmpkgdefcontent: [{ objectstructure: 'MXAPIWODETAIL', whereclause: 'wonum="MIGWL1"', cfgdataorder: 1 }],
      dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
    });
    assert.equal(definition.statusCode, 201, definition.body);
    const made = await post(source, '/dm/create', { pkgdefname: 'WLSNAP' });
    assert.equal(made.statusCode, 200, made.body);
    const dmpackageid = json(made).dmpackageid as number;
    const distributed = await post(source, '/dm/distribute', { pkgdefname: 'WLSNAP', dmpackageid });
    assert.equal(distributed.statusCode, 200, distributed.body);
    const download = await source.app.inject({
      method: 'GET',
      url: `/maximo/oslc/dm/download?dmpackagedef=WLSNAP&dmpackageid=${dmpackageid}`,
      headers: admin,
    });
    assert.equal(download.statusCode, 200, download.body);

    assert.deepEqual(await worklogsOf(target, 'MIGWL1'), []);
    const uploaded = await target.app.inject({
      method: 'POST',
      url: '/maximo/oslc/dm/upload?filename=WLSNAP.zip',
      headers: { ...admin, 'content-type': 'application/zip' },
      payload: download.rawPayload,
    });
    assert.equal(uploaded.statusCode, 200, uploaded.body);
    const received = json(uploaded).dmpackageid;
    const deployed = await post(target, '/dm/deploy', { pkgdefname: 'WLSNAP', dmpackageid: received });
    assert.equal(deployed.statusCode, 200, deployed.body);
    const moved = await worklogsOf(target, 'MIGWL1');
    assert.equal((moved[0] as { worklog: unknown[] }).worklog.length, 2);
    assert.deepEqual(moved, await worklogsOf(source, 'MIGWL1'));

    // The same package deployed again: the work order and its logs are left as they are, none added twice.
    const again = await post(target, '/dm/deploy', { pkgdefname: 'WLSNAP', dmpackageid: received });
    assert.equal(again.statusCode, 200, again.body);
    assert.match(String(json(again).warningmsg), /\(0 added, 0 changed, 1 unchanged, 0 deleted\)/);
    assert.deepEqual(await worklogsOf(target, 'MIGWL1'), moved);
  });

  test('over a work order the target holds: logs it lacks added, its own kept; the back-out removes the added', async () => {
    for (const [app, logs] of [
      [source, ['Shared note', 'Source note']],
      [target, ['Shared note', 'Target note']],
    ] as const) {
      const created = await post(app, '/os/mxapiwodetail?lean=1', {
        wonum: 'MIGWL2',
        siteid: 'BEDFORD',
        description: app === source ? 'Source text' : 'Target text',
        worklog: logs.map((description) => ({ description, logtype: 'WORK' })),
      });
      assert.equal(created.statusCode, 201, created.body);
    }
    const storedIds = async () =>
      (
        await dynamicView(target.storage.db)
          .selectFrom('worklog')
          .select(['worklogid', 'description', 'createby', 'createdate'])
          .where('recordkey', '=', 'MIGWL2')
          .orderBy('worklogid')
          .execute()
      ).map((row) => ({ ...row, worklogid: Number(row.worklogid), createdate: String(row.createdate) }));
    const before = await storedIds();
    const definition = await post(source, '/os/mxapidmpkgdef', {
      pkgdefname: 'WLSNAP2',
      type: 'SNAPSHOT',
      status: 'APPR',
      dmpkgdefcontent: [{ objectstructure: 'MXAPIWODETAIL', whereclause: 'wonum="MIGWL2"', cfgdataorder: 1 }],
      dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
    });
    assert.equal(definition.statusCode, 201, definition.body);
    const received = await moveToTarget('WLSNAP2');
    const deployed = await post(target, '/dm/deploy', { pkgdefname: 'WLSNAP2', dmpackageid: received });
    assert.equal(deployed.statusCode, 200, deployed.body);
    const afterDeploy = await storedIds();
    assert.deepEqual(
      afterDeploy.map((row) => row.description),
      ['Shared note', 'Target note', 'Source note'],
    );
    // The logs the target held keep their identity, author and date.
    assert.deepEqual(afterDeploy.slice(0, 2), before);
    const again = await post(target, '/dm/deploy', { pkgdefname: 'WLSNAP2', dmpackageid: received });
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(await storedIds(), afterDeploy);

    const backedOut = await post(target, '/dm/backout', { pkgdefname: 'WLSNAP2', dmpackageid: received });
    assert.equal(backedOut.statusCode, 200, backedOut.body);
    assert.deepEqual(
      (await storedIds()).map((row) => row.description),
      ['Shared note', 'Target note'],
    );
    const [order] = (await worklogsOf(target, 'MIGWL2')) as Array<{ description: string }>;
    assert.equal(order?.description, 'Target text');
  });

  /** The definition's package created, downloaded and uploaded to the target: the target-side id. */
  async function moveToTarget(pkgdefname: string): Promise<number> {
    const made = await post(source, '/dm/create', { pkgdefname });
    assert.equal(made.statusCode, 200, made.body);
    const dmpackageid = json(made).dmpackageid as number;
    assert.equal((await post(source, '/dm/distribute', { pkgdefname, dmpackageid })).statusCode, 200);
    const download = await source.app.inject({
      method: 'GET',
      url: `/maximo/oslc/dm/download?dmpackagedef=${pkgdefname}&dmpackageid=${dmpackageid}`,
      headers: admin,
    });
    assert.equal(download.statusCode, 200, download.body);
    const uploaded = await target.app.inject({
      method: 'POST',
      url: `/maximo/oslc/dm/upload?filename=${pkgdefname}.zip`,
      headers: { ...admin, 'content-type': 'application/zip' },
      payload: download.rawPayload,
    });
    assert.equal(uploaded.statusCode, 200, uploaded.body);
    return json(uploaded).dmpackageid as number;
  }
});
