// The service under test, as `npm start` builds it: on the benchmark's PostgreSQL schema (already loaded), or with
// BENCH_STORAGE=pglite on an in-memory PGlite database migrated and seeded here (MAXADMIN and the demo data, as the
// schema has them), for the property-call sections' `--storage pglite`.
import { ensureAdministrator } from '../../src/auth/bootstrap.js';
import { hashPassword } from '../../src/auth/password.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCLINKS_FOLDER } from '../../src/attachments/content-folder.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrateToLatest, openStorage, type Storage } from '../../src/db/database.js';
import { seedDemoData } from '../../src/demo/seed.js';
import { BENCH_ADMIN_PASSWORD, BENCH_DEMO_PASSWORD, BENCH_MASTER_KEY } from '../lib/settings.js';
import { requiredEnv, serveForBenchmark } from './serve.js';
import { keepTickObjectShape } from '../../src/util/tick-object-shape.js';

// As src/server.ts does first.
keepTickObjectShape();

// Request logging at info would measure pino, not the service; warnings still show up on the runner's stderr.
const config = loadConfig({
  ...process.env,
  EAS_LOG_LEVEL: process.env.EAS_LOG_LEVEL ?? 'warn',
  EAS_MASTER_KEY: BENCH_MASTER_KEY,
});

async function pgliteStorage(): Promise<Storage> {
  // In memory, unless BENCH_PGLITE_DIR names a data directory (the attachments benchmark: stored files in memory
  // would be the server's RSS); with one, attachment files in its folder, as src/server.ts keeps them.
  const dataDir = process.env.BENCH_PGLITE_DIR;
  const storage = await openStorage(
    dataDir
      ? {
          kind: 'pglite',
          dataDir,
          attachmentsDir: config.attachmentsDir ?? join(dataDir, DOCLINKS_FOLDER),
        }
      : { kind: 'pglite' },
  );
  await migrateToLatest(storage);
  await ensureAdministrator(storage.db, await hashPassword(BENCH_ADMIN_PASSWORD));
  await seedDemoData(storage, { passwordHash: await hashPassword(BENCH_DEMO_PASSWORD) });
  return storage;
}

const storage =
  process.env.BENCH_STORAGE === 'pglite'
    ? await pgliteStorage()
    : await openStorage({
        kind: 'postgres',
        url: requiredEnv('BENCH_DATABASE_URL'),
        schema: requiredEnv('BENCH_SCHEMA'),
        ...(config.attachmentsDir && { attachmentsDir: config.attachmentsDir }),
      });
// The peak of V8's used heap since the process started, for the deploy benchmark (bench/README.md, "Deploy"): sampled
// here, in the server, and written to a file the runner reads after each step (only when it grew by 1 MiB or more).
const heapFile = process.env.BENCH_HEAP_FILE;
if (heapFile) {
  let peak = 0;
  let written = 0;
  setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    if (peak - written < 2 ** 20) return;
    written = peak;
    writeFileSync(heapFile, String(peak));
  }, 50).unref();
}
const { app } = await buildApp(config, storage);
await serveForBenchmark(app, () => storage.close());
