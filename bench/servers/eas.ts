// The service under test, as `npm start` builds it, on the benchmark's PostgreSQL schema (already loaded).
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openStorage } from '../../src/db/database.js';
import { BENCH_MASTER_KEY } from '../lib/settings.js';
import { requiredEnv, serveForBenchmark } from './serve.js';

const storage = await openStorage({
  kind: 'postgres',
  url: requiredEnv('BENCH_DATABASE_URL'),
  schema: requiredEnv('BENCH_SCHEMA'),
});
// Request logging at info would measure pino, not the service; warnings still show up on the runner's stderr.
const config = loadConfig({
  ...process.env,
  EAS_LOG_LEVEL: process.env.EAS_LOG_LEVEL ?? 'warn',
  EAS_MASTER_KEY: BENCH_MASTER_KEY,
});
const { app } = await buildApp(config, storage);
await serveForBenchmark(app, () => storage.close());
