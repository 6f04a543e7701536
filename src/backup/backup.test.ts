import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { buildApp } from '../app.js';
import { openStorage, pgliteParsers, pgliteStartParams, type Storage } from '../db/database.js';
import { LOCK_FILE, lockDataDirectory } from '../db/data-dir-lock.js';
import { MASTER_KEY_FILE } from '../apikeys/vault.js';
import { json, maxauth, startTestApp, testConfig, type TestApp } from '../../test/helpers/app.js';
import { pgliteTemplate, TEST_DATABASE_URL } from '../../test/helpers/storage.js';
import { ArchiveRefusedError, openArchive } from './archive-reader.js';
import { listDataDirectory, writeArchive, type ManifestFacts } from './archive-writer.js';
import { restoreArchive, RestoreTargetError } from './restore.js';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_FORMAT_VERSION,
  archiveChecksum,
  DATA_FOLDER,
  MANIFEST_NAME,
} from './schemas.js';

/** The backup endpoint and the restore (docs/operations.md, "Backup and restore"), in-process. */

const admin = maxauth('MAXADMIN');

async function countAssets(storage: Storage): Promise<number> {
  const { rows } = await sql<{ count: number }>`select count(*)::int as count from asset`.execute(storage.db);
  return rows[0]!.count;
}

describe('backup on PostgreSQL', { skip: !TEST_DATABASE_URL }, () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('is refused with EAS0210E, naming pg_dump', async () => {
    const response = await t.app.inject({ url: '/maximo/oslc/backup', headers: admin });
    assert.equal(response.statusCode, 409);
    const error = json(response).Error as { reasonCode: string; message: string };
    assert.equal(error.reasonCode, 'EAS0210E');
    assert.match(error.message, /pg_dump/);
  });
});

describe('backup and restore of the embedded database', { skip: !!TEST_DATABASE_URL }, () => {
  let work: string;
  let dataDir: string;
  let storage: Storage;
  let app: Awaited<ReturnType<typeof buildApp>>['app'];
  let archive: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'eas-backup-'));
    dataDir = join(work, 'source');
    const pglite = new PGlite({
      dataDir,
      loadDataDir: await pgliteTemplate(),
      parsers: pgliteParsers,
      startParams: pgliteStartParams(),
    });
    storage = await openStorage({ kind: 'pglite', dataDir, pglite });
    // The key file of a deployment without EAS_MASTER_KEY: it must not travel in the archive.
    ({ app } = await buildApp(testConfig({ EAS_DATA_DIR: dataDir }), storage));
    await app.ready();
    archive = join(work, 'backup.zip');
  });
  after(async () => {
    await app?.close();
    await storage?.close();
    await rm(work, { recursive: true, force: true });
  });

  test('answers administrators only', async () => {
    const response = await app.inject({ url: '/maximo/oslc/backup', headers: maxauth('WILSON') });
    assert.equal(response.statusCode, 400);
    assert.equal((json(response).Error as { reasonCode: string }).reasonCode, 'BMXAA0024E');
    assert.equal(response.headers['content-type'], 'application/json');
  });

  test('the archive holds the data directory, a manifest that says what it holds, and no master key', async () => {
    const response = await app.inject({ url: '/maximo/oslc/backup', headers: admin });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], 'application/zip');
    await writeFile(archive, response.rawPayload);
    const opened = await openArchive(archive);
    opened.close();
    const { manifest } = opened;
    const identity = json(await app.inject({ url: '/maximo/oslc/systeminfo?lean=1', headers: admin }))
      .deployment as { id: string };
    assert.equal(manifest.deployment.id, identity.id);
    assert.equal(response.headers['x-eas-backup-deployment'], identity.id);
    assert.match(manifest.schemaVersion, /^\d{4}-/);
    assert.equal(manifest.engine.kind, 'pglite');
    assert.equal(manifest.masterKey.inArchive, false);
    assert.match(manifest.masterKey.checkValue ?? '', /^[0-9a-f]{64}$/);
    assert.equal(manifest.checksum, archiveChecksum(manifest.files));
    const paths = manifest.files.map((file) => file.path);
    assert.ok(paths.includes('PG_VERSION') && paths.includes('global/pg_control'));
    assert.ok(!paths.some((path) => path.startsWith(LOCK_FILE) || path.startsWith(MASTER_KEY_FILE)));
    assert.ok((await readdir(dataDir)).includes(MASTER_KEY_FILE), 'the source has its key file');
    assert.ok(!response.rawPayload.includes(await readFile(join(dataDir, MASTER_KEY_FILE))));
  });

  test('restore: the copy answers what the source held, with its identity', async () => {
    const target = join(work, 'restored');
    const progress: number[] = [];
    const outcome = await restoreArchive({
      archive,
      dataDir: target,
      newIdentity: false,
      masterKeyFile: join(dataDir, MASTER_KEY_FILE),
      onProgress: (step) => progress.push(step.filesDone),
    });
    assert.equal(outcome.masterKey, 'file copied');
    assert.equal(progress.at(-1), outcome.manifest.files.length);
    const restored = await openStorage({ kind: 'pglite', dataDir: target });
    try {
      assert.equal(await countAssets(restored), await countAssets(storage));
      const { rows } = await sql<{
        id: string;
      }>`select deploymentid::text as id from deploymentidentity`.execute(restored.db);
      assert.equal(rows[0]!.id, outcome.manifest.deployment.id);
    } finally {
      await restored.close();
    }
    assert.deepEqual(
      await readFile(join(target, MASTER_KEY_FILE)),
      await readFile(join(dataDir, MASTER_KEY_FILE)),
    );
  });

  test('restore --new-identity: the copy takes an identity of its own', async () => {
    const outcome = await restoreArchive({ archive, dataDir: join(work, 'copy'), newIdentity: true });
    assert.notEqual(outcome.deploymentId, outcome.manifest.deployment.id);
    assert.equal(outcome.masterKey, 'not given');
    const restored = await openStorage({ kind: 'pglite', dataDir: join(work, 'copy') });
    try {
      const { rows } = await sql<{
        id: string;
      }>`select deploymentid::text as id from deploymentidentity`.execute(restored.db);
      assert.equal(rows[0]!.id, outcome.deploymentId);
    } finally {
      await restored.close();
    }
  });

  test('restore refuses a directory that is not empty, or one a process holds', async () => {
    const full = join(work, 'full');
    await restoreArchive({ archive, dataDir: full, newIdentity: false });
    await assert.rejects(restoreArchive({ archive, dataDir: full, newIdentity: false }), RestoreTargetError);
    const held = join(work, 'held');
    const lock = await lockDataDirectory(held);
    try {
      // The lock names this process: a second lock by the same pid would count as stale, so a child holds it.
      await writeFile(lock.path, `${process.ppid}\n`);
      await assert.rejects(
        restoreArchive({ archive, dataDir: held, newIdentity: false }),
        /in use by another process/,
      );
    } finally {
      await rm(held, { recursive: true, force: true });
    }
  });

  test('restore refuses a damaged archive and leaves the directory empty', async () => {
    const bytes = await readFile(archive);
    const opened = await openArchive(archive);
    opened.close();
    const victim = opened.manifest.files.find((file) => file.bytes > 8192)!;
    // Stored entries: the file's bytes are in the zip as they are; flip one in the middle of a page.
    const page = await readFile(join(dataDir, victim.path));
    const at = bytes.indexOf(page.subarray(4096, 4096 + 64));
    assert.ok(at > 0, 'the page is found in the archive');
    const damaged = Buffer.from(bytes);
    damaged[at + 10] = damaged[at + 10]! ^ 0xff;
    const path = join(work, 'damaged.zip');
    await writeFile(path, damaged);
    const target = join(work, 'from-damaged');
    await assert.rejects(
      restoreArchive({ archive: path, dataDir: target, newIdentity: false }),
      ArchiveRefusedError,
    );
    assert.deepEqual(await readdir(target), []);
  });

  test('restore refuses an archive whose manifest was altered, and a wrong master key', async () => {
    await assert.rejects(
      restoreArchive({
        archive,
        dataDir: join(work, 'wrong-key'),
        newIdentity: false,
        masterKey: 'x'.repeat(40),
      }),
      /master key in EAS_MASTER_KEY is not the one/,
    );
    assert.ok(!(await readdir(work)).includes('wrong-key'));
    const bytes = await readFile(archive);
    assert.ok(bytes.includes(Buffer.from(MANIFEST_NAME)));
    const altered = Buffer.from(
      bytes.toString('latin1').replace('"schemaVersion"', '"schemaVersioX"'),
      'latin1',
    );
    const path = join(work, 'altered.zip');
    await writeFile(path, altered);
    await assert.rejects(
      restoreArchive({ archive: path, dataDir: join(work, 'altered'), newIdentity: false }),
      ArchiveRefusedError,
    );
  });
});

describe('the archive writer', () => {
  let work: string;
  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'eas-archive-'));
    const source = join(work, 'data');
    await mkdir(join(source, 'base', '1'), { recursive: true });
    await mkdir(join(source, 'empty-folder'));
    // Larger than one piece of the output (1 MiB), so its bytes span pieces; one empty file; one small.
    await writeFile(
      join(source, 'base', '1', '1259'),
      Buffer.from(Array.from({ length: 3_000_001 }, (_, i) => i % 251)),
    );
    await writeFile(join(source, 'base', '1', 'empty'), '');
    await writeFile(join(source, 'PG_VERSION'), '17\n');
  });
  after(() => rm(work, { recursive: true, force: true }));

  const facts: ManifestFacts = {
    format: ARCHIVE_FORMAT,
    formatVersion: ARCHIVE_FORMAT_VERSION,
    release: 'test',
    schemaVersion: 'test',
    migrations: 0,
    createdAt: new Date().toISOString(),
    engine: { kind: 'pglite', pgliteVersion: 'test', serverVersion: 'test' },
    deployment: { id: 'test', label: 'test' },
    masterKey: { inArchive: false, checkValue: null },
  };

  for (const zip64 of [false, true]) {
    test(`a zip${zip64 ? ' with ZIP64 records throughout (as past 4 GiB)' : ''} that yauzl reads back whole, CRC-32 included`, async () => {
      const source = join(work, 'data');
      const path = join(work, `archive-${zip64}.zip`);
      const listing = await listDataDirectory(source);
      const writing = writeArchive(source, listing, facts, zip64 ? { zip64: 'always' } : {});
      await pipeline(writing.output, createWriteStream(path));
      await writing.filesRead;
      const manifest = await writing.manifest;
      assert.deepEqual(manifest.directories, ['base', 'base/1', 'empty-folder']);
      assert.deepEqual(
        manifest.files.map((file) => [file.path, file.bytes]),
        [
          ['PG_VERSION', 3],
          ['base/1/1259', 3_000_001],
          ['base/1/empty', 0],
        ],
      );
      const bytes = await readFile(path);
      // The ZIP64 end of central directory record's signature.
      assert.equal(bytes.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06])), zip64);
      const archive = await openArchive(path);
      try {
        assert.deepEqual(archive.manifest, manifest);
        const target = join(work, `extracted-${zip64}`);
        await mkdir(join(target, 'base', '1'), { recursive: true });
        for (const file of archive.manifest.files) {
          await (
            await archive.extract(file, join(target, file.path), () => undefined)
          ).flushed;
          assert.deepEqual(await readFile(join(target, file.path)), await readFile(join(source, file.path)));
        }
      } finally {
        archive.close();
      }
      // Other unzip tools check each entry's CRC-32 (yauzl does not): the central directory's is the bytes'.
      const { default: yauzl } = await import('yauzl');
      const zip = await yauzl.openPromise(path, { lazyEntries: true });
      const crcs = new Map<string, number>();
      await new Promise<void>((resolve, reject) => {
        zip.on('entry', (entry: { fileName: string; crc32: number }) => {
          crcs.set(entry.fileName, entry.crc32);
          zip.readEntry();
        });
        zip.once('end', resolve);
        zip.once('error', reject);
        zip.readEntry();
      });
      zip.close();
      for (const file of manifest.files) {
        const crc = (zlib as unknown as { crc32: (data: Buffer) => number }).crc32(
          await readFile(join(source, file.path)),
        );
        assert.equal(crcs.get(DATA_FOLDER + file.path), crc, file.path);
      }
    });
  }
});
