import type { Server } from 'node:http';
import { join } from 'node:path';
import { buildApp } from './app.js';
import { DOCLINKS_FOLDER } from './attachments/content-folder.js';
import { startMetricsListener } from './metrics/routes.js';
import { administratorExists, ensureAdministrator } from './auth/bootstrap.js';
import { generatePassword, hashPassword } from './auth/password.js';
import { ConfigError, loadConfig, type AppConfig } from './config.js';
import { DataDirectoryLockedError } from './db/data-dir-lock.js';
import { describeFault, isDatabaseUnavailable } from './db/faults.js';
import {
  MigrationError,
  migrateToLatest,
  openStorage,
  SchemaRefusedError,
  type Storage,
} from './db/database.js';
import { deferWasmTierUp } from './db/wasm-tier-up.js';
import { isDemoDataLoaded, seedDemoData } from './demo/seed.js';
import { MetadataError } from './metadata/validate.js';
import { deploymentIdentity } from './system/deployment-identity.js';
import { exampleRequest } from './system/welcome.js';
import { keepTickObjectShape } from './util/tick-object-shape.js';

// Before the database opens (docs/startup.md, "WebAssembly tier-up").
deferWasmTierUp();

/** Starts one server process: configuration, storage and schema, first-start data, then the HTTP listener. */
async function main(): Promise<void> {
  keepTickObjectShape();
  const config = loadConfig();
  // Connection faults outside a request go to the app's log once it exists (one line each, no details).
  let reportFault = (description: string): void => {
    process.stderr.write(`eas: database: ${description}\n`);
  };
  const storage = await openStorage(
    config.databaseUrl
      ? {
          kind: 'postgres',
          url: config.databaseUrl,
          ...(config.databaseSchema && { schema: config.databaseSchema }),
          onFault: (description) => reportFault(description),
          ...(config.attachmentsDir && { attachmentsDir: config.attachmentsDir }),
        }
      : {
          kind: 'pglite',
          dataDir: config.dataDir,
          // The embedded database's attachments live beside its files, so that its backup holds them.
          attachmentsDir: config.attachmentsDir ?? join(config.dataDir, DOCLINKS_FOLDER),
        },
  );
  await migrateToLatest(storage);
  // The deployment's identity before anything names it: the demo definitions do, as every definition does.
  await deploymentIdentity(storage.db, storage.kind === 'pglite' ? config.dataDir : undefined);
  const notes = await firstStart(config, storage);
  // Before anything else can fail (the port taken, a bad certificate): a generated password exists only in this
  // process, and a start that failed after storing its hash must not lose it (docs/startup.md, "First start").
  printGeneratedPasswords(notes);
  const { app, services } = await buildApp(config, storage);
  reportFault = (description) => app.log.warn(`database connection: ${description}`);

  // Graceful shutdown (docs/operations.md): stop accepting, let requests in flight finish within the shutdown
  // timeout, then close what remains, the pool and the data directory, and exit 0.
  let metricsListener: Server | undefined;
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const { shutdownTimeoutMs } = config.limits;
    const force = setTimeout(() => {
      app.log.warn(`requests still in flight after ${shutdownTimeoutMs / 1000} s: closing their connections`);
      app.server.closeAllConnections();
    }, shutdownTimeoutMs);
    try {
      metricsListener?.close();
      await app.close();
    } catch (error) {
      app.log.error({ err: error }, 'closing the listener failed');
    } finally {
      clearTimeout(force);
    }
    await storage.close().catch((error: unknown) => app.log.error({ err: error }, 'closing storage failed'));
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  await app.listen({ port: config.port, host: config.host });
  if (config.metrics.port !== undefined) {
    metricsListener = await startMetricsListener(services.metrics, {
      port: config.metrics.port,
      host: config.metrics.host,
      contextRoot: config.contextRoot,
    });
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const metricsAddress = metricsListener?.address();
  const metricsPort = typeof metricsAddress === 'object' && metricsAddress ? metricsAddress.port : undefined;
  printWelcome(config, storage, port, notes, metricsPort);
}

interface FirstStartNotes {
  adminPassword?: string;
  demoPassword?: string;
  demoLoaded: boolean;
}

/**
 * The administrator on first start, and the demo data when asked for; generated passwords are shown once. A
 * restart finds both and hashes nothing (a password hash costs tens of milliseconds of start-up by design); on a
 * first start the two hashes run side by side.
 */
async function firstStart(config: AppConfig, storage: Storage): Promise<FirstStartNotes> {
  const notes: FirstStartNotes = { demoLoaded: false };
  const [adminPresent, demoPresent] = await Promise.all([
    administratorExists(storage.db),
    config.demo ? isDemoDataLoaded(storage.db) : true,
  ]);
  const adminPassword = adminPresent ? undefined : (config.adminPassword ?? generatePassword());
  const demoPassword = demoPresent ? undefined : (config.demoPassword ?? generatePassword());
  const [adminHash, demoHash] = await Promise.all([
    adminPassword === undefined ? undefined : hashPassword(adminPassword),
    demoPassword === undefined ? undefined : hashPassword(demoPassword),
  ]);
  if (adminPassword !== undefined && adminHash !== undefined) {
    const created = await ensureAdministrator(storage.db, adminHash);
    if (created && !config.adminPassword) notes.adminPassword = adminPassword;
  }
  if (demoPassword !== undefined && demoHash !== undefined) {
    const summary = await seedDemoData(storage, { passwordHash: demoHash });
    notes.demoLoaded = summary.assets > 0;
    if (notes.demoLoaded && !config.demoPassword) notes.demoPassword = demoPassword;
  }
  return notes;
}

/** The command that replaces a lost administrator password (src/admin/cli.ts). */
const RESET_ADMIN_PASSWORD = 'npm run admin -- reset-password MAXADMIN';

function printGeneratedPasswords(notes: FirstStartNotes): void {
  const lines: string[] = [];
  if (notes.adminPassword)
    lines.push(
      `eas: first start: administrator MAXADMIN created with the generated password ${notes.adminPassword}`,
      `     (shown only now: keep it; set EAS_ADMIN_PASSWORD to choose it; lost, replace it: ${RESET_ADMIN_PASSWORD})`,
    );
  if (notes.demoPassword)
    lines.push(
      `eas: first start: demo users WILSON, SMITH created with the generated password ${notes.demoPassword}`,
    );
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
}

function printWelcome(
  config: AppConfig,
  storage: Storage,
  port: number,
  notes: FirstStartNotes,
  metricsPort: number | undefined,
): void {
  const base = `http://${config.host}:${port}${config.contextRoot}`;
  const storageText =
    storage.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`;
  const lines = [
    '',
    `Enterprise Asset Service listening on ${base}  (storage: ${storageText})`,
    notes.adminPassword
      ? `  Administrator: MAXADMIN / ${notes.adminPassword}   (generated; shown only now, set EAS_ADMIN_PASSWORD to choose it)`
      : `  Administrator: MAXADMIN (password from EAS_ADMIN_PASSWORD, or the one printed at first start; lost: ${RESET_ADMIN_PASSWORD})`,
  ];
  if (metricsPort !== undefined) {
    lines.push(
      `  Metrics: http://${config.metrics.host}:${metricsPort}/metrics   (EAS_METRICS_PORT, no login)`,
    );
  }
  if (notes.demoLoaded) {
    lines.push(
      notes.demoPassword
        ? `  Demo users: WILSON, SMITH / ${notes.demoPassword}   (generated; shown only now)`
        : '  Demo users: WILSON, SMITH (password from EAS_DEMO_PASSWORD)',
    );
  }
  // A password known only to the operator is not printed: the example then builds the header in the shell.
  lines.push('', 'Try:', `  ${exampleRequest(base, notes.adminPassword)}`, '');
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  // A schema this release cannot serve (docs/deploy.md, "Rolling upgrade"): exit 4, as `upgrade check` answers no.
  if (error instanceof SchemaRefusedError) {
    process.stderr.write(`eas: ${error.message}\n`);
    process.exit(4);
  }
  if (
    error instanceof ConfigError ||
    error instanceof MigrationError ||
    error instanceof DataDirectoryLockedError ||
    // Names every bad definition (src/metadata/README.md); the stack would add nothing.
    error instanceof MetadataError
  ) {
    process.stderr.write(`eas: ${error.message}\n`);
  } else if ((error as { code?: unknown } | null)?.code === 'EADDRINUSE') {
    process.stderr.write(
      `eas: start-up failed: the address is in use (PORT, HOST): ${(error as Error).message}\n`,
    );
  } else if (isDatabaseUnavailable(error)) {
    // The error's own text names the server and port (docs/operations.md): its code says enough.
    process.stderr.write(`eas: start-up failed: the database cannot be reached: ${describeFault(error)}\n`);
  } else {
    process.stderr.write(
      `eas: start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
