import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildClusterTemplate, copyClusterTemplate, installedPgliteVersion } from './cluster-template.js';
import { migrateToLatest, openStorage } from './database.js';

describe('the PGlite cluster template of a first start', () => {
  let root: string;
  let template: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'eas-template-'));
    template = join(root, 'template');
    assert.equal(await buildClusterTemplate(template), true);
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test('the build stamps it with the installed PGlite and does not make it again', async () => {
    const stamp = JSON.parse(await readFile(join(template, 'eas-template.json'), 'utf8')) as {
      pglite: string;
    };
    assert.equal(stamp.pglite, await installedPgliteVersion());
    assert.ok(existsSync(join(template, 'PG_VERSION')));
    assert.equal(await buildClusterTemplate(template), false);
  });

  test('an empty data directory gets a cluster that opens, migrates and keeps what is written', async () => {
    const dataDir = join(root, 'empty');
    assert.equal(await copyClusterTemplate(dataDir, template), true);
    assert.ok(existsSync(join(dataDir, 'PG_VERSION')));
    assert.ok(!existsSync(join(dataDir, 'eas-template.json')));
    const storage = await openStorage({ kind: 'pglite', dataDir });
    try {
      assert.ok((await migrateToLatest(storage)).length > 0);
      await sql`create table kept (id int)`.execute(storage.db);
      await sql`insert into kept values (7)`.execute(storage.db);
    } finally {
      await storage.close();
    }
    const reopened = await openStorage({ kind: 'pglite', dataDir });
    try {
      const { rows } = await sql<{ id: number }>`select id from kept`.execute(reopened.db);
      assert.deepEqual(rows, [{ id: 7 }]);
    } finally {
      await reopened.close();
    }
  });

  test('a data directory that holds a cluster is left alone', async () => {
    const dataDir = join(root, 'existing');
    await mkdir(dataDir);
    await writeFile(join(dataDir, 'PG_VERSION'), '17\n');
    assert.equal(await copyClusterTemplate(dataDir, template), false);
    assert.ok(!existsSync(join(dataDir, 'base')));
  });

  test('a copy cut short before PG_VERSION is made again over what it left', async () => {
    const dataDir = join(root, 'cut-short');
    await mkdir(join(dataDir, 'global'), { recursive: true });
    await writeFile(join(dataDir, 'global', 'pg_control'), 'torn');
    assert.equal(await copyClusterTemplate(dataDir, template), true);
    assert.deepEqual(
      await readFile(join(dataDir, 'global', 'pg_control')),
      await readFile(join(template, 'global', 'pg_control')),
    );
  });

  test('a template made by another PGlite is not used', async () => {
    const stale = join(root, 'stale');
    await cp(template, stale, { recursive: true });
    await writeFile(join(stale, 'eas-template.json'), JSON.stringify({ pglite: '0.0.1' }));
    const dataDir = join(root, 'beside-stale');
    assert.equal(await copyClusterTemplate(dataDir, stale), false);
    assert.ok(!existsSync(join(dataDir, 'PG_VERSION')));
  });

  test('no template (running from the sources): nothing is copied', async () => {
    const dataDir = join(root, 'no-template');
    assert.equal(await copyClusterTemplate(dataDir, join(root, 'absent')), false);
    assert.ok(!existsSync(join(dataDir, 'PG_VERSION')));
  });
});
