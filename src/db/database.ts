import { PGlite } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PGliteChangeBus, PostgresChangeBus, type ChangeBus } from './change-bus.js';
import { copyClusterTemplate } from './cluster-template.js';
import { lockDataDirectory } from './data-dir-lock.js';
import { DurableNodeFS } from './durable-node-fs.js';
import { describeFault } from './faults.js';
import { PGliteDialect } from './pglite-dialect.js';
import { keepOnPool, preparingPool } from './prepared-statements.js';
import { migrationProviderOf, migrations } from './migrations/index.js';
import { planMigrations } from './migration-plan.js';
import { appliedMigrations, observeSchema, recordPhases, upToDate } from './schema-state.js';
import type { Database } from './schema.js';
import { DATE_OID, parseDate, parseTimestamp, TIMESTAMP_OID, TIMESTAMPTZ_OID } from './timestamps.js';

export type DatabaseKind = 'pglite' | 'postgres';

/** An open database: the query builder, the change bus of its processes, and how to close both. */
export interface Storage {
  kind: DatabaseKind;
  db: Kysely<Database>;
  bus: ChangeBus;
  /** Connections of the PostgreSQL pool (the metrics read it); PGlite has one connection and no pool. */
  poolUsage?: () => PoolUsage;
  /**
   * The embedded database's files held still (PGlite in a data directory only): once every open transaction has
   * ended, a checkpoint writes every change into them, and no statement runs until `read` settles
   * (src/backup/README.md).
   */
  holdFiles?: <T>(read: (dataDir: string) => Promise<T>) => Promise<T>;
  /**
   * The folder uploaded attachment content is kept in as files (src/attachments/README.md, "Where content is
   * kept"); none: chunks in the database.
   */
  attachmentsDir?: string;
  close(): Promise<void>;
}

export interface PoolUsage {
  /** Most connections the pool opens. */
  max: number;
  /** Open connections, idle or checked out. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

export type StorageOptions =
  | { kind: 'pglite'; dataDir?: string; pglite?: PGlite; attachmentsDir?: string }
  | {
      kind: 'postgres';
      url: string;
      /** Attachment files, shared by every process of the deployment; none: attachment content in the database. */
      attachmentsDir?: string;
      schema?: string;
      poolSize?: number;
      /** Hears a connection lost outside any request (one line, see describeFault); default: stderr. */
      onFault?: (description: string) => void;
      /** How long a request waits for a connection before it fails with 503 (ms). */
      connectTimeoutMs?: number;
    };

/** Default wait for a pooled connection: a request fails (503) instead of hanging while the database is away. */
const CONNECT_TIMEOUT_MS = 5000;

const NUMERIC_OID = 1700;
const INT8_OID = 20;
const BYTEA_OID = 17;

/** Numbers come back as numbers on both engines: ids fit in 2^53, and decimals are amounts and durations. */
export const pgliteParsers = {
  [NUMERIC_OID]: Number,
  [INT8_OID]: Number,
  [TIMESTAMPTZ_OID]: parseTimestamp,
  [TIMESTAMP_OID]: parseTimestamp,
  [DATE_OID]: parseDate,
  [BYTEA_OID]: parseByteaHex,
};

/**
 * PGlite's own `bytea` serializer and parser convert the hex text byte by byte in JavaScript (a string and a
 * `parseInt` per byte): an attachment's 512 KB chunk took a tenth of a second each way, and ten times that written.
 * Node converts hex natively, as `pg` does. Every PGlite the service opens takes both.
 */
export const pgliteSerializers = {
  [BYTEA_OID]: (value: unknown): string => {
    if (!(value instanceof Uint8Array)) throw new TypeError('a bytea parameter must be a Uint8Array');
    return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
  },
};

/** `\x…` (the hex output format, PostgreSQL's default since 9.0) as the bytes it spells. */
function parseByteaHex(text: string): Buffer {
  return Buffer.from(text.slice(2), 'hex');
}

// Dates are sent in UTC, as PGlite sends them: a DATE attribute's value, midnight UTC, is then that day in a `date`
// column whatever the server's time zone (a timestamptz is the same instant either way).
pg.defaults.parseInputDatesAsUTC = true;

const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === NUMERIC_OID || oid === INT8_OID) return (value: string) => Number(value);
    if (oid === TIMESTAMPTZ_OID || oid === TIMESTAMP_OID) return parseTimestamp;
    if (oid === DATE_OID) return parseDate;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * PostgreSQL settings of the embedded database. Its shared buffers live in the process's WebAssembly memory, which
 * never shrinks: PostgreSQL's default of 128 MB is most of an idle server's memory, while the data a deployment on
 * one embedded database holds is read through the operating system's file cache anyway (docs/startup.md).
 */
const PGLITE_SHARED_BUFFERS = '16MB';

/**
 * PGlite starts PostgreSQL with `fsync` off (`-F`), and its `fdatasync` flushes nothing: a commit would survive the
 * process but not the machine. The embedded database is a system of record, so `fsync` is on and the write-ahead log
 * is flushed by `fsync`, which `DurableNodeFS` takes to the disk (docs/operations.md,
 * "Durability of the embedded database").
 */
const PGLITE_DURABILITY = ['-c', 'fsync=on', '-c', 'wal_sync_method=fsync'];

export function pgliteStartParams(): string[] {
  return [
    ...PGlite.defaultStartParams,
    '-c',
    `shared_buffers=${PGLITE_SHARED_BUFFERS}`,
    ...PGLITE_DURABILITY,
  ];
}

export async function openStorage(options: StorageOptions): Promise<Storage> {
  return options.kind === 'pglite' ? openPGlite(options) : openPostgres(options);
}

type PGliteOptions = Extract<StorageOptions, { kind: 'pglite' }>;
type PostgresOptions = Extract<StorageOptions, { kind: 'postgres' }>;

/** The embedded database, in the data directory (or in memory without one). */
async function openPGlite(options: PGliteOptions): Promise<Storage> {
  // One process per data directory (docs/operations.md): a second PGlite on the same files would lose writes.
  const lock = options.dataDir !== undefined ? await lockDataDirectory(options.dataDir) : undefined;
  // A first start copies the empty cluster `npm run build` made rather than running initdb (docs/startup.md).
  if (options.dataDir !== undefined && !options.pglite) await copyClusterTemplate(options.dataDir);
  const pglite =
    options.pglite ??
    new PGlite({
      ...(options.dataDir !== undefined && { fs: new DurableNodeFS(options.dataDir) }),
      parsers: pgliteParsers,
      serializers: pgliteSerializers,
      startParams: pgliteStartParams(),
    });
  await pglite.waitReady;
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  const bus = new PGliteChangeBus(pglite, 'eas');
  await bus.start();
  const dataDir = options.dataDir;
  return {
    kind: 'pglite',
    db,
    bus,
    ...(options.attachmentsDir && { attachmentsDir: options.attachmentsDir }),
    ...(dataDir !== undefined && {
      // The driver's one connection waits for the open transaction to end and keeps the next from starting; the
      // transaction mutex keeps out what calls PGlite without the driver (the change bus's LISTEN).
      holdFiles: <T>(read: (directory: string) => Promise<T>) =>
        db.connection().execute(async (connection) => {
          await sql`checkpoint`.execute(connection);
          return pglite._runExclusiveTransaction(() => read(dataDir));
        }),
    }),
    async close() {
      await bus.close();
      await db.destroy();
      await pglite.close();
      await lock?.release();
    },
  };
}

/** A PostgreSQL server: a pool for the queries, and a connection of its own for the change bus's LISTEN. */
async function openPostgres(options: PostgresOptions): Promise<Storage> {
  const searchPath = options.schema ? { options: `-c search_path=${options.schema}` } : {};
  const onFault =
    options.onFault ?? ((description: string) => process.stderr.write(`eas: database: ${description}\n`));
  const fault = (error: unknown) => onFault(describeFault(error));
  if (options.schema) {
    const admin = new pg.Client({ connectionString: options.url });
    admin.on('error', fault);
    await admin.connect();
    try {
      await admin.query(`create schema if not exists "${options.schema.replace(/"/g, '')}"`);
    } finally {
      await admin.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    types: pgTypes,
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    keepAlive: true,
    ...searchPath,
  });
  // An idle client that loses its connection (a database restart, a failover, a proxy's idle timeout) is
  // dropped by the pool, which then emits `error`: unheard, that would end the process. A client checked out by
  // a query emits `error` too; the query fails with it (503, see src/db/faults.ts) and the pool replaces the
  // client on release. Neither error is a reason to stop.
  pool.on('connect', (client) => client.on('error', fault));
  // The idle client's error was heard (and logged) by its own listener above.
  pool.on('error', () => undefined);
  const connectListener = async () => {
    const client = new pg.Client({
      connectionString: options.url,
      connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      keepAlive: true,
      ...searchPath,
    });
    await client.connect();
    return client;
  };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
  keepOnPool(db, pool);
  const bus = new PostgresChangeBus(connectListener, options.schema ?? 'eas');
  await bus.start();
  return {
    kind: 'postgres',
    db,
    bus,
    ...(options.attachmentsDir && { attachmentsDir: options.attachmentsDir }),
    poolUsage: () => ({
      max: pool.options.max,
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    }),
    async close() {
      await bus.close();
      await db.destroy();
    },
  };
}

export class MigrationError extends Error {}

/** Set when this build cannot serve the schema (src/db/migration-plan.ts): the server exits 4 with the reason. */
export class SchemaRefusedError extends MigrationError {}

/**
 * Brings the schema up to date as far as the processes serving it allow (src/db/README.md, "Phases"); a failing
 * migration is rolled back and reported with its name.
 */
export async function migrateToLatest(storage: Storage): Promise<string[]> {
  // Kysely looks for its migration tables in every schema unless told which one: a second schema on the same
  // server (another test file, the benchmarks) would hide them from this one.
  const { schema, applied } = await appliedMigrations(storage.db);
  // A restart finds every migration applied: one read of the migration table says so, where the migrator would
  // take its lock and read the catalog of every schema first (docs/startup.md).
  if (upToDate(applied)) return [];
  const observed = await observeSchema(storage.db, applied, registryOf(storage));
  const plan = planMigrations(migrations, observed);
  if (plan.refusal !== undefined) throw new SchemaRefusedError(`start-up refused: ${plan.refusal}`);
  if (plan.apply.length === 0) return [];
  const runnable = migrations.filter((migration) => !plan.deferred.includes(migration));
  const newer = plan.newer.map((migration) => migration.name);
  const migrator = new Migrator({
    db: storage.db,
    provider: migrationProviderOf(runnable, newer),
    // A contract migration left for later runs after the expand ones that follow it (src/db/README.md).
    allowUnorderedMigrations: true,
    migrationTableSchema: schema,
  });
  let { error, results } = await migrator.migrateToLatest();
  // Kysely's introspection reads every schema of the server; one dropped meanwhile by another deployment (or test
  // file) sharing the server fails the read with 3F000 naming that schema, 42P01 naming one of its tables, or 42703
  // naming one of their columns. Nothing was migrated then (no migration reports an error): read again.
  for (
    let attempt = 1;
    attempt < 5 &&
    !results?.some((result) => result.status === 'Error') &&
    isOtherSchemaDropped(error, schema);
    attempt += 1
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    ({ error, results } = await migrator.migrateToLatest());
  }
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new MigrationError(`Schema migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
  const done = (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName);
  await recordPhases(
    storage.db,
    runnable.filter((migration) => applied.has(migration.name) || done.includes(migration.name)),
  );
  return done;
}

/** The change bus's registration of this process (PostgreSQL), by which the others are found. */
export function registryOf(
  storage: Storage,
): { applicationName: string; ownPid: number | undefined } | undefined {
  return storage.bus instanceof PostgresChangeBus
    ? { applicationName: storage.bus.applicationName, ownPid: storage.bus.backendPid }
    : undefined;
}

/**
 * Whether the migration table of the current schema lists every migration this build needs: all it knows but the
 * contract ones, which wait for the earlier release's last process (src/db/README.md, "Phases").
 */
export async function appliedEverywhere(storage: Storage): Promise<boolean> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(storage.db);
  const applied = new Set(rows.map((row) => row.name));
  return migrations.every((migration) => migration.phase === 'contract' || applied.has(migration.name));
}

function isOtherSchemaDropped(error: unknown, ownSchema: string | undefined): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if ((code !== '3F000' && code !== '42P01' && code !== '42703') || typeof message !== 'string') return false;
  return !message.includes(`"${ownSchema ?? ''}"`) && !message.includes(`"${ownSchema ?? ''}.`);
}
