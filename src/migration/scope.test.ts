import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * What a package carries beyond records (docs/migration.md, "What migrates"): system properties, the rights of
 * security groups, and the values of a custom attribute the same package adds. Two deployments, each its own
 * database (two in-process apps), as in migration.test.ts.
 */
const admin = maxauth('MAXADMIN');
const SYSTEM = '/maximo/oslc/service/system';
const PROPERTIES = ['mxe.oslc.maxpagesize', 'mxe.oslc.idleexiry', 'mxe.oslc.mxapiasset.maxpagesize'];
const SECRET_PROPERTY = 'eas.test.secret';
const SECRET_VALUE = 'never-in-a-package';
const PROPERTY_WHERE = `propname in [${[...PROPERTIES, SECRET_PROPERTY].map((name) => `"${name}"`).join(',')}]`;

async function post(app: TestApp, url: string, body: unknown, headers: Record<string, string> = admin) {
  return app.app.inject({ method: 'POST', url: `/maximo/oslc${url}`, headers, payload: body as object });
}

async function get(app: TestApp, url: string, headers: Record<string, string> = admin) {
  return app.app.inject({ method: 'GET', url: `/maximo/oslc${url}`, headers });
}

async function setProperty(app: TestApp, propName: string, propValue: string): Promise<void> {
  const response = await app.app.inject({
    method: 'POST',
    url: `${SYSTEM}?action=wsmethod:setProperty`,
    headers: admin,
    payload: { propName, serverName: 'COMMON', propValue },
  });
  assert.equal(response.statusCode, 200, response.body);
}

/** The values every property applies in the answering process (getProperties). */
async function propertyValues(app: TestApp): Promise<Record<string, unknown>> {
  const response = await app.app.inject({
    method: 'GET',
    url: `${SYSTEM}?action=wsmethod:getProperties&propNames=${[...PROPERTIES, SECRET_PROPERTY].join(',')}`,
    headers: admin,
  });
  assert.equal(response.statusCode, 200, response.body);
  return json(response);
}

async function historyLength(app: TestApp, name: string): Promise<number> {
  const response = await app.app.inject({
    method: 'GET',
    url: `${SYSTEM}?action=wsmethod:getPropertyHistory&propName=${name}`,
    headers: admin,
  });
  assert.equal(response.statusCode, 200, response.body);
  return json(response).member?.length ?? 0;
}

/** An encrypted property, registered as a later migration would (none is seeded), with the process told of it. */
async function registerEncryptedProperty(app: TestApp): Promise<void> {
  await sql`insert into maxprop (propname, description, maxtype, globalonly, encrypted)
            values (${SECRET_PROPERTY}, 'A secret of this deployment', 'ALN', true, true)`.execute(
    app.storage.db,
  );
  app.storage.bus.deliverLocally('property', SECRET_PROPERTY);
  await app.services.properties.settled();
}

/** A group's rights as MXAPIGROUP answers them, without addresses and stamps. */
async function rightsOf(app: TestApp, groupname: string): Promise<unknown[]> {
  const response = await get(
    app,
    `/os/mxapigroup?lean=1&oslc.select=groupname,osauth{objectstructure,canread,caninsert,canupdate,candelete}&oslc.where=groupname="${groupname}"`,
  );
  assert.equal(response.statusCode, 200, response.body);
  const group = json(response).member?.[0];
  assert.ok(group, `group ${groupname}`);
  return ((group.osauth ?? []) as Array<Record<string, unknown>>)
    .map(({ href: _href, _rowstamp: _stamp, localref: _ref, ...right }) => right)
    .sort((a, b) => String(a.objectstructure).localeCompare(String(b.objectstructure)));
}

async function define(app: TestApp, pkgdefname: string, content: Array<[string, string]>): Promise<void> {
  const response = await post(app, '/os/mxapidmpkgdef', {
    pkgdefname,
    type: 'SNAPSHOT',
    status: 'APPR',
    dmpkgdefcontent: content.map(([objectstructure, whereclause], index) => ({
      objectstructure,
      whereclause,
      cfgdataorder: index + 1,
    })),
    dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
  });
  assert.equal(response.statusCode, 201, response.body);
}

/** create → distribute → download on the source, then upload on the target: the target-side package id. */
async function carry(source: TestApp, target: TestApp, pkgdefname: string) {
  const created = await post(source, '/dm/create', { pkgdefname });
  assert.equal(created.statusCode, 200, created.body);
  const dmpackageid = json(created).dmpackageid as number;
  const distributed = await post(source, '/dm/distribute', { pkgdefname, dmpackageid });
  assert.equal(distributed.statusCode, 200, distributed.body);
  const download = await get(source, `/dm/download?dmpackagedef=${pkgdefname}&dmpackageid=${dmpackageid}`);
  assert.equal(download.statusCode, 200, download.body);
  const uploaded = await target.app.inject({
    method: 'POST',
    url: `/maximo/oslc/dm/upload?filename=${pkgdefname}.zip`,
    headers: { ...admin, 'content-type': 'application/zip' },
    payload: download.rawPayload,
  });
  assert.equal(uploaded.statusCode, 200, uploaded.body);
  return { file: download.rawPayload, received: json(uploaded).dmpackageid as number };
}

async function session(app: TestApp): Promise<Record<string, string>> {
  const response = await app.app.inject({ method: 'POST', url: '/maximo/oslc/login', headers: admin });
  const cookie = ([] as string[])
    .concat(response.headers['set-cookie'] ?? [])
    .find((line) => line.startsWith('JSESSIONID='));
  assert.ok(cookie, response.body);
  return { cookie: cookie.split(';')[0]! };
}

async function adminMode(app: TestApp, cookie: Record<string, string>, on: boolean): Promise<void> {
  const response = on
    ? await post(app, '/adminmode/on', { numsessions: 5, logoutmin: 0 }, cookie)
    : await post(app, '/adminmode/off', {}, cookie);
  assert.equal(response.statusCode, 200, response.body);
  for (let attempt = 0; on && attempt < 100; attempt += 1) {
    if (json(await get(app, '/adminmode/state', cookie)).state === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (on) assert.fail('admin mode did not reach state 1');
}

describe('migration packages carry properties, rights and new custom attributes', () => {
  let source: TestApp;
  let target: TestApp;

  before(async () => {
    // Each deployment seals its encrypted properties with its own key.
    [source, target] = await Promise.all([
      startTestApp({ EAS_SECRET_KEY: 'source-secret-key' }),
      startTestApp({ EAS_SECRET_KEY: 'target-secret-key' }),
    ]);
    await Promise.all([registerEncryptedProperty(source), registerEncryptedProperty(target)]);
  });
  after(async () => {
    await Promise.all([source?.close(), target?.close()]);
  });

  test('properties and a group with rights: the target equals the source, deploying twice duplicates nothing', async () => {
    await setProperty(source, 'mxe.oslc.maxpagesize', '777');
    await setProperty(source, 'mxe.oslc.idleexiry', '600');
    await setProperty(source, 'mxe.oslc.mxapiasset.maxpagesize', '250');
    await setProperty(source, SECRET_PROPERTY, SECRET_VALUE);
    const group = await post(source, '/os/mxapigroup', {
      groupname: 'MIGGRP',
      description: 'Moved with its rights',
      groupuser: [{ userid: 'WILSON' }],
      osauth: [
        { objectstructure: 'MXAPIPERSON', canread: true },
        { objectstructure: 'MXAPISITE', canread: true, canupdate: true },
      ],
    });
    assert.equal(group.statusCode, 201, group.body);
    // On the target the group exists without rights, and its member's profile is already cached.
    const bare = await post(target, '/os/mxapigroup', {
      groupname: 'MIGGRP',
      groupuser: [{ userid: 'WILSON' }],
    });
    assert.equal(bare.statusCode, 201, bare.body);
    const refused = await get(target, '/os/mxapiperson?lean=1&oslc.select=personid', maxauth('WILSON'));
    assert.equal(json(refused).Error?.reasonCode, 'BMXAA9301E', refused.body);
    assert.notDeepEqual(await propertyValues(target), await propertyValues(source));

    await define(source, 'TESTPROPS', [
      ['MXAPIPROPERTY', PROPERTY_WHERE],
      ['MXAPIGROUP', 'groupname="MIGGRP"'],
    ]);
    const { file, received } = await carry(source, target, 'TESTPROPS');
    // No secret in the file: the encrypted property does not travel at all.
    assert.ok(!file.includes(SECRET_PROPERTY), 'the encrypted property is not in the package');
    const preview = async () => {
      const answer = await post(target, '/dm/preview', { pkgdefname: 'TESTPROPS', dmpackageid: received });
      assert.equal(answer.statusCode, 200, answer.body);
      return (json(answer).objects as Array<{ change: Array<{ key: string; attributes: unknown }> }>)[0]!
        .change;
    };
    assert.deepEqual(
      (await preview()).find((change) => change.key === 'propname=mxe.oslc.maxpagesize, servername=COMMON'),
      {
        key: 'propname=mxe.oslc.maxpagesize, servername=COMMON',
        attributes: { propvalue: { from: null, to: '777' } },
      },
    );
    const deployed = await post(target, '/dm/deploy', { pkgdefname: 'TESTPROPS', dmpackageid: received });
    assert.equal(deployed.statusCode, 200, deployed.body);
    assert.deepEqual(await preview(), [], 'nothing left to change');

    const values = await propertyValues(target);
    assert.deepEqual(
      PROPERTIES.map((name) => values[name]),
      ['777', '600', '250'],
    );
    assert.equal(values[SECRET_PROPERTY], '', "the target's secret is left as it was (none)");
    assert.deepEqual(await rightsOf(target, 'MIGGRP'), await rightsOf(source, 'MIGGRP'));
    const allowed = await get(target, '/os/mxapiperson?lean=1&oslc.select=personid', maxauth('WILSON'));
    assert.equal(allowed.statusCode, 200, 'the rights cache was refreshed');
    const histories = await Promise.all(PROPERTIES.map((name) => historyLength(target, name)));
    assert.deepEqual(histories, [1, 1, 1]);

    const again = await post(target, '/dm/deploy', { pkgdefname: 'TESTPROPS', dmpackageid: received });
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(await Promise.all(PROPERTIES.map((name) => historyLength(target, name))), histories);
    assert.deepEqual(await rightsOf(target, 'MIGGRP'), await rightsOf(source, 'MIGGRP'));
    const rows = await sql<{
      n: number;
    }>`select count(*)::int as n from osauth where groupname = 'MIGGRP'`.execute(target.storage.db);
    assert.equal(rows.rows[0]?.n, 2);
  });

  test('a refused record: none of the properties or rights of the package are applied', async () => {
    await setProperty(source, 'mxe.oslc.maxpagesize', '555');
    const groups = json(await get(source, '/os/mxapigroup?lean=1&oslc.where=groupname="MIGGRP"'));
    const href = String(groups.member?.[0]?.href);
    const patched = await source.app.inject({
      method: 'POST',
      url: `${new URL(href).pathname}?lean=1`,
      headers: { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
      payload: { osauth: [{ objectstructure: 'MXAPIWO', canread: true }] },
    });
    assert.equal(patched.statusCode, 204, patched.body);
    assert.equal(
      (await post(source, '/os/mxapioperloc', { location: 'MIGSLOC', siteid: 'NASHUA' })).statusCode,
      201,
    );
    const asset = await post(source, '/os/mxapiasset', {
      assetnum: 'MIGSA',
      siteid: 'NASHUA',
      location: 'MIGSLOC',
    });
    assert.equal(asset.statusCode, 201, asset.body);
    const valuesBefore = await propertyValues(target);
    const rightsBefore = await rightsOf(target, 'MIGGRP');
    const historyBefore = await historyLength(target, 'mxe.oslc.maxpagesize');

    await define(source, 'TESTALL', [
      ['MXAPIPROPERTY', PROPERTY_WHERE],
      ['MXAPIGROUP', 'groupname="MIGGRP"'],
      ['MXAPIASSET', 'assetnum="MIGSA"'],
    ]);
    const { received } = await carry(source, target, 'TESTALL');
    const deployed = await post(target, '/dm/deploy', { pkgdefname: 'TESTALL', dmpackageid: received });
    assert.equal(deployed.statusCode, 400, deployed.body);
    assert.equal(json(deployed).Error?.reasonCode, 'EAS0165E');
    assert.match(String(json(deployed).Error?.message), /MIGSA/);
    assert.deepEqual(await propertyValues(target), valuesBefore);
    assert.deepEqual(await rightsOf(target, 'MIGGRP'), rightsBefore);
    assert.equal(await historyLength(target, 'mxe.oslc.maxpagesize'), historyBefore);
  });

  test('a custom attribute new in the package: completedeploy writes its values, queryable at once', async () => {
    const sourceSession = await session(source);
    await adminMode(source, sourceSession, true);
    const staged = await post(
      source,
      '/os/mxapimaxattributecfg?lean=1',
      { objectname: 'ASSET', attributename: 'SCOPEMARK', changetype: 'ADD', maxtype: 'ALN', length: 20 },
      sourceSession,
    );
    assert.equal(staged.statusCode, 201, staged.body);
    assert.equal((await post(source, '/dbconfig/apply', {}, sourceSession)).statusCode, 200);
    await adminMode(source, sourceSession, false);
    const asset = await post(source, '/os/mxapiasset', {
      assetnum: 'MIGSC1',
      siteid: 'NASHUA',
      scopemark: 'FIRST',
    });
    assert.equal(asset.statusCode, 201, asset.body);
    await define(source, 'TESTNEWATTR', [['MXAPIASSET', 'assetnum="MIGSC1"']]);
    const { received } = await carry(source, target, 'TESTNEWATTR');
    const deployed = await post(target, '/dm/deploy', { pkgdefname: 'TESTNEWATTR', dmpackageid: received });
    assert.equal(json(deployed).Error?.reasonCode, 'BMXAA0578E', deployed.body);

    const targetSession = await session(target);
    await adminMode(target, targetSession, true);
    const completed = await post(
      target,
      '/dm/completedeploy',
      { pkgdefname: 'TESTNEWATTR', dmpackageid: received },
      targetSession,
    );
    assert.equal(completed.statusCode, 200, completed.body);
    await adminMode(target, targetSession, false);
    const read = await get(
      target,
      '/os/mxapiasset?lean=1&oslc.select=assetnum,scopemark&oslc.where=scopemark="FIRST"',
    );
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(
      json(read).member?.map(({ assetnum, scopemark }) => ({ assetnum, scopemark })),
      [{ assetnum: 'MIGSC1', scopemark: 'FIRST' }],
    );
  });

  test('properties are read through MXAPIPROPERTY, never written through it, and migrate in SNAPSHOT packages only', async () => {
    const read = await get(
      source,
      '/os/mxapiproperty?lean=1&oslc.select=propname,encrypted,maxpropvalue{servername,propvalue}&oslc.where=propname="mxe.oslc.maxpagesize"',
    );
    assert.equal(read.statusCode, 200, read.body);
    const property = json(read).member?.[0];
    assert.equal((property?.maxpropvalue as Array<{ propvalue: string }>)[0]?.propvalue, '555');
    const href = new URL(String(property?.href)).pathname;
    const writes = [
      await post(source, '/os/mxapiproperty', { propname: 'mxe.made.up' }),
      await source.app.inject({
        method: 'POST',
        url: href,
        headers: { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
        payload: { maxpropvalue: [{ servername: 'COMMON', propvalue: '1' }] },
      }),
      await source.app.inject({ method: 'DELETE', url: href, headers: admin }),
    ];
    for (const response of writes)
      assert.equal(json(response).Error?.reasonCode, 'BMXAA0024E', response.body);
    assert.equal((await propertyValues(source))['mxe.oslc.maxpagesize'], '555');

    const change = await post(source, '/os/mxapidmpkgdef', {
      pkgdefname: 'TESTPROPCHG',
      type: 'CHANGE',
      status: 'APPR',
      dmpkgdefcontent: [{ objectstructure: 'MXAPIPROPERTY' }],
    });
    assert.equal(change.statusCode, 201, change.body);
    const refused = await post(source, '/dm/toggleactive', { pkgdefname: 'TESTPROPCHG' });
    assert.equal(json(refused).Error?.reasonCode, 'EAS0166E', refused.body);
  });

  test('a right names an object structure of this service, stored under its own name', async () => {
    const unknown = await post(source, '/os/mxapigroup', {
      groupname: 'MIGBAD',
      osauth: [{ objectstructure: 'NOSUCHOS', canread: true }],
    });
    assert.equal(unknown.statusCode, 400, unknown.body);
    const alias = await post(source, '/os/mxapigroup', {
      groupname: 'MIGALIAS',
      osauth: [{ objectstructure: 'MXASSET', canread: true }],
    });
    assert.equal(alias.statusCode, 201, alias.body);
    assert.deepEqual(
      (await rightsOf(source, 'MIGALIAS')).map(
        (right) => (right as { objectstructure: string }).objectstructure,
      ),
      ['MXAPIASSET'],
    );
  });
});
