import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../../test/helpers/app.js';

/**
 * The preview tells what the deploy will do (docs/migration.md, "Preview"): it runs the deploy's own checks in a
 * transaction it rolls back, so its counts are the deploy's, and it lists every record the deploy would refuse.
 * A deploy of data the target already holds changes nothing and says so.
 */
const admin = maxauth('MAXADMIN');

type PreviewObject = {
  objectstructure: string;
  add: string[];
  change: Array<{ key: string }>;
  delete: string[];
  unchanged: number;
  refused: Array<{ key: string; reason: string; remedy: string }>;
};

type RefusalGroup = {
  reasoncode: string;
  reason: string;
  remedy: string;
  count: number;
  objectstructures: Array<{ objectstructure: string; count: number }>;
  examples: string[];
};

async function post(app: TestApp, url: string, body: unknown) {
  return app.app.inject({
    method: 'POST',
    url: `/maximo/oslc${url}`,
    headers: admin,
    payload: body as object,
  });
}

/** A SNAPSHOT of `where`'s assets on the source, moved as a file to the target: the target's package id. */
async function moved(source: TestApp, target: TestApp, name: string, where: string): Promise<number> {
  const defined = await post(source, '/os/mxapidmpkgdef', {
    pkgdefname: name,
    type: 'SNAPSHOT',
    status: 'APPR',
    dmpkgdefcontent: [{ objectstructure: 'MXAPIASSET', whereclause: where, cfgdataorder: 1 }],
    dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
  });
  assert.equal(defined.statusCode, 201, defined.body);
  const created = await post(source, '/dm/create', { pkgdefname: name });
  assert.equal(created.statusCode, 200, created.body);
  const dmpackageid = json(created).dmpackageid as number;
  assert.equal((await post(source, '/dm/distribute', { pkgdefname: name, dmpackageid })).statusCode, 200);
  const file = await source.app.inject({
    method: 'GET',
    url: `/maximo/oslc/dm/download?dmpackagedef=${name}&dmpackageid=${dmpackageid}`,
    headers: admin,
  });
  const uploaded = await target.app.inject({
    method: 'POST',
    url: '/maximo/oslc/dm/upload?filename=package.zip',
    headers: { ...admin, 'content-type': 'application/zip' },
    payload: file.rawPayload,
  });
  assert.equal(uploaded.statusCode, 200, uploaded.body);
  return json(uploaded).dmpackageid as number;
}

async function preview(target: TestApp, pkgdefname: string, dmpackageid: number) {
  const response = await post(target, '/dm/preview', { pkgdefname, dmpackageid });
  assert.equal(response.statusCode, 200, response.body);
  return json(response) as unknown as {
    objects: PreviewObject[];
    structural: string[];
    adminmode: boolean;
    refusals: number;
    refusalgroups: RefusalGroup[];
    counts: { added: number; changed: number; unchanged: number; deleted: number; refused: number };
  };
}

async function deploy(target: TestApp, pkgdefname: string, dmpackageid: number): Promise<string> {
  const response = await post(target, '/dm/deploy', { pkgdefname, dmpackageid });
  assert.equal(response.statusCode, 200, response.body);
  return String(json(response).warningmsg);
}

/** Every row of the sites' assets and their children, with its rowstamp: what a deploy that changes nothing keeps. */
async function stamps(app: TestApp, siteid: string): Promise<unknown[]> {
  const rows = await sql<{ tablename: string; key: string; rowstamp: string }>`
    select 'asset' as tablename, assetnum as key, rowstamp::text as rowstamp from asset where siteid = ${siteid}
    union all select 'assetspec', assetnum || '/' || assetattrid, rowstamp::text from assetspec where siteid = ${siteid}
    union all select 'assetmeter', assetnum || '/' || metername, rowstamp::text from assetmeter where siteid = ${siteid}
    order by 1, 2`.execute(app.storage.db);
  return rows.rows;
}

describe('a preview that tells the truth', () => {
  let source: TestApp;
  let target: TestApp;

  before(async () => {
    [source, target] = await Promise.all([startTestApp(), startTestApp()]);
  });
  after(async () => {
    await Promise.all([source?.close(), target?.close()]);
  });

  test('one new and one changed asset with child rows: preview 1 add, 1 change; the deploy the same; a redeploy changes nothing', async () => {
    const site = 'BEDFORD';
    const before = await stamps(target, site);
    assert.ok(
      before.some((row) => (row as { tablename: string }).tablename !== 'asset'),
      'demo children',
    );
    const added = await post(source, '/os/mxapiasset?lean=1', {
      assetnum: 'TRUTH1',
      siteid: site,
      description: 'New on the source',
      assetspec: [{ assetattrid: 'ENCLOSURE', alnvalue: 'IP67' }],
    });
    assert.equal(added.statusCode, 201, added.body);
    const existing = await sql<{ assetnum: string; assetuid: number }>`
      select assetnum, assetuid from asset where siteid = ${site} order by assetnum limit 1`.execute(
      source.storage.db,
    );
    const changedAsset = existing.rows[0]!;
    const changed = await source.app.inject({
      method: 'POST',
      url: `/maximo/oslc/os/mxapiasset/${changedAsset.assetuid}?lean=1`,
      headers: { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
      payload: { description: 'Changed on the source' },
    });
    assert.equal(changed.statusCode, 204, changed.body);
    const total = Number(
      (
        await sql<{ count: number }>`select count(*)::int as count from asset where siteid = ${site}`.execute(
          source.storage.db,
        )
      ).rows[0]!.count,
    );

    const dmpackageid = await moved(source, target, 'TRUTHSNAP', `siteid="${site}"`);
    const planned = (await preview(target, 'TRUTHSNAP', dmpackageid)).objects[0]!;
    assert.deepEqual(planned.add, [`assetnum=TRUTH1, siteid=${site}`]);
    assert.deepEqual(
      planned.change.map((change) => change.key),
      [`assetnum=${changedAsset.assetnum}, siteid=${site}`],
    );
    assert.equal(planned.unchanged, total - 2);
    assert.deepEqual(planned.refused, []);
    assert.deepEqual(await stamps(target, site), before, 'the preview writes nothing');

    assert.match(
      await deploy(target, 'TRUTHSNAP', dmpackageid),
      new RegExp(`\\(1 added, 1 changed, ${total - 2} unchanged, 0 deleted\\)`),
    );
    const deployed = await stamps(target, site);
    const again = (await preview(target, 'TRUTHSNAP', dmpackageid)).objects[0]!;
    assert.deepEqual([again.add, again.change, again.unchanged], [[], [], total]);
    assert.match(
      await deploy(target, 'TRUTHSNAP', dmpackageid),
      new RegExp(`\\(0 added, 0 changed, ${total} unchanged, 0 deleted\\)`),
    );
    assert.deepEqual(await stamps(target, site), deployed, 'no row of an identical redeploy was written');
  });

  test('records naming a site the target lacks: each listed as refused before anything is written, grouped once with the remedy', async () => {
    const site = await post(source, '/os/mxapisite?lean=1', {
      siteid: 'FARAWAY',
      orgid: 'EAGLENA',
      description: 'Far away',
    });
    assert.equal(site.statusCode, 201, site.body);
    for (const assetnum of ['FAR1', 'FAR2']) {
      const response = await post(source, '/os/mxapiasset?lean=1', { assetnum, siteid: 'FARAWAY' });
      assert.equal(response.statusCode, 201, response.body);
    }
    const dmpackageid = await moved(source, target, 'FARSNAP', 'siteid="FARAWAY"');
    const planned = await preview(target, 'FARSNAP', dmpackageid);
    const refused = planned.objects[0]!.refused;
    assert.deepEqual(
      refused.map((entry) => entry.key),
      ['assetnum=FAR1, siteid=FARAWAY', 'assetnum=FAR2, siteid=FARAWAY'],
    );
    for (const entry of refused) assert.match(entry.reason, /FARAWAY/);
    for (const entry of refused) assert.match(entry.remedy, /site FARAWAY does not exist .*MXAPISITE/);
    assert.equal(planned.refusals, 2);
    assert.equal(planned.counts.refused, 2);
    // The two identical refusals are one group: the reason, the remedy once, the count.
    assert.equal(planned.refusalgroups.length, 1);
    const [group] = planned.refusalgroups;
    assert.equal(group!.reasoncode, 'BMXAA4153E');
    assert.equal(group!.count, 2);
    assert.deepEqual(group!.objectstructures, [{ objectstructure: 'MXAPIASSET', count: 2 }]);
    assert.equal(group!.reason, refused[0]!.reason);
    assert.match(group!.remedy, /create it here \(object structure MXAPISITE/);
    assert.deepEqual(group!.examples, [
      'MXAPIASSET assetnum=FAR1, siteid=FARAWAY',
      'MXAPIASSET assetnum=FAR2, siteid=FARAWAY',
    ]);
    assert.equal(planned.adminmode, false);
    const assets = await sql<{
      count: number;
    }>`select count(*)::int as count from asset where siteid = 'FARAWAY'`.execute(target.storage.db);
    assert.equal(assets.rows[0]!.count, 0);
  });
});
