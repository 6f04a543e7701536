import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * Work logs travel with their work orders in a SNAPSHOT package (docs/compatibility.md, "Work logs"): the package
 * carries the `worklog` child collection like any other, and the target's work order has the same logs. (A work
 * log's key is its unique id, which differs between deployments: docs/compatibility.md says what a second deploy of
 * the same work order does.)
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
  });
});
