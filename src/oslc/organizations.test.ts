import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../app.js';
import { deploymentIdentity } from '../system/deployment-identity.js';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';

/**
 * Setting up a target (docs/migration.md, "Setting up a target"): on a fresh deployment without the demo data an
 * administrator creates an organization (MXAPIORGANIZATION) and its site (MXAPISITE) through the API, then the
 * records of the site; a package can carry organizations and sites, which it deploys first; a record naming a site
 * the target lacks is refused with where to fix it; each deployment has a source identity of its own.
 */

const admin = maxauth('MAXADMIN');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Method = 'GET' | 'POST' | 'DELETE';

function request(
  app: TestApp,
  method: Method,
  url: string,
  payload?: Record<string, unknown>,
  headers: Record<string, string> = admin,
) {
  return app.app.inject({ method, url: `/maximo/oslc${url}`, headers, ...(payload && { payload }) });
}

async function create(app: TestApp, structure: string, body: Record<string, unknown>): Promise<Json> {
  const created = await request(app, 'POST', `/os/${structure}?lean=1`, body, { ...admin, properties: '*' });
  assert.equal(created.statusCode, 201, created.body);
  return { ...json(created), location: created.headers.location };
}

async function members(app: TestApp, structure: string, where: string, select = '*', headers = admin) {
  const response = await request(
    app,
    'GET',
    `/os/${structure}?lean=1&oslc.select=${select}&oslc.where=${encodeURIComponent(where)}`,
    undefined,
    headers,
  );
  assert.equal(response.statusCode, 200, response.body);
  return json(response).member ?? [];
}

async function identityOf(app: TestApp): Promise<{ id: string; source: string }> {
  const response = await request(app, 'GET', '/systeminfo?lean=1');
  assert.equal(response.statusCode, 200, response.body);
  return json(response).deployment as { id: string; source: string };
}

async function defineSnapshot(app: TestApp, name: string, content: Array<[string, string]>): Promise<void> {
  const response = await request(app, 'POST', '/os/mxapidmpkgdef', {
    pkgdefname: name,
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

/** create → distribute → download on the source, upload on the target: the target's package record. */
async function carry(source: TestApp, target: TestApp, pkgdefname: string): Promise<Json> {
  const created = await request(source, 'POST', '/dm/create', { pkgdefname });
  assert.equal(created.statusCode, 200, created.body);
  const dmpackageid = json(created).dmpackageid as number;
  const distributed = await request(source, 'POST', '/dm/distribute', { pkgdefname, dmpackageid });
  assert.equal(distributed.statusCode, 200, distributed.body);
  const file = await source.app.inject({
    method: 'GET',
    url: `/maximo/oslc/dm/download?dmpackagedef=${pkgdefname}&dmpackageid=${dmpackageid}`,
    headers: admin,
  });
  assert.equal(file.statusCode, 200, file.body);
  const uploaded = await target.app.inject({
    method: 'POST',
    url: '/maximo/oslc/dm/upload?filename=package.zip',
    headers: { ...admin, 'content-type': 'application/zip' },
    payload: file.rawPayload,
  });
  assert.equal(uploaded.statusCode, 200, uploaded.body);
  return { ...json(uploaded), created: json(created) };
}

describe('setting up a target: organizations, sites and the source identity', () => {
  let source: TestApp;
  let target: TestApp;

  before(async () => {
    [source, target] = await Promise.all([startTestApp(), startTestApp({}, { demo: false })]);
  });
  after(async () => {
    await Promise.all([source?.close(), target?.close()]);
  });

  test('a fresh deployment: organization, site, location and asset created, queried and updated through the API', async () => {
    assert.deepEqual(await members(target, 'mxapisite', 'siteid="LONDON"'), []);
    const orphan = await request(target, 'POST', '/os/mxapisite?lean=1', {
      siteid: 'LONDON',
      orgid: 'EAGLEUK',
    });
    assert.equal(orphan.statusCode, 400, orphan.body);
    assert.equal(json(orphan).Error?.reasonCode, 'BMXAA2661E');
    assert.equal(json(orphan).Error?.errorattrname, 'orgid');

    const organization = await create(target, 'mxapiorganization', {
      orgid: 'eagleuk',
      description: 'Eagle UK',
      itemsetid: 'SETUK',
    });
    assert.equal(organization.orgid, 'EAGLEUK');
    assert.equal(organization.basecurrency, 'USD', 'the default currency');
    assert.equal(organization.active, true);
    const site = await create(target, 'mxapisite', {
      siteid: 'LONDON',
      orgid: 'EAGLEUK',
      description: 'London',
    });
    assert.equal(site.orgid, 'EAGLEUK');
    await create(target, 'mxapioperloc', { location: 'LON100', siteid: 'LONDON', description: 'Plant room' });
    const asset = await create(target, 'mxapiasset', {
      assetnum: 'UK1',
      siteid: 'LONDON',
      location: 'LON100',
      description: 'Chiller',
    });
    assert.equal(asset.orgid, 'EAGLEUK', 'the organization filled from the site');

    const listed = await members(
      target,
      'mxapiorganization',
      'orgid="EAGLEUK"',
      'orgid,description,itemsetid',
    );
    assert.deepEqual(
      listed.map(({ orgid, description, itemsetid }) => ({ orgid, description, itemsetid })),
      [{ orgid: 'EAGLEUK', description: 'Eagle UK', itemsetid: 'SETUK' }],
    );
    const sites = await members(target, 'mxapisite', 'orgid="EAGLEUK"', 'siteid');
    assert.deepEqual(
      sites.map((member) => member.siteid),
      ['LONDON'],
    );
    // Served under the deployed systems' integration name too.
    assert.equal((await members(target, 'mxorganization', 'orgid="EAGLEUK"')).length, 1);

    const renamed = await request(
      target,
      'POST',
      `/os/mxapiorganization/${String(organization.location).split('/').pop()}?lean=1`,
      { description: 'Eagle United Kingdom' },
      { ...admin, 'x-method-override': 'PATCH' },
    );
    assert.equal(renamed.statusCode, 204, renamed.body);
    assert.equal(
      (await members(target, 'mxapiorganization', 'orgid="EAGLEUK"', 'description'))[0]?.description,
      'Eagle United Kingdom',
    );
    // A site stays in its organization: its records carry it.
    const moved = await request(
      target,
      'POST',
      `/os/mxapisite/${String(site.location).split('/').pop()}?lean=1`,
      { orgid: 'OTHER' },
      { ...admin, 'x-method-override': 'PATCH' },
    );
    assert.equal(moved.statusCode, 400, moved.body);
    assert.equal(json(moved).Error?.reasonCode, 'EAS0012E');
    // An organization with sites cannot go.
    const gone = await request(
      target,
      'DELETE',
      `/os/mxapiorganization/${String(organization.location).split('/').pop()}`,
    );
    assert.equal(gone.statusCode, 400, gone.body);
    assert.equal(json(gone).Error?.reasonCode, 'EAS0013E');
    assert.equal((await members(target, 'mxapiorganization', 'orgid="EAGLEUK"')).length, 1);
  });

  test('rights: granted per structure as for any other; the alias names the same structure', async () => {
    const wilson = maxauth('WILSON');
    const refused = await request(source, 'GET', '/os/mxapiorganization?lean=1', undefined, wilson);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(json(refused).Error?.reasonCode, 'BMXAA9301E');
    const group = await create(source, 'mxapigroup', {
      groupname: 'ORGREAD',
      groupuser: [{ userid: 'WILSON' }],
      osauth: [{ objectstructure: 'MXORGANIZATION', canread: true }],
    });
    assert.ok(group.groupname);
    const rights = await members(source, 'mxapigroup', 'groupname="ORGREAD"', 'osauth{objectstructure}');
    assert.deepEqual(
      (rights[0]?.osauth as Array<{ objectstructure: string }>).map((right) => right.objectstructure),
      ['MXAPIORGANIZATION'],
    );
    const read = await members(source, 'mxapiorganization', 'orgid="EAGLENA"', 'orgid', wilson);
    assert.deepEqual(
      read.map((member) => member.orgid),
      ['EAGLENA'],
    );
    const write = await request(
      source,
      'POST',
      '/os/mxapiorganization?lean=1',
      { orgid: 'NOPE', itemsetid: 'SET1' },
      wilson,
    );
    assert.equal(write.statusCode, 400, write.body);
    assert.equal(json(write).Error?.reasonCode, 'BMXAA9301E');
  });

  test('a record naming a site the target lacks: refused with where to fix it, nothing written', async () => {
    await create(source, 'mxapiasset', { assetnum: 'SETNA1', siteid: 'NASHUA', description: 'Nashua pump' });
    await defineSnapshot(source, 'SETNASHUA', [['MXAPIASSET', 'assetnum="SETNA1"']]);
    const received = await carry(source, target, 'SETNASHUA');
    const deployed = await request(target, 'POST', '/dm/deploy', {
      pkgdefname: 'SETNASHUA',
      dmpackageid: received.dmpackageid,
    });
    assert.equal(deployed.statusCode, 400, deployed.body);
    const error = json(deployed).Error!;
    assert.equal(error.reasonCode, 'EAS0165E');
    const message = String(error.message);
    assert.match(message, /assetnum=SETNA1, siteid=NASHUA of MXAPIASSET/);
    assert.match(
      message,
      /The site NASHUA does not exist on this deployment: create it here \(object structure MXAPISITE, its organization first through MXAPIORGANIZATION\), or add it to the package ahead of the records that name it/,
    );
    assert.doesNotMatch(message, /recreate the package/);
    assert.deepEqual(await members(target, 'mxapiasset', 'assetnum="SETNA1"'), []);
  });

  /** The demo package (Bedford locations then assets) received by the target before it had the Bedford site. */
  let demoPackage: { dmpackageid: number; locations: number; assets: number } | undefined;

  test('the demo package moved to a fresh deployment: refused naming the missing site, nothing written', async () => {
    const count = async (app: TestApp, structure: string) => {
      const answer = await request(
        app,
        'GET',
        `/os/${structure}?lean=1&count=1&oslc.where=siteid%3D%22BEDFORD%22`,
      );
      return json(answer).totalCount as number;
    };
    const received = await carry(source, target, 'DEMOSNAP');
    const deployed = await request(target, 'POST', '/dm/deploy', {
      pkgdefname: 'DEMOSNAP',
      dmpackageid: received.dmpackageid,
    });
    assert.equal(deployed.statusCode, 400, deployed.body);
    assert.match(
      String(json(deployed).Error?.message),
      /The site BEDFORD does not exist on this deployment: create it here \(object structure MXAPISITE/,
    );
    assert.deepEqual([await count(target, 'mxapioperloc'), await count(target, 'mxapiasset')], [0, 0]);
    demoPackage = {
      dmpackageid: received.dmpackageid as number,
      locations: await count(source, 'mxapioperloc'),
      assets: await count(source, 'mxapiasset'),
    };
    assert.ok(demoPackage.assets > 0);
  });

  test('a package carrying an organization and a site deploys them before the records that name them', async () => {
    await create(source, 'mxapioperloc', {
      location: 'SETLOC',
      siteid: 'BEDFORD',
      description: 'Setup room',
    });
    await create(source, 'mxapiasset', {
      assetnum: 'SETA1',
      siteid: 'BEDFORD',
      location: 'SETLOC',
      description: 'Moved with its site',
    });
    // Listed last in the definition; the package carries them first.
    await defineSnapshot(source, 'SETBEDFORD', [
      ['MXAPIOPERLOC', 'location="SETLOC"'],
      ['MXAPIASSET', 'assetnum="SETA1"'],
      ['MXAPISITE', 'siteid="BEDFORD"'],
      ['MXORGANIZATION', 'orgid="EAGLENA"'],
    ]);
    assert.deepEqual(await members(target, 'mxapiorganization', 'orgid="EAGLENA"'), []);
    const received = await carry(source, target, 'SETBEDFORD');
    const preview = await request(target, 'POST', '/dm/preview', {
      pkgdefname: 'SETBEDFORD',
      dmpackageid: received.dmpackageid,
    });
    assert.equal(preview.statusCode, 200, preview.body);
    assert.deepEqual(
      (json(preview).objects as Array<{ objectstructure: string }>).map((entry) => entry.objectstructure),
      ['MXAPIORGANIZATION', 'MXAPISITE', 'MXAPIOPERLOC', 'MXAPIASSET'],
    );
    const deployed = await request(target, 'POST', '/dm/deploy', {
      pkgdefname: 'SETBEDFORD',
      dmpackageid: received.dmpackageid,
    });
    assert.equal(deployed.statusCode, 200, deployed.body);

    const pick = (rows: Json[], names: string[]) =>
      rows.map((row) => Object.fromEntries(names.map((name) => [name, row[name]])));
    const organization = ['orgid', 'description', 'itemsetid', 'basecurrency', 'active'];
    assert.deepEqual(
      pick(await members(target, 'mxapiorganization', 'orgid="EAGLENA"'), organization),
      pick(await members(source, 'mxapiorganization', 'orgid="EAGLENA"'), organization),
    );
    const site = ['siteid', 'orgid', 'description', 'active'];
    assert.deepEqual(
      pick(await members(target, 'mxapisite', 'siteid="BEDFORD"'), site),
      pick(await members(source, 'mxapisite', 'siteid="BEDFORD"'), site),
    );
    const asset = ['assetnum', 'siteid', 'orgid', 'location', 'description'];
    assert.deepEqual(pick(await members(target, 'mxapiasset', 'assetnum="SETA1"'), asset), [
      {
        assetnum: 'SETA1',
        siteid: 'BEDFORD',
        orgid: 'EAGLENA',
        location: 'SETLOC',
        description: 'Moved with its site',
      },
    ]);
  });

  test('the demo package refused before deploys once its organization and site exist', async () => {
    assert.ok(demoPackage, 'the demo package was received');
    const deployed = await request(target, 'POST', '/dm/deploy', {
      pkgdefname: 'DEMOSNAP',
      dmpackageid: demoPackage.dmpackageid,
    });
    assert.equal(deployed.statusCode, 200, deployed.body);
    assert.match(
      String(json(deployed).warningmsg),
      new RegExp(
        `${demoPackage.locations} MXAPIOPERLOC, ${demoPackage.assets} MXAPIASSET \\(${demoPackage.locations + demoPackage.assets} added`,
      ),
    );
  });

  test('a location the target lacks: the refusal names it and the structure that creates it', async () => {
    await create(source, 'mxapioperloc', { location: 'SETLOC2', siteid: 'BEDFORD' });
    await create(source, 'mxapiasset', { assetnum: 'SETA2', siteid: 'BEDFORD', location: 'SETLOC2' });
    await defineSnapshot(source, 'SETLOCATION', [['MXAPIASSET', 'assetnum="SETA2"']]);
    const received = await carry(source, target, 'SETLOCATION');
    const deployed = await request(target, 'POST', '/dm/deploy', {
      pkgdefname: 'SETLOCATION',
      dmpackageid: received.dmpackageid,
    });
    assert.equal(deployed.statusCode, 400, deployed.body);
    assert.equal(json(deployed).Error?.reasonCode, 'EAS0165E');
    assert.match(
      String(json(deployed).Error?.message),
      /The location SETLOC2 does not exist on this deployment: create it here \(object structure MXAPIOPERLOC\)/,
    );
  });

  test('each deployment has a source identity of its own, in its packages, kept across restarts', async () => {
    const [sourceIdentity, targetIdentity] = await Promise.all([identityOf(source), identityOf(target)]);
    assert.match(sourceIdentity.id, UUID);
    assert.match(targetIdentity.id, UUID);
    assert.notEqual(sourceIdentity.id, targetIdentity.id);
    assert.notEqual(sourceIdentity.source, targetIdentity.source);
    assert.ok(sourceIdentity.source.endsWith(`(${sourceIdentity.id})`), sourceIdentity.source);

    await defineSnapshot(source, 'SETIDENTITY', [['MXAPIORGANIZATION', 'orgid="EAGLENA"']]);
    const definition = await members(source, 'mxapidmpkgdef', 'pkgdefname="SETIDENTITY"', 'source');
    assert.equal(definition[0]?.source, sourceIdentity.source);
    const received = await carry(source, target, 'SETIDENTITY');
    assert.equal(
      (received.created as Json).source,
      sourceIdentity.source,
      'the package record on the source',
    );
    assert.equal(received.source, sourceIdentity.source, 'the package record on the target names the source');

    // A restart: another app on the same database keeps the identity.
    const restarted = await buildApp(target.config, target.storage);
    try {
      await restarted.app.ready();
      const again = await restarted.app.inject({
        method: 'GET',
        url: '/maximo/oslc/systeminfo?lean=1',
        headers: admin,
      });
      assert.deepEqual((json(again).deployment as { id: string }).id, targetIdentity.id);
    } finally {
      await restarted.app.close();
    }
  });

  test('processes starting together on a database without an identity agree on one', async () => {
    await sql`delete from deploymentidentity`.execute(target.storage.db);
    const given = await Promise.all(Array.from({ length: 4 }, () => deploymentIdentity(target.storage.db)));
    assert.equal(new Set(given.map((identity) => identity.id)).size, 1);
    assert.match(given[0]!.id, UUID);
    const rows = await sql<{ n: number }>`select count(*)::int as n from deploymentidentity`.execute(
      target.storage.db,
    );
    assert.equal(rows.rows[0]?.n, 1);
  });

  test("an embedded database's identity is labelled by its machine and data directory", async () => {
    await sql`delete from deploymentidentity`.execute(target.storage.db);
    const given = await deploymentIdentity(target.storage.db, '/srv/eas/data');
    assert.equal(given.label, `${hostname()}:/srv/eas/data`);
    assert.equal(given.source, `${hostname()}:/srv/eas/data (${given.id})`);
    // Given once: a later start names no other place.
    assert.equal((await deploymentIdentity(target.storage.db, '/elsewhere')).label, given.label);
  });
});
