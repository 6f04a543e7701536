import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, testConfig, type TestApp } from '../../test/helpers/app.js';
import { buildApp } from '../app.js';
import type { Storage } from '../db/database.js';
import { listDataDirectory } from '../backup/archive-writer.js';
import { exportedAttachments } from '../migration/attachments/carried.js';
import { ContentFolder, DOCLINKS_FOLDER, ORPHAN_GRACE_MS, PARTIAL_SUFFIX } from './content-folder.js';

/**
 * Attachments kept as files (src/attachments/README.md, "Where content is kept"): a binary upload streams into a
 * file of the folder and its row names it; downloads, deletes, the orphan sweep, packages and the embedded backup
 * see the files as they see chunks.
 */

let ctx: TestApp;
let folder: string;
const admin = maxauth('MAXADMIN');

before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'eas-doclinks-'));
  ctx = await startTestApp({ EAS_ATTACHMENTS_DIR: folder });
});
after(async () => {
  await ctx.close();
  await rm(folder, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const pathOf = (href: string): string => new URL(href).pathname;

async function assetHref(): Promise<string> {
  const response = await ctx.app.inject({
    method: 'GET',
    url: '/maximo/api/os/mxapiasset?lean=1&oslc.pageSize=1&oslc.select=assetnum',
    headers: admin,
  });
  assert.equal(response.statusCode, 200, response.body);
  return pathOf(String(json(response).member?.[0]?.href));
}

function upload(href: string, content: Buffer) {
  return ctx.app.inject({
    method: 'POST',
    url: `${href}/doclinks`,
    headers: {
      ...admin,
      'content-type': 'application/octet-stream',
      slug: 'scan.bin',
      'x-document-meta': 'FILE/Attachments',
    },
    payload: content,
  });
}

const filesIn = async (): Promise<string[]> => (await readdir(folder)).sort();

async function rowOf(location: string) {
  const doclinksid = Number(location.split('/').at(-1));
  return ctx.storage.db
    .selectFrom('doclinks')
    .selectAll()
    .where('doclinksid', '=', doclinksid)
    .executeTakeFirstOrThrow();
}

describe('binary uploads into the attachment folder', () => {
  test('the content is a file the row names, not chunks; it downloads byte-identical and goes with a delete', async () => {
    const asset = await assetHref();
    const content = randomBytes(3 * 1024 * 1024 + 7);
    const created = await upload(asset, content);
    assert.equal(created.statusCode, 201, created.body);
    const location = pathOf(String(created.headers.location));
    const row = await rowOf(location);
    assert.ok(row.contentfile, 'the row names its file');
    assert.deepEqual(await filesIn(), [row.contentfile]);
    assert.ok((await readFile(join(folder, row.contentfile))).equals(content));
    assert.equal(row.checksum, sha256(content));
    assert.equal(Number(row.attachmentsize), content.length);
    const chunks = await ctx.storage.db
      .selectFrom('doclinkchunk')
      .select('seq')
      .where('doclinksid', '=', row.doclinksid)
      .execute();
    assert.deepEqual(chunks, []);

    const download = await ctx.app.inject({ method: 'GET', url: location, headers: admin });
    assert.equal(download.statusCode, 200);
    assert.equal(Number(download.headers['content-length']), content.length);
    assert.ok(download.rawPayload.equals(content));

    const inline = await ctx.app.inject({
      method: 'GET',
      url: `${asset}/doclinks?inlinedoc=1`,
      headers: admin,
    });
    assert.equal(inline.statusCode, 200, inline.body);
    const entry = (json(inline).member ?? []).find((member) => pathOf(String(member.href)) === location);
    assert.ok(Buffer.from(String(entry?.documentdata), 'base64').equals(content));

    const removed = await ctx.app.inject({ method: 'DELETE', url: location, headers: admin });
    assert.equal(removed.statusCode, 204, removed.body);
    assert.deepEqual(await filesIn(), [], 'the file went with its attachment');
  });

  test('an upload over the size limit leaves neither a row nor a file', async () => {
    const asset = await assetHref();
    const before = await ctx.storage.db.selectFrom('doclinks').select('doclinksid').execute();
    const refused = await upload(asset, randomBytes(10 * 1024 * 1024 + 1));
    assert.equal(refused.statusCode, 413, refused.body);
    assert.equal(json(refused).Error?.reasonCode, 'EAS0220E');
    assert.deepEqual(await filesIn(), []);
    assert.equal(
      (await ctx.storage.db.selectFrom('doclinks').select('doclinksid').execute()).length,
      before.length,
    );
  });
});

describe('ContentFolder.write', () => {
  const pieces = async function* (count: number, failAt?: number): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < count; at += 1) {
      if (at === failAt) throw new Error('the client went away');
      yield Buffer.alloc(64 * 1024, at % 251);
    }
  };
  const tooLarge = () => new Error('too large');

  test('a file past the flush interval is whole, with the checksum of its bytes', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'eas-content-'));
    try {
      const count = 640; // 40 MB: two flushes while it arrives, then the tail
      const stored = await new ContentFolder(directory).write(
        pieces(count),
        Number.MAX_SAFE_INTEGER,
        tooLarge,
      );
      const bytes = await readFile(join(directory, stored.name));
      assert.equal(stored.size, count * 64 * 1024);
      assert.equal(bytes.length, stored.size);
      assert.equal(stored.checksum, sha256(bytes));
      assert.equal(bytes[bytes.length - 1], (count - 1) % 251);
      assert.deepEqual(await readdir(directory), [stored.name]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  test('a stream that fails part-way, or goes past the limit, leaves no file', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'eas-content-'));
    try {
      const folder = new ContentFolder(directory);
      await assert.rejects(folder.write(pieces(640, 400), Number.MAX_SAFE_INTEGER, tooLarge), /went away/);
      await assert.rejects(folder.write(pieces(640), 20 * 1024 * 1024, tooLarge), /too large/);
      assert.deepEqual(await readdir(directory), []);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('the sweep', () => {
  test('removes old files no row names and old unfinished writes, keeps named and recent ones', async () => {
    const asset = await assetHref();
    const named = await upload(asset, randomBytes(1000));
    assert.equal(named.statusCode, 201, named.body);
    const namedFile = (await rowOf(pathOf(String(named.headers.location)))).contentfile!;
    await writeFile(join(folder, 'orphan-old'), 'x');
    await writeFile(join(folder, `unfinished${PARTIAL_SUFFIX}`), 'x');
    await writeFile(join(folder, 'orphan-recent'), 'x');
    const old = new Date(Date.now() - ORPHAN_GRACE_MS - 60_000);
    for (const name of [namedFile, 'orphan-old', `unfinished${PARTIAL_SUFFIX}`]) {
      await utimes(join(folder, name), old, old);
    }
    const removed = await new ContentFolder(folder).sweep(ctx.storage.db);
    assert.equal(removed, 2);
    assert.deepEqual(await filesIn(), [namedFile, 'orphan-recent'].sort());
    await rm(join(folder, 'orphan-recent'));
  });
});

describe('several server processes on one database', () => {
  test('another server with the same folder serves the file; one without a folder answers EAS0221E', async () => {
    const asset = await assetHref();
    const content = randomBytes(200_000);
    const created = await upload(asset, content);
    assert.equal(created.statusCode, 201, created.body);
    const location = pathOf(String(created.headers.location));
    const sharing = await buildApp(ctx.config, ctx.storage);
    const withoutFolder: Storage = { ...ctx.storage };
    delete withoutFolder.attachmentsDir;
    const lacking = await buildApp(testConfig(), withoutFolder);
    try {
      const served = await sharing.app.inject({ method: 'GET', url: location, headers: admin });
      assert.equal(served.statusCode, 200);
      assert.ok(served.rawPayload.equals(content));
      const refused = await lacking.app.inject({ method: 'GET', url: location, headers: admin });
      assert.equal(refused.statusCode, 500, refused.body);
      assert.equal(json(refused).Error?.reasonCode, 'EAS0221E');
    } finally {
      await sharing.app.close();
      await lacking.app.close();
    }
  });
});

describe('a file missing from the folder', () => {
  test('a download answers EAS0222E without the headers of a download; inlinedoc too; the attachment can still be deleted', async () => {
    const asset = await assetHref();
    const created = await upload(asset, randomBytes(10_000));
    assert.equal(created.statusCode, 201, created.body);
    const location = pathOf(String(created.headers.location));
    const row = await rowOf(location);
    await rm(join(folder, row.contentfile!));

    const download = await ctx.app.inject({ method: 'GET', url: location, headers: admin });
    assert.equal(download.statusCode, 500, download.body);
    assert.equal(json(download).Error?.reasonCode, 'EAS0222E');
    assert.match(String(download.headers['content-type']), /json/);
    assert.equal(download.headers['content-disposition'], undefined);
    assert.equal(download.headers.etag, undefined);

    const meta = location.replace(/\/doclinks\//, '/doclinks/meta/');
    const inline = await ctx.app.inject({ method: 'GET', url: `${meta}?inlinedoc=1`, headers: admin });
    assert.equal(inline.statusCode, 500, inline.body);
    assert.equal(json(inline).Error?.reasonCode, 'EAS0222E');

    const removed = await ctx.app.inject({ method: 'DELETE', url: location, headers: admin });
    assert.equal(removed.statusCode, 204, removed.body);
  });
});

describe('packages and backups', () => {
  test('a package carries the content of a file as it carries chunks', async () => {
    const asset = await assetHref();
    const content = randomBytes(1_500_000);
    const created = await upload(asset, content);
    assert.equal(created.statusCode, 201, created.body);
    const row = await rowOf(pathOf(String(created.headers.location)));
    const meta = ctx.services.metadata.object('ASSET');
    const read = await exportedAttachments(ctx.storage.db, folder, 'FILES', meta, [Number(row.ownerid)]);
    const carried = (await read(Number(row.ownerid)))!.find((entry) => entry.checksum === row.checksum)!;
    const bytes = Buffer.concat(
      (carried.documentdata as string[]).map((piece) => Buffer.from(piece, 'base64')),
    );
    assert.ok(bytes.equals(content));

    const withoutFolder = await exportedAttachments(ctx.storage.db, undefined, 'FILES', meta, [
      Number(row.ownerid),
    ]);
    await assert.rejects(withoutFolder(Number(row.ownerid)), (error: Error) =>
      /EAS0221E|no attachment folder/.test(error.message),
    );
  });

  test("the embedded backup holds the folder's files but not those being written", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'eas-backup-doclinks-'));
    try {
      await mkdir(join(dataDir, DOCLINKS_FOLDER));
      await writeFile(join(dataDir, DOCLINKS_FOLDER, 'kept'), 'x');
      await writeFile(join(dataDir, DOCLINKS_FOLDER, `writing${PARTIAL_SUFFIX}`), 'x');
      await writeFile(join(dataDir, 'PG_VERSION'), '17');
      const { files } = await listDataDirectory(dataDir);
      assert.deepEqual(
        files.map((file) => file.path),
        ['PG_VERSION', `${DOCLINKS_FOLDER}/kept`],
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
