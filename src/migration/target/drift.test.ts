import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { json, maxauth, startTestApp, type TestApp } from '../../../test/helpers/app.js';

/**
 * The drift guard of CHANGE packages and CHANGE tracking of child collections (docs/migration.md, "Drift guard",
 * "CHANGE tracking"), between two deployments, each its own database.
 */
const admin = maxauth('MAXADMIN');

async function post(app: TestApp, url: string, body: unknown, headers: Record<string, string> = admin) {
  return app.app.inject({ method: 'POST', url: `/maximo/oslc${url}`, headers, payload: body as object });
}

/** Creates or changes records by their keys (SYNC with patchtype MERGE). */
async function sync(app: TestApp, structure: string, body: Record<string, unknown>): Promise<void> {
  const response = await post(app, `/os/${structure}?lean=1`, body, {
    ...admin,
    'x-method-override': 'MERGESYNC',
  });
  assert.ok([201, 204].includes(response.statusCode), response.body);
}

async function defineChange(app: TestApp, pkgdefname: string, structure: string): Promise<void> {
  const defined = await post(app, '/os/mxapidmpkgdef', {
    pkgdefname,
    type: 'CHANGE',
    status: 'APPR',
    dmpkgdefcontent: [{ objectstructure: structure, cfgdataorder: 1 }],
    dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
  });
  assert.equal(defined.statusCode, 201, defined.body);
  await activate(app, pkgdefname);
}

/** Switches the listener on (distributing switched it off). */
async function activate(app: TestApp, pkgdefname: string): Promise<void> {
  const on = await post(app, '/dm/toggleactive', { pkgdefname });
  assert.deepEqual(json(on), { pkgdefname, active: true });
}

/** create → distribute → download on the source, then upload on the target: the target's package id. */
async function moveToTarget(
  source: TestApp,
  target: TestApp,
  pkgdefname: string,
): Promise<{ dmpackageid: number; file: Buffer; progressstatus: string }> {
  const created = await post(source, '/dm/create', { pkgdefname });
  assert.equal(created.statusCode, 200, created.body);
  const id = json(created).dmpackageid as number;
  const distributed = await post(source, '/dm/distribute', { pkgdefname, dmpackageid: id });
  assert.equal(distributed.statusCode, 200, distributed.body);
  const download = await source.app.inject({
    method: 'GET',
    url: `/maximo/oslc/dm/download?dmpackagedef=${pkgdefname}&dmpackageid=${id}`,
    headers: admin,
  });
  assert.equal(download.statusCode, 200, download.body);
  const file = download.rawPayload;
  const uploaded = await upload(target, file);
  return {
    dmpackageid: uploaded.dmpackageid,
    file,
    progressstatus: String(json(created).progressstatus),
  };
}

async function upload(target: TestApp, file: Buffer): Promise<{ dmpackageid: number }> {
  const uploaded = await target.app.inject({
    method: 'POST',
    url: '/maximo/oslc/dm/upload?filename=package.zip',
    headers: { ...admin, 'content-type': 'application/zip' },
    payload: file,
  });
  assert.equal(uploaded.statusCode, 200, uploaded.body);
  return { dmpackageid: json(uploaded).dmpackageid as number };
}

async function descriptions(app: TestApp, itemnums: readonly string[]): Promise<Record<string, unknown>> {
  const where = `itemnum in [${itemnums.map((itemnum) => `"${itemnum}"`).join(',')}]`;
  const response = await app.app.inject({
    method: 'GET',
    url: `/maximo/oslc/os/mxapiitem?lean=1&oslc.select=itemnum,description&oslc.where=${encodeURIComponent(where)}`,
    headers: admin,
  });
  assert.equal(response.statusCode, 200, response.body);
  return Object.fromEntries((json(response).member ?? []).map((row) => [row.itemnum, row.description]));
}

async function packageStatus(app: TestApp, dmpackageid: number): Promise<unknown> {
  const response = await app.app.inject({
    method: 'GET',
    url: `/maximo/oslc/os/mxapidmpackage?lean=1&oslc.select=status&oslc.where=dmpackageid=${dmpackageid}`,
    headers: admin,
  });
  return json(response).member?.[0]?.status;
}

async function deploy(target: TestApp, pkgdefname: string, dmpackageid: number, force?: boolean) {
  return post(target, '/dm/deploy', { pkgdefname, dmpackageid, ...(force !== undefined && { force }) });
}

/** Deletes an item, found by its number. */
async function removeItem(app: TestApp, itemnum: string): Promise<void> {
  const found = await app.app.inject({
    method: 'GET',
    url: `/maximo/oslc/os/mxapiitem?lean=1&oslc.select=itemnum&oslc.where=itemnum="${itemnum}"`,
    headers: admin,
  });
  const removed = await app.app.inject({
    method: 'POST',
    url: new URL(String(json(found).member?.[0]?.href)).pathname,
    headers: { ...admin, 'x-method-override': 'DELETE' },
  });
  assert.equal(removed.statusCode, 204, removed.body);
}

interface PreviewObject {
  objectstructure: string;
  add: string[];
  change: Array<{ key: string }>;
  delete: string[];
  drift: string[];
}

async function preview(target: TestApp, pkgdefname: string, dmpackageid: number): Promise<PreviewObject> {
  const response = await post(target, '/dm/preview', { pkgdefname, dmpackageid });
  assert.equal(response.statusCode, 200, response.body);
  return (json(response).objects as PreviewObject[])[0]!;
}

/** A zip's entries, read whole (test packages are small). */
async function unzip(file: Buffer): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(file, { lazyEntries: true }, (error, opened) =>
      error ? reject(error) : resolve(opened),
    ),
  );
  const entries = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, async (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        entries.set(entry.fileName, Buffer.concat(chunks));
        zip.readEntry();
      });
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return entries;
}

/** The package as a source of the first format would have written it: version 1, no drift hashes. */
async function asFormatVersion1(file: Buffer): Promise<Buffer> {
  const entries = await unzip(file);
  const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8')) as {
    formatVersion: number;
    package: string;
    entries: Array<Record<string, unknown>>;
  };
  manifest.formatVersion = 1;
  manifest.package = `${manifest.package}V1`;
  const zip = new yazl.ZipFile();
  for (const entry of manifest.entries) {
    const lines = entries
      .get(String(entry.name))!
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const { _expected: _drop, ...record } = JSON.parse(line) as Record<string, unknown>;
        return `${JSON.stringify(record)}\n`;
      });
    const data = Buffer.from(lines.join(''));
    delete entry.expectedattributes;
    delete entry.expectedchildren;
    entry.bytes = data.length;
    entry.sha256 = createHash('sha256').update(data).digest('hex');
    zip.addBuffer(data, String(entry.name));
  }
  zip.addBuffer(Buffer.from(JSON.stringify(manifest)), 'manifest.json');
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('drift guard and child tracking of CHANGE packages between two deployments', () => {
  let source: TestApp;
  let target: TestApp;

  before(async () => {
    [source, target] = await Promise.all([startTestApp(), startTestApp()]);
  });
  after(async () => {
    await Promise.all([source?.close(), target?.close()]);
  });

  test('a record changed on the target refuses the deploy, nothing written; force overwrites; in step deploys', async () => {
    await defineChange(source, 'DRIFTCHG', 'MXAPIITEM');
    for (const itemnum of ['DRIFT1', 'DRIFT2', 'DRIFT3'])
      await sync(source, 'mxapiitem', { itemnum, itemsetid: 'SET1', description: `${itemnum} v1` });
    const first = await moveToTarget(source, target, 'DRIFTCHG');
    assert.match(first.progressstatus, /3 MXAPIITEM/);
    const added = await preview(target, 'DRIFTCHG', first.dmpackageid);
    assert.deepEqual(added.drift, [], 'records to add are never drift');
    const deployed = await deploy(target, 'DRIFTCHG', first.dmpackageid);
    assert.equal(deployed.statusCode, 200, deployed.body);

    // The next period: both records change on the source, one of them also on the target.
    await activate(source, 'DRIFTCHG');
    await sync(source, 'mxapiitem', { itemnum: 'DRIFT1', itemsetid: 'SET1', description: 'DRIFT1 v2' });
    await sync(source, 'mxapiitem', { itemnum: 'DRIFT2', itemsetid: 'SET1', description: 'DRIFT2 v2' });
    await sync(target, 'mxapiitem', {
      itemnum: 'DRIFT1',
      itemsetid: 'SET1',
      description: 'changed on target',
    });
    const second = await moveToTarget(source, target, 'DRIFTCHG');
    const previewed = await preview(target, 'DRIFTCHG', second.dmpackageid);
    assert.deepEqual(previewed.drift, ['itemnum=DRIFT1, itemsetid=SET1']);

    const refused = await deploy(target, 'DRIFTCHG', second.dmpackageid);
    assert.equal(refused.statusCode, 409, refused.body);
    const error = json(refused).Error!;
    assert.equal(error.reasonCode, 'EAS0169E');
    assert.equal(error.errattrvalue, 'itemnum=DRIFT1, itemsetid=SET1');
    assert.equal(error.errorobjpath, 'mxapiitem');
    assert.match(String(error.message), /MXAPIITEM/);
    assert.match(String(error.message), /1 record\(s\) drifted/);
    assert.deepEqual(await descriptions(target, ['DRIFT1', 'DRIFT2']), {
      DRIFT1: 'changed on target',
      DRIFT2: 'DRIFT2 v1',
    });
    assert.equal(await packageStatus(target, second.dmpackageid), 'DEPLOY_ERROR');

    const forced = await deploy(target, 'DRIFTCHG', second.dmpackageid, true);
    assert.equal(forced.statusCode, 200, forced.body);
    assert.deepEqual(await descriptions(target, ['DRIFT1', 'DRIFT2']), {
      DRIFT1: 'DRIFT1 v2',
      DRIFT2: 'DRIFT2 v2',
    });
    assert.equal(await packageStatus(target, second.dmpackageid), 'DEPLOYED');

    // In step again: a change, a deletion of a row the target still has, one of a row it already lost, an addition;
    // DRIFT2 (not written in this period) is carried again and expected as the source holds it now.
    await activate(source, 'DRIFTCHG');
    await sync(source, 'mxapiitem', { itemnum: 'DRIFT1', itemsetid: 'SET1', description: 'DRIFT1 v3' });
    await sync(source, 'mxapiitem', { itemnum: 'DRIFT4', itemsetid: 'SET1', description: 'DRIFT4 v1' });
    for (const app of [source, target]) await removeItem(app, 'DRIFT3');
    const third = await moveToTarget(source, target, 'DRIFTCHG');
    const planned = await preview(target, 'DRIFTCHG', third.dmpackageid);
    assert.deepEqual(planned.drift, []);
    assert.deepEqual(planned.add, ['itemnum=DRIFT4, itemsetid=SET1']);
    const inStep = await deploy(target, 'DRIFTCHG', third.dmpackageid);
    assert.equal(inStep.statusCode, 200, inStep.body);
    assert.deepEqual(await descriptions(target, ['DRIFT1', 'DRIFT2', 'DRIFT3', 'DRIFT4']), {
      DRIFT1: 'DRIFT1 v3',
      DRIFT2: 'DRIFT2 v2',
      DRIFT4: 'DRIFT4 v1',
    });

    // The same CHANGE package as a source of the first format writes it (no hashes) deploys over drift, as before.
    await sync(target, 'mxapiitem', { itemnum: 'DRIFT1', itemsetid: 'SET1', description: 'changed again' });
    const drifting = await preview(target, 'DRIFTCHG', third.dmpackageid);
    assert.deepEqual(drifting.drift, ['itemnum=DRIFT1, itemsetid=SET1']);
    const older = await upload(target, await asFormatVersion1(third.file));
    assert.deepEqual((await preview(target, 'DRIFTCHG', older.dmpackageid)).drift, []);
    const olderDeployed = await deploy(target, 'DRIFTCHG', older.dmpackageid);
    assert.equal(olderDeployed.statusCode, 200, olderDeployed.body);
    assert.deepEqual(await descriptions(target, ['DRIFT1']), { DRIFT1: 'DRIFT1 v3' });
  });

  test('a deletion of a record changed on the target is drift', async () => {
    await defineChange(source, 'DRIFTDEL', 'MXAPIITEM');
    await sync(source, 'mxapiitem', { itemnum: 'DRIFTD1', itemsetid: 'SET1', description: 'to delete' });
    const first = await moveToTarget(source, target, 'DRIFTDEL');
    assert.equal((await deploy(target, 'DRIFTDEL', first.dmpackageid)).statusCode, 200);
    await activate(source, 'DRIFTDEL');
    await removeItem(source, 'DRIFTD1');
    await sync(target, 'mxapiitem', { itemnum: 'DRIFTD1', itemsetid: 'SET1', description: 'kept on target' });
    const second = await moveToTarget(source, target, 'DRIFTDEL');
    assert.deepEqual((await preview(target, 'DRIFTDEL', second.dmpackageid)).drift, [
      'itemnum=DRIFTD1, itemsetid=SET1',
    ]);
    const refused = await deploy(target, 'DRIFTDEL', second.dmpackageid);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.deepEqual(await descriptions(target, ['DRIFTD1']), { DRIFTD1: 'kept on target' });
  });

  test('a value cleared on the source is cleared on the target, and the next package finds them in step', async () => {
    await defineChange(source, 'DRIFTNULL', 'MXAPIITEM');
    await sync(source, 'mxapiitem', { itemnum: 'DRIFTN1', itemsetid: 'SET1', description: 'to clear' });
    const first = await moveToTarget(source, target, 'DRIFTNULL');
    assert.equal((await deploy(target, 'DRIFTNULL', first.dmpackageid)).statusCode, 200);

    await activate(source, 'DRIFTNULL');
    await sync(source, 'mxapiitem', { itemnum: 'DRIFTN1', itemsetid: 'SET1', description: null });
    assert.equal((await descriptions(source, ['DRIFTN1'])).DRIFTN1, undefined, 'cleared on the source');
    const second = await moveToTarget(source, target, 'DRIFTNULL');
    const planned = await preview(target, 'DRIFTNULL', second.dmpackageid);
    assert.deepEqual(
      planned.change.map((change) => change.key),
      ['itemnum=DRIFTN1, itemsetid=SET1'],
    );
    const deployed = await deploy(target, 'DRIFTNULL', second.dmpackageid);
    assert.equal(deployed.statusCode, 200, deployed.body);
    assert.equal((await descriptions(target, ['DRIFTN1'])).DRIFTN1, undefined, 'cleared on the target');

    await activate(source, 'DRIFTNULL');
    await sync(source, 'mxapiitem', { itemnum: 'DRIFTN1', itemsetid: 'SET1', description: 'filled again' });
    const third = await moveToTarget(source, target, 'DRIFTNULL');
    assert.deepEqual((await preview(target, 'DRIFTNULL', third.dmpackageid)).drift, []);
    assert.equal((await deploy(target, 'DRIFTNULL', third.dmpackageid)).statusCode, 200);
    assert.deepEqual(await descriptions(target, ['DRIFTN1']), { DRIFTN1: 'filled again' });
  });

  test('a write of a child collection row alone carries its root, with its children, in the next CHANGE package', async () => {
    const domain = { domainid: 'DRIFTDOM', domaintype: 'ALN', maxtype: 'UPPER', length: 10 };
    for (const app of [source, target])
      await sync(app, 'mxapidomain', { ...domain, alndomain: [{ value: 'A', description: 'First' }] });
    await defineChange(source, 'DRIFTDOMS', 'MXAPIDOMAIN');
    // The value alone, through the structure whose root is the value (MAXDOMAIN itself is not written).
    const value = await post(source, '/os/mxapialndomain?lean=1', {
      domainid: 'DRIFTDOM',
      value: 'B',
      description: 'Second',
    });
    assert.equal(value.statusCode, 201, value.body);
    const moved = await moveToTarget(source, target, 'DRIFTDOMS');
    assert.match(moved.progressstatus, /1 MXAPIDOMAIN/);
    const planned = await preview(target, 'DRIFTDOMS', moved.dmpackageid);
    assert.deepEqual(planned.drift, []);
    const deployed = await deploy(target, 'DRIFTDOMS', moved.dmpackageid);
    assert.equal(deployed.statusCode, 200, deployed.body);
    const read = await target.app.inject({
      method: 'GET',
      url: '/maximo/oslc/os/mxapidomain?lean=1&oslc.select=domainid,alndomain{value,description}&oslc.where=domainid="DRIFTDOM"',
      headers: admin,
    });
    const values = (json(read).member?.[0]?.alndomain as Array<Record<string, unknown>>)
      .map((row) => `${String(row.value)} ${String(row.description)}`)
      .sort();
    assert.deepEqual(values, ['A First', 'B Second']);
  });

  test('a child row changed on the target is drift; child writes on the source alone are not', async () => {
    const domain = { domainid: 'DRIFTKID', domaintype: 'ALN', maxtype: 'UPPER', length: 10 };
    const values = [
      { value: 'A', description: 'First' },
      { value: 'B', description: 'Second' },
    ];
    for (const app of [source, target]) await sync(app, 'mxapidomain', { ...domain, alndomain: values });
    await defineChange(source, 'DRIFTKIDS', 'MXAPIDOMAIN');
    await sync(source, 'mxapidomain', { ...domain, description: 'Root changed' });
    const first = await moveToTarget(source, target, 'DRIFTKIDS');
    assert.deepEqual((await preview(target, 'DRIFTKIDS', first.dmpackageid)).drift, [], 'children in step');
    assert.equal((await deploy(target, 'DRIFTKIDS', first.dmpackageid)).statusCode, 200);

    // Only a child row differs on the target: the root row alone would hash alike on both sides.
    await activate(source, 'DRIFTKIDS');
    await sync(source, 'mxapidomain', { ...domain, alndomain: [{ value: 'B', description: 'Second v2' }] });
    await sync(target, 'mxapidomain', { ...domain, alndomain: [{ value: 'A', description: 'Target' }] });
    const second = await moveToTarget(source, target, 'DRIFTKIDS');
    const drifted = (await preview(target, 'DRIFTKIDS', second.dmpackageid)).drift;
    assert.equal(drifted.length, 1);
    assert.match(drifted[0]!, /DRIFTKID/);
    const refused = await deploy(target, 'DRIFTKIDS', second.dmpackageid);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(json(refused).Error?.reasonCode, 'EAS0169E');
    assert.equal((await deploy(target, 'DRIFTKIDS', second.dmpackageid, true)).statusCode, 200);

    // In step again, a child row written alone on the source: its record is expected as it was before that write.
    await sync(target, 'mxapidomain', { ...domain, alndomain: [{ value: 'A', description: 'First' }] });
    await activate(source, 'DRIFTKIDS');
    await sync(source, 'mxapidomain', { ...domain, alndomain: [{ value: 'C', description: 'Third' }] });
    const third = await moveToTarget(source, target, 'DRIFTKIDS');
    assert.deepEqual((await preview(target, 'DRIFTKIDS', third.dmpackageid)).drift, []);
    assert.equal((await deploy(target, 'DRIFTKIDS', third.dmpackageid)).statusCode, 200);
  });

  test('a write two levels down (a group member under person → user → groups) marks the person', async () => {
    await defineChange(source, 'DRIFTPER', 'MXAPIPERUSER');
    const empty = await post(source, '/dm/create', { pkgdefname: 'DRIFTPER' });
    assert.match(String(json(empty).progressstatus), /0 MXAPIPERUSER/);
    const member = await post(
      source,
      '/os/mxapigroup?lean=1',
      { groupname: 'DRIFTGRP', description: 'Drift group', groupuser: [{ userid: 'WILSON' }] },
      { ...admin, 'x-method-override': 'MERGESYNC' },
    );
    assert.equal(member.statusCode, 201, member.body);
    const created = await post(source, '/dm/create', { pkgdefname: 'DRIFTPER' });
    assert.match(String(json(created).progressstatus), /1 MXAPIPERUSER/);
  });
});
