import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { CHUNK_BYTES } from '../../attachments/service.js';

/**
 * Attachments travel with their assets in a SNAPSHOT package (docs/migration.md, "Work logs and attachments"): the
 * deploy writes those a record lacks, a second deploy of the same package adds none, and the back-out removes
 * exactly the attachments the deploy added, with the values the deploy replaced restored.
 */
const admin = maxauth('MAXADMIN');
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

const post = (app: TestApp, url: string, body: unknown) =>
  app.app.inject({ method: 'POST', url: `/maximo/oslc${url}`, headers: admin, payload: body as object });

async function assetHref(app: TestApp, assetnum: string): Promise<string | undefined> {
  const response = await app.app.inject({
    method: 'GET',
    url: `/maximo/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,description&oslc.where=${encodeURIComponent(`assetnum="${assetnum}"`)}`,
    headers: admin,
  });
  assert.equal(response.statusCode, 200, response.body);
  const href = json(response).member?.[0]?.href;
  return href === undefined ? undefined : new URL(String(href)).pathname;
}

async function descriptionOf(app: TestApp, assetnum: string): Promise<unknown> {
  const response = await app.app.inject({
    method: 'GET',
    url: `/maximo/oslc/os/mxapiasset?lean=1&oslc.select=description&oslc.where=${encodeURIComponent(`assetnum="${assetnum}"`)}`,
    headers: admin,
  });
  return json(response).member?.[0]?.description;
}

/** The attachments of an asset: file name, description, doctype, content type, size, and the content's SHA-256. */
async function attachmentsOf(app: TestApp, assetnum: string) {
  const href = await assetHref(app, assetnum);
  if (!href) return undefined;
  const listed = await app.app.inject({ method: 'GET', url: `${href}/doclinks?lean=1`, headers: admin });
  assert.equal(listed.statusCode, 200, listed.body);
  const members = (json(listed).member ?? []) as Array<{
    href: string;
    describedBy: Record<string, unknown>;
  }>;
  const found = [];
  for (const member of members) {
    const content = await app.app.inject({
      method: 'GET',
      url: new URL(member.href).pathname,
      headers: admin,
    });
    assert.equal(content.statusCode, 200);
    const meta = member.describedBy;
    found.push({
      fileName: meta.fileName,
      description: meta.description,
      docType: meta.docType,
      contentType: meta.contentType,
      attachmentSize: meta.attachmentSize,
      checksum: meta.checksum,
      content: sha256(content.rawPayload),
      creator: meta.creator,
    });
  }
  return found.sort((a, b) => String(a.fileName).localeCompare(String(b.fileName)));
}

describe('attachments in migration packages', () => {
  let source: TestApp;
  let target: TestApp;
  const large = randomBytes(2 * CHUNK_BYTES + 4321);
  const small = Buffer.from('torque: 40 Nm\n');
  let received: number;

  before(async () => {
    [source, target] = await Promise.all([startTestApp(), startTestApp()]);
    // On the source: an asset with two attachments (a binary upload of three chunks, and a base64 body entry) and
    // one more asset with one; on the target, the first asset with other values and an attachment of its own.
    for (const [app, description] of [
      [source, 'Moved with its files'],
      [target, 'Here before'],
    ] as const) {
      const created = await post(app, '/os/mxapiasset?lean=1', {
        assetnum: 'MIGATT1',
        siteid: 'BEDFORD',
        description,
      });
      assert.equal(created.statusCode, 201, created.body);
    }
    const href = (await assetHref(source, 'MIGATT1'))!;
    const uploaded = await source.app.inject({
      method: 'POST',
      url: `${href}/doclinks`,
      headers: {
        ...admin,
        'content-type': 'application/pdf',
        slug: 'procedure.pdf',
        'x-document-meta': 'FILE/Attachments',
        'x-document-description': 'Maintenance procedure',
      },
      payload: large,
    });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    const merged = await source.app.inject({
      method: 'POST',
      url: `${href}?lean=1`,
      headers: { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
      payload: {
        doclinks: [{ urlname: 'torque.txt', description: 'Torques', documentdata: small.toString('base64') }],
      },
    });
    assert.equal(merged.statusCode, 204, merged.body);
    const second = await post(source, '/os/mxapiasset?lean=1', {
      assetnum: 'MIGATT2',
      siteid: 'BEDFORD',
      description: 'New on the target',
      doclinks: [{ urlname: 'photo.jpg', documentdata: randomBytes(1000).toString('base64') }],
    });
    assert.equal(second.statusCode, 201, second.body);
    const local = await target.app.inject({
      method: 'POST',
      url: `${(await assetHref(target, 'MIGATT1'))!}/doclinks`,
      headers: {
        ...admin,
        'content-type': 'text/plain',
        slug: 'local.txt',
        'x-document-meta': 'FILE/Attachments',
      },
      payload: 'kept on the target',
    });
    assert.equal(local.statusCode, 201, local.body);

    const definition = await post(source, '/os/mxapidmpkgdef', {
      pkgdefname: 'ATTSNAP',
      type: 'SNAPSHOT',
      status: 'APPR',
      dmpkgdefcontent: [
        { objectstructure: 'MXAPIASSET', whereclause: 'assetnum in ["MIGATT1","MIGATT2"]', cfgdataorder: 1 },
      ],
      dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
    });
    assert.equal(definition.statusCode, 201, definition.body);
    const made = await post(source, '/dm/create', { pkgdefname: 'ATTSNAP' });
    assert.equal(made.statusCode, 200, made.body);
    const dmpackageid = json(made).dmpackageid as number;
    assert.equal(
      (await post(source, '/dm/distribute', { pkgdefname: 'ATTSNAP', dmpackageid })).statusCode,
      200,
    );
    const download = await source.app.inject({
      method: 'GET',
      url: `/maximo/oslc/dm/download?dmpackagedef=ATTSNAP&dmpackageid=${dmpackageid}`,
      headers: admin,
    });
    assert.equal(download.statusCode, 200, download.body);
    const upload = await target.app.inject({
      method: 'POST',
      url: '/maximo/oslc/dm/upload?filename=ATTSNAP.zip',
      headers: { ...admin, 'content-type': 'application/zip' },
      payload: download.rawPayload,
    });
    assert.equal(upload.statusCode, 200, upload.body);
    received = json(upload).dmpackageid as number;
  });
  after(async () => {
    await Promise.all([source?.close(), target?.close()]);
  });

  test('the deploy writes the attachments byte-identical beside the ones the target holds', async () => {
    const before = await attachmentsOf(target, 'MIGATT1');
    const deployed = await post(target, '/dm/deploy', { pkgdefname: 'ATTSNAP', dmpackageid: received });
    assert.equal(deployed.statusCode, 200, deployed.body);
    assert.match(String(json(deployed).warningmsg), /\(1 added, 1 changed, 0 unchanged, 0 deleted\)/);
    const moved = (await attachmentsOf(source, 'MIGATT1'))!;
    assert.deepEqual(
      moved.map((attachment) => attachment.content).sort(),
      [sha256(large), sha256(small)].sort(),
    );
    assert.deepEqual(
      await attachmentsOf(target, 'MIGATT1'),
      [...before!, ...moved].sort((a, b) => String(a.fileName).localeCompare(String(b.fileName))),
    );
    assert.deepEqual(await attachmentsOf(target, 'MIGATT2'), await attachmentsOf(source, 'MIGATT2'));
    assert.equal(await descriptionOf(target, 'MIGATT1'), 'Moved with its files');
  });

  test('a second deploy of the same package adds no attachment and changes nothing', async () => {
    const first = await attachmentsOf(target, 'MIGATT1');
    const again = await post(target, '/dm/deploy', { pkgdefname: 'ATTSNAP', dmpackageid: received });
    assert.equal(again.statusCode, 200, again.body);
    assert.match(String(json(again).warningmsg), /\(0 added, 0 changed, 2 unchanged, 0 deleted\)/);
    assert.deepEqual(await attachmentsOf(target, 'MIGATT1'), first);
    assert.equal((await attachmentsOf(target, 'MIGATT2'))!.length, 1);
  });

  test('the back-out removes exactly what the deploy added and restores what it replaced', async () => {
    const backedOut = await post(target, '/dm/backout', { pkgdefname: 'ATTSNAP', dmpackageid: received });
    assert.equal(backedOut.statusCode, 200, backedOut.body);
    const left = (await attachmentsOf(target, 'MIGATT1'))!;
    assert.deepEqual(
      left.map((attachment) => [attachment.fileName, attachment.content]),
      [['local.txt', sha256(Buffer.from('kept on the target'))]],
    );
    assert.equal(await descriptionOf(target, 'MIGATT1'), 'Here before');
    assert.equal(await attachmentsOf(target, 'MIGATT2'), undefined);
    const orphans = await target.storage.db
      .selectFrom('doclinks')
      .select('doclinksid')
      .where('document', 'in', ['procedure.pdf', 'torque.txt', 'photo.jpg'])
      .execute();
    assert.deepEqual(orphans, []);
  });

  test('records with large attachments: staged chunks bounded by size on both sides, content byte-identical', async () => {
    // Three records whose lines hold 4 MB of base64 each: a staged chunk ends past 8 MB, whatever the batch size.
    const files = [1, 2, 3].map(() => randomBytes(3 * 1024 * 1024));
    for (const [index, file] of files.entries()) {
      const created = await post(source, '/os/mxapiasset?lean=1', {
        assetnum: `MIGBIG${index + 1}`,
        siteid: 'BEDFORD',
      });
      assert.equal(created.statusCode, 201, created.body);
      const uploaded = await source.app.inject({
        method: 'POST',
        url: `${(await assetHref(source, `MIGBIG${index + 1}`))!}/doclinks`,
        headers: { ...admin, 'content-type': 'application/octet-stream', slug: `big${index + 1}.bin` },
        payload: file,
      });
      assert.equal(uploaded.statusCode, 201, uploaded.body);
    }
    const definition = await post(source, '/os/mxapidmpkgdef', {
      pkgdefname: 'BIGSNAP',
      type: 'SNAPSHOT',
      status: 'APPR',
      dmpkgdefcontent: [
        { objectstructure: 'MXAPIASSET', whereclause: 'assetnum="MIGBIG%"', cfgdataorder: 1 },
      ],
      dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
    });
    assert.equal(definition.statusCode, 201, definition.body);
    const made = await post(source, '/dm/create', { pkgdefname: 'BIGSNAP' });
    assert.equal(made.statusCode, 200, made.body);
    const dmpackageid = json(made).dmpackageid as number;
    const chunkSizes = async (app: TestApp, id: number) =>
      (
        await app.storage.db
          .selectFrom('dmpkgstaging')
          .select('cfgobjectcount')
          .where('dmpackageid', '=', id)
          .where('type', '=', 'CFGDATA')
          .orderBy('chunk')
          .execute()
      ).map((row) => Number(row.cfgobjectcount));
    assert.deepEqual(await chunkSizes(source, dmpackageid), [2, 1]);
    assert.equal(
      (await post(source, '/dm/distribute', { pkgdefname: 'BIGSNAP', dmpackageid })).statusCode,
      200,
    );
    const download = await source.app.inject({
      method: 'GET',
      url: `/maximo/oslc/dm/download?dmpackagedef=BIGSNAP&dmpackageid=${dmpackageid}`,
      headers: admin,
    });
    assert.equal(download.statusCode, 200);
    const upload = await target.app.inject({
      method: 'POST',
      url: '/maximo/oslc/dm/upload?filename=BIGSNAP.zip',
      headers: { ...admin, 'content-type': 'application/zip' },
      payload: download.rawPayload,
    });
    assert.equal(upload.statusCode, 200, upload.body);
    const onTarget = json(upload).dmpackageid as number;
    assert.deepEqual(await chunkSizes(target, onTarget), [2, 1]);
    const deployed = await post(target, '/dm/deploy', { pkgdefname: 'BIGSNAP', dmpackageid: onTarget });
    assert.equal(deployed.statusCode, 200, deployed.body);
    for (const [index, file] of files.entries()) {
      const [moved] = (await attachmentsOf(target, `MIGBIG${index + 1}`))!;
      assert.equal(moved?.content, sha256(file));
      assert.equal(moved?.attachmentSize, file.length);
    }
  });

  test('a record whose attachments exceed what a line carries is refused at create, naming them', async () => {
    const created = await post(source, '/os/mxapiasset?lean=1', {
      assetnum: 'MIGHUGE',
      siteid: 'BEDFORD',
      doclinks: [{ urlname: 'huge.bin', documentdata: randomBytes(6_000_001).toString('base64') }],
    });
    assert.equal(created.statusCode, 201, created.body);
    const definition = await post(source, '/os/mxapidmpkgdef', {
      pkgdefname: 'HUGESNAP',
      type: 'SNAPSHOT',
      status: 'APPR',
      dmpkgdefcontent: [
        { objectstructure: 'MXAPIASSET', whereclause: 'assetnum="MIGHUGE"', cfgdataorder: 1 },
      ],
      dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
    });
    assert.equal(definition.statusCode, 201, definition.body);
    const made = await post(source, '/dm/create', { pkgdefname: 'HUGESNAP' });
    assert.equal(made.statusCode, 400, made.body);
    const error = json(made).Error as { reasonCode: string; message: string };
    assert.equal(error.reasonCode, 'EAS0166E');
    assert.match(error.message, /huge\.bin\) come to 6000001 bytes/);
  });
});
