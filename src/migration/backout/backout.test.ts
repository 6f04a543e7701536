import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, type TestApp, startTestApp } from '../../../test/helpers/app.js';
import { columnsOf, dumpTables } from '../../../test/helpers/table-dump.js';
import {
  adminMode,
  backoutPost,
  builtPackage,
  deployed,
  post,
  session,
  type PackageEntry,
} from '../../../test/helpers/migration-packages.js';

/**
 * Back-out (docs/migration.md, "Back-out"): a package that adds, changes and deletes records with child rows, sets
 * system properties, changes a group's rights and adds a custom attribute, deployed and backed out on one deployment;
 * the affected tables compared row by row with a dump taken before the deploy.
 */

/**
 * The identity and stamps a restore gives anew (docs/migration.md, "Back-out"): unique ids of re-added rows, row
 * stamps, who and when, and the status date the write path sets when it adds a record again.
 */
const STAMPS = ['rowstamp', 'changedate', 'changeby'];

async function snapshot(app: TestApp) {
  const db = app.storage.db;
  return {
    rows: await dumpTables(db, [
      {
        table: 'asset',
        where: `assetnum like 'BO%'`,
        ignore: ['assetuid', 'assetid', 'statusdate', ...STAMPS],
      },
      { table: 'assetspec', where: `assetnum like 'BO%'`, ignore: ['assetspecid', ...STAMPS] },
      { table: 'maxgroup', where: `groupname = 'BOGRP'`, ignore: ['maxgroupid', ...STAMPS] },
      { table: 'osauth', where: `groupname = 'BOGRP'`, ignore: ['osauthid', ...STAMPS] },
      {
        table: 'maxpropvalue',
        where: `propname in ('mxe.oslc.maxpagesize', 'mxe.oslc.idleexiry')`,
        ignore: ['maxpropvalueid', ...STAMPS],
      },
      { table: 'maxattributecfg', where: `objectname = 'ASSET'`, ignore: STAMPS },
    ]),
    assetColumns: await columnsOf(db, 'asset'),
  };
}

const ALL_KINDS: PackageEntry[] = [
  {
    objectstructure: 'MXAPIPROPERTY',
    lines: [
      { propname: 'mxe.oslc.maxpagesize', maxpropvalue: [{ servername: 'COMMON', propvalue: '777' }] },
      { propname: 'mxe.oslc.idleexiry', maxpropvalue: [{ servername: 'COMMON', propvalue: '600' }] },
    ],
  },
  {
    objectstructure: 'MXAPIGROUP',
    lines: [
      {
        groupname: 'BOGRP',
        description: 'Rights changed by the package',
        osauth: [{ objectstructure: 'MXAPISITE', canread: true, canupdate: true }],
      },
    ],
  },
  {
    objectstructure: 'MXAPIASSET',
    lines: [
      {
        assetnum: 'BOADD',
        siteid: 'NASHUA',
        description: 'Added by the package',
        bomark: 'NEW',
        assetspec: [{ assetattrid: 'ENCLOSURE', alnvalue: 'IP67' }],
      },
      {
        assetnum: 'BOCHG',
        siteid: 'NASHUA',
        description: 'Changed by the package',
        bomark: 'CHANGED',
        assetspec: [{ assetattrid: 'ENCLOSURE', alnvalue: 'IP68' }],
      },
      { assetnum: 'BODEL', siteid: 'NASHUA', _action: 'Delete' },
    ],
  },
];

const BOMARK = {
  objectname: 'ASSET',
  attributename: 'BOMARK',
  maxtype: 'ALN',
  length: 20,
  scale: null,
  required: false,
  defaultvalue: null,
  domainid: null,
  title: 'Back-out mark',
};

/** The inverse package of a deploy: named by the package record, listed by MXAPIDMPACKAGE, downloadable. */
async function assertInverseListed(
  target: TestApp,
  cookie: Record<string, string>,
  pkgdefname: string,
  dmpackageid: number,
): Promise<void> {
  const record = json(
    await target.app.inject({
      method: 'GET',
      url: `/maximo/oslc/dm/package?pkgdefname=${pkgdefname}&dmpackageid=${dmpackageid}`,
      headers: cookie,
    }),
  );
  const inverseid = record.inversepackageid as number;
  assert.ok(inverseid > 0, JSON.stringify(record));
  assert.deepEqual(
    (record.history as Array<{ action: string }>).map((entry) => entry.action),
    ['DEPLOY'],
  );
  const listed = json(
    await target.app.inject({
      method: 'GET',
      url: `/maximo/oslc/os/mxapidmpackage?lean=1&oslc.select=dmpackageid,inverseof,status&oslc.where=inverseof=${dmpackageid}`,
      headers: cookie,
    }),
  );
  assert.deepEqual(
    listed.member?.map((member) => member.dmpackageid),
    [inverseid],
  );
  const download = await target.app.inject({
    method: 'GET',
    url: `/maximo/oslc/dm/download?dmpackagedef=${pkgdefname}&dmpackageid=${inverseid}`,
    headers: cookie,
  });
  assert.equal(download.statusCode, 200, download.body);
  assert.equal(download.headers['content-type'], 'application/zip');
}

describe('back-out of a deployed package', () => {
  let target: TestApp;

  before(async () => {
    target = await startTestApp();
    const fixtures = [
      post(target, '/os/mxapiasset?lean=1', {
        assetnum: 'BOCHG',
        siteid: 'NASHUA',
        description: 'As it was',
        assetspec: [
          { assetattrid: 'ENCLOSURE', alnvalue: 'IP54' },
          { assetattrid: 'COLOR', alnvalue: 'RED' },
        ],
      }),
      post(target, '/os/mxapiasset?lean=1', {
        assetnum: 'BODEL',
        siteid: 'NASHUA',
        description: 'Deleted by the package',
        assetspec: [{ assetattrid: 'ENCLOSURE', alnvalue: 'IP20' }],
      }),
      post(target, '/os/mxapigroup?lean=1', {
        groupname: 'BOGRP',
        description: 'Rights before',
        osauth: [{ objectstructure: 'MXAPIPERSON', canread: true }],
      }),
      post(target, '/os/mxapiasset?lean=1', {
        assetnum: 'BODRIFT',
        siteid: 'NASHUA',
        description: 'Original',
      }),
    ];
    for (const response of await Promise.all(fixtures)) assert.equal(response.statusCode, 201, response.body);
    const property = await target.app.inject({
      method: 'POST',
      url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
      headers: maxauth('MAXADMIN'),
      payload: { propName: 'mxe.oslc.maxpagesize', serverName: 'COMMON', propValue: '300' },
    });
    assert.equal(property.statusCode, 200, property.body);
  });
  after(async () => {
    await target?.close();
  });

  test('records, child rows, properties, rights and a custom attribute: backed out, the tables equal the snapshot', async () => {
    const cookie = await session(target);
    const before = await snapshot(target);
    const dmpackageid = await deployed(target, 'BOALL', ALL_KINDS, [BOMARK], cookie);
    const deployedState = await snapshot(target);
    assert.notDeepEqual(deployedState, before, 'the deploy changed the target');
    assert.ok(deployedState.assetColumns.includes('bomark'));

    await assertInverseListed(target, cookie, 'BOALL', dmpackageid);

    const preview = json(
      await post(target, '/dm/preview', { pkgdefname: 'BOALL', dmpackageid, backout: true }, cookie),
    );
    const assets = (preview.objects as Array<Record<string, unknown>>).find(
      (o) => o.objectstructure === 'MXAPIASSET',
    )!;
    assert.deepEqual(assets.add, ['assetnum=BODEL, siteid=NASHUA']);
    assert.deepEqual(assets.delete, ['assetnum=BOADD, siteid=NASHUA']);
    const change = (assets.change as Array<{ key: string; attributes: Record<string, unknown> }>)[0]!;
    assert.equal(change.key, 'assetnum=BOCHG, siteid=NASHUA');
    assert.deepEqual(change.attributes.description, { from: 'Changed by the package', to: 'As it was' });
    assert.deepEqual(preview.structural, ['REMOVE ASSET.BOMARK']);
    assert.equal(preview.driftcount, 0);
    assert.deepEqual(await snapshot(target), deployedState, 'the preview writes nothing');

    await adminMode(target, cookie, true);
    const backedOut = await backoutPost(target, 'BOALL', dmpackageid, cookie);
    assert.equal(backedOut.statusCode, 200, backedOut.body);
    await adminMode(target, cookie, false);
    assert.deepEqual(
      await snapshot(target),
      before,
      'the target equals the snapshot taken before the deploy',
    );

    const after = json(
      await target.app.inject({
        method: 'GET',
        url: `/maximo/oslc/dm/package?pkgdefname=BOALL&dmpackageid=${dmpackageid}`,
        headers: cookie,
      }),
    );
    assert.equal(after.status, 'BACKEDOUT');
    const history = after.history as Array<{ action: string; changeby: string; changedate: string }>;
    assert.deepEqual(
      history.map((entry) => [entry.action, entry.changeby]),
      [
        ['DEPLOY', 'MAXADMIN'],
        ['BACKOUT', 'MAXADMIN'],
      ],
    );
    assert.ok(Date.parse(history[1]!.changedate) >= Date.parse(history[0]!.changedate));
    const again = await backoutPost(target, 'BOALL', dmpackageid, cookie);
    assert.equal(again.statusCode, 409, again.body);
    assert.equal(json(again).Error?.reasonCode, 'EAS0181E');
  });

  test('a record changed after the deploy: refused with both values and nothing written; with force, restored', async () => {
    const cookie = await session(target);
    const entry: PackageEntry = {
      objectstructure: 'MXAPIASSET',
      lines: [
        { assetnum: 'BODRIFT', siteid: 'NASHUA', description: 'Deployed' },
        { assetnum: 'BODRIFT2', siteid: 'NASHUA', description: 'Added' },
      ],
    };
    const before = await snapshot(target);
    const dmpackageid = await deployed(target, 'BODRIFT', [entry], [], cookie);
    const assets = await target.app.inject({
      method: 'GET',
      url: '/maximo/oslc/os/mxapiasset?lean=1&oslc.where=assetnum="BODRIFT"',
      headers: cookie,
    });
    const href = new URL(String(json(assets).member?.[0]?.href)).pathname;
    const edited = await target.app.inject({
      method: 'POST',
      url: href,
      headers: { ...cookie, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
      payload: { description: 'Edited since' },
    });
    assert.equal(edited.statusCode, 204, edited.body);
    const drifted = await snapshot(target);

    const refused = await backoutPost(target, 'BODRIFT', dmpackageid, cookie);
    assert.equal(refused.statusCode, 409, refused.body);
    const error = json(refused).Error!;
    assert.equal(error.reasonCode, 'EAS0180E');
    assert.match(String(error.message), /assetnum=BODRIFT, siteid=NASHUA/);
    assert.match(String(error.message), /description deployed "Deployed", now "Edited since"/);
    assert.deepEqual(await snapshot(target), drifted, 'nothing written');
    const preview = json(
      await post(target, '/dm/preview', { pkgdefname: 'BODRIFT', dmpackageid, backout: true }, cookie),
    );
    assert.deepEqual(preview.drifts, [
      {
        objectstructure: 'MXAPIASSET',
        key: 'assetnum=BODRIFT, siteid=NASHUA',
        deployed: (preview.drifts as Array<{ deployed: unknown }>)[0]!.deployed,
        current: { assetnum: 'BODRIFT', siteid: 'NASHUA' },
        attributes: { description: { deployed: 'Deployed', current: 'Edited since' } },
      },
    ]);

    const forced = await backoutPost(target, 'BODRIFT', dmpackageid, cookie, true);
    assert.equal(forced.statusCode, 200, forced.body);
    assert.deepEqual(await snapshot(target), before, 'restored as before the deploy');
  });

  test('a package never deployed, or closed, has nothing to back out', async () => {
    const cookie = await session(target);
    const entry: PackageEntry = {
      objectstructure: 'MXAPIASSET',
      lines: [{ assetnum: 'BOCLOSE', siteid: 'NASHUA', description: 'Closed' }],
    };
    const uploaded = json(
      await target.app.inject({
        method: 'POST',
        url: '/maximo/oslc/dm/upload?filename=boclose.zip',
        headers: { ...cookie, 'content-type': 'application/zip' },
        payload: await builtPackage('BOCLOSE', [entry], []),
      }),
    );
    const dmpackageid = uploaded.dmpackageid as number;
    const early = await backoutPost(target, 'BOCLOSE', dmpackageid, cookie);
    assert.equal(json(early).Error?.reasonCode, 'EAS0162E', early.body);
    const alternate = await target.app.inject({
      method: 'POST',
      url: '/maximo/api/dm/backout',
      headers: cookie,
      payload: { pkgdefname: 'BOCLOSE', dmpackageid },
    });
    assert.equal(json(alternate).Error?.reasonCode, 'EAS0162E', `the /api root too: ${alternate.body}`);
    assert.equal(
      (await post(target, '/dm/deploy', { pkgdefname: 'BOCLOSE', dmpackageid }, cookie)).statusCode,
      200,
    );
    const inverse = json(
      await target.app.inject({
        method: 'GET',
        url: `/maximo/oslc/dm/package?pkgdefname=BOCLOSE&dmpackageid=${dmpackageid}`,
        headers: cookie,
      }),
    ).inversepackageid as number;
    assert.equal(
      (await post(target, '/dm/close', { pkgdefname: 'BOCLOSE', dmpackageid }, cookie)).statusCode,
      200,
    );
    const gone = await target.app.inject({
      method: 'GET',
      url: `/maximo/oslc/dm/package?pkgdefname=BOCLOSE&dmpackageid=${inverse}`,
      headers: cookie,
    });
    assert.equal(
      json(gone).Error?.reasonCode,
      'EAS0161E',
      'the inverse package went with the closed package',
    );
  });
});
