import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { ensureAdministrator } from '../../src/auth/bootstrap.js';
import { hashPassword } from '../../src/auth/password.js';
import {
  migrateToLatest,
  openStorage,
  pgliteParsers,
  pgliteSerializers,
  pgliteStartParams,
  type Storage,
} from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import { deferWasmTierUp } from '../../src/db/wasm-tier-up.js';
import { seedDemoData } from '../../src/demo/seed.js';

// Each test file opens databases for a few hundred statements, as a server start does: at V8's default budget
// the optimizing compiler's threads took about 0.7 s more CPU per file (docs/startup.md, "WebAssembly tier-up").
deferWasmTierUp();

/** Passwords of the fixture users (administrator MAXADMIN; demo users WILSON and SMITH). */
export const ADMIN_PASSWORD = 'maxadmin-test-pw';
export const DEMO_PASSWORD = 'demo-test-pw';

/** Set to a PostgreSQL URL to run the storage tests on PostgreSQL instead of PGlite (CI's second pass). */
export const TEST_DATABASE_URL = process.env.EAS_TEST_DATABASE_URL;

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What a test database holds besides the schema and the administrator. */
export interface FixtureOptions {
  /** The demo data (the default); without it the database is a fresh deployment's, as `EAS_DEMO=0` leaves it. */
  demo?: boolean;
}

async function loadFixtures(storage: Storage, { demo = true }: FixtureOptions = {}): Promise<void> {
  await migrateToLatest(storage);
  await ensureAdministrator(storage.db, await hashPassword(ADMIN_PASSWORD));
  if (demo) await seedDemoData(storage, { passwordHash: await hashPassword(DEMO_PASSWORD) });
}

/**
 * What the demo rows are made of: the records and their loader, and the write path that writes them (its
 * validation, defaults, stamps and status history), so a change to any of these changes the rows.
 */
const DEMO_SOURCES = ['src/demo', 'src/oslc', 'src/metadata', 'src/domains'];

async function demoFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const folder of DEMO_SOURCES) {
    for (const path of await readdir(join(root, folder), { recursive: true })) {
      if (/(?<!\.test)\.(ts|json)$/.test(path)) files.push(join(folder, path));
    }
  }
  return files.sort();
}

/** The template is keyed by the migrations and fixture code, so a change to either builds a new one. */
async function templatePath({ demo = true }: FixtureOptions): Promise<string> {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(migrations));
  for (const file of [...(await demoFiles()), 'src/auth/bootstrap.ts', 'test/helpers/storage.ts']) {
    hash.update(await readFile(join(root, file)));
  }
  const kind = demo ? '' : 'bare-';
  return join(root, '.cache', `pglite-template-${kind}${hash.digest('hex').slice(0, 16)}.tar.gz`);
}

/**
 * A migrated, seeded PGlite data directory, built once and reused: creating a database costs seconds and most
 * of a gigabyte, loading a dumped one a fraction of that.
 */
export async function pgliteTemplate(options: FixtureOptions = {}): Promise<Blob> {
  const path = await templatePath(options);
  try {
    return new Blob([await readFile(path)]);
  } catch {
    const pglite = new PGlite({ parsers: pgliteParsers, serializers: pgliteSerializers });
    const storage = await openStorage({ kind: 'pglite', pglite });
    await loadFixtures(storage, options);
    const dump = await pglite.dumpDataDir('gzip');
    await storage.close();
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await writeFile(temporary, Buffer.from(await dump.arrayBuffer()));
    await rename(temporary, path);
    return dump;
  }
}

/**
 * A fresh database for one test file, with the schema, the administrator and the demo data (unless `demo: false`): a copy of the PGlite
 * template, or a new schema on the PostgreSQL server of EAS_TEST_DATABASE_URL (dropped on close).
 */
export async function openTestStorage(options: FixtureOptions = {}): Promise<Storage> {
  if (TEST_DATABASE_URL) {
    const schema = `eas_test_${process.pid}_${randomBytes(3).toString('hex')}`;
    const storage = await openStorage({ kind: 'postgres', url: TEST_DATABASE_URL, schema, poolSize: 4 });
    const close = async () => {
      await sql.raw(`drop schema if exists "${schema}" cascade`).execute(storage.db);
      await storage.close();
    };
    try {
      await loadFixtures(storage, options);
    } catch (error) {
      await close();
      throw error;
    }
    return { ...storage, close };
  }
  const pglite = new PGlite({
    loadDataDir: await pgliteTemplate(options),
    parsers: pgliteParsers,
    serializers: pgliteSerializers,
    startParams: pgliteStartParams(),
  });
  return openStorage({ kind: 'pglite', pglite });
}
