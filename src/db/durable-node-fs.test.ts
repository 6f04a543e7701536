import assert from 'node:assert/strict';
import { fsyncSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { pgliteTemplate } from '../../test/helpers/storage.js';
import { openStorage, pgliteParsers, pgliteStartParams } from './database.js';
import { DurableNodeFS } from './durable-node-fs.js';

describe('the embedded database flushes what it commits to the disk', () => {
  let work: string;
  let dataDir: string;
  let pglite: PGlite;
  /** The files and folders flushed, relative to the data directory. */
  let flushed: string[] = [];

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'eas-durable-'));
    dataDir = join(work, 'data');
    const flushToDisk = (fd: number) => {
      flushed.push(relative(dataDir, readlinkSync(`/proc/self/fd/${fd}`)));
      fsyncSync(fd);
    };
    pglite = new PGlite({
      fs: new DurableNodeFS(dataDir, flushToDisk),
      loadDataDir: await pgliteTemplate(),
      parsers: pgliteParsers,
      startParams: pgliteStartParams(),
    });
    await pglite.waitReady;
    await pglite.exec('create table kept (id int)');
  });
  after(async () => {
    if (!pglite.closed) await pglite.close();
    await rm(work, { recursive: true, force: true });
  });

  test('a commit flushes the write-ahead log before it is answered', async () => {
    flushed = [];
    await pglite.query('insert into kept values (1)');
    assert.ok(
      flushed.some((path) => path.startsWith('pg_wal/')),
      `flushed: ${flushed.join(', ') || 'nothing'}`,
    );
  });

  test('a transaction that writes nothing flushes nothing; one rolled back waits for no disk', async () => {
    flushed = [];
    await pglite.query('select count(*) from kept');
    await pglite.transaction(async (transaction) => {
      await transaction.query('insert into kept values (2)');
      await transaction.rollback();
    });
    assert.deepEqual(flushed, []);
  });

  test('a checkpoint flushes the tables it wrote and the control file', async () => {
    await pglite.query('insert into kept values (3)');
    flushed = [];
    await pglite.query('checkpoint');
    assert.ok(
      flushed.some((path) => path.startsWith('base/')),
      `flushed: ${flushed.join(', ')}`,
    );
    assert.ok(flushed.includes('global/pg_control'), `flushed: ${flushed.join(', ')}`);
  });

  test('the storage the server opens on the data directory runs with fsync on, the log flushed by fsync', async () => {
    await pglite.close();
    const storage = await openStorage({ kind: 'pglite', dataDir });
    try {
      const setting = async (name: string) =>
        (await sql<{ value: string }>`select current_setting(${name}) as value`.execute(storage.db)).rows[0]
          ?.value;
      assert.equal(await setting('fsync'), 'on');
      assert.equal(await setting('wal_sync_method'), 'fsync');
      const kept = await sql<{ id: number }>`select id from kept order by id`.execute(storage.db);
      assert.deepEqual(
        kept.rows.map((row) => row.id),
        [1, 3],
      );
    } finally {
      await storage.close();
    }
  });
});
