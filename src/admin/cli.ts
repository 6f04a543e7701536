import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { newMasterKey, resealKeys } from '../apikeys/master-key.js';
import { loadMasterKey } from '../apikeys/vault.js';
import { generatePassword, hashPassword } from '../auth/password.js';
import { setUserPassword, unblockUser } from '../auth/session-repository.js';
import { ConfigError, loadConfig, type AppConfig } from '../config.js';
import { migrateToLatest, openStorage, type Storage } from '../db/database.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * Administration from the server's shell, for what cannot wait for an administrator's login (docs/security.md):
 * `npm run admin -- <command>`. Same environment as the server (DATABASE_URL, EAS_DATA_DIR, EAS_MASTER_KEY, ...).
 * On PGlite the server must be stopped first (one process per data directory); on PostgreSQL running servers
 * learn of the change through the change bus.
 */
const USAGE = `Usage: npm run admin -- <command>

Commands:
  unlock <userid>           End the user's block after failed logins (temporary or permanent).
  reset-password <userid>   Give the user a new password (EAS_NEW_PASSWORD, else generated and printed) and unlock it.
  reseal-keys               Re-seal every stored API key under the master key in EAS_NEW_MASTER_KEY (rotation).
  help                      This text.
`;

export interface AdminIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/** Runs one command on open storage; returns the exit code. */
export async function runAdmin(
  argv: readonly string[],
  storage: Storage,
  config: AppConfig,
  io: AdminIo,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: {} });
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  const userid = rest[0]?.toUpperCase();
  const needsUser = command === 'unlock' || command === 'reset-password';
  if (needsUser && (rest.length !== 1 || !userid)) {
    io.err(`${command} takes one user id.\n\n${USAGE}`);
    return 2;
  }
  switch (command) {
    case 'unlock':
      return unlock(storage, userid!, io);
    case 'reset-password':
      return resetPassword(storage, userid!, io);
    case 'reseal-keys': {
      if (rest.length !== 0) {
        io.err(`reseal-keys takes no arguments.\n\n${USAGE}`);
        return 2;
      }
      const where = { configured: config.apiKeys.masterKey !== undefined, dataDir: config.dataDir };
      const current = await loadMasterKey(config.apiKeys.masterKey, config.dataDir);
      const count = await resealKeys(storage, current, newMasterKey(io.env), where);
      io.out(
        `Re-sealed ${count} API key(s) under the new master key. Start every server with EAS_MASTER_KEY set to ` +
          `the value of EAS_NEW_MASTER_KEY; a process with the old key now refuses to start.\n`,
      );
      return 0;
    }
    case undefined:
    case 'help':
      io.out(USAGE);
      return command === undefined ? 2 : 0;
    default:
      io.err(`Unknown command ${command}.\n\n${USAGE}`);
      return 2;
  }
}

/** Changes the user and tells every running process to drop what it holds of users (the write path's channel). */
async function changeUser<T>(storage: Storage, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const db = storage.db;
  return db.transaction().execute(async (transaction) => {
    const result = await work(transaction);
    await storage.bus.notify<Database>(transaction, 'object', 'MAXUSER');
    return result;
  });
}

async function unlock(storage: Storage, userid: string, io: AdminIo): Promise<number> {
  const user = await changeUser(storage, (db) => unblockUser(db, userid));
  if (!user) {
    io.err(`No user ${userid}.\n`);
    return 1;
  }
  io.out(`${user.userid} is unblocked (status ${user.status}); it can log in again.\n`);
  return 0;
}

async function resetPassword(storage: Storage, userid: string, io: AdminIo): Promise<number> {
  const chosen = io.env.EAS_NEW_PASSWORD;
  if (chosen !== undefined && chosen.length < 8) {
    io.err('EAS_NEW_PASSWORD must have 8 characters or more.\n');
    return 2;
  }
  const password = chosen ?? generatePassword();
  const hash = await hashPassword(password);
  const user = await changeUser(storage, async (db) => {
    const found = await setUserPassword(db, userid, hash);
    return found && unblockUser(db, userid);
  });
  if (!user) {
    io.err(`No user ${userid}.\n`);
    return 1;
  }
  io.out(
    chosen === undefined
      ? `${user.userid} has a new password: ${password}\n`
      : `${user.userid} has the password from EAS_NEW_PASSWORD.\n`,
  );
  return 0;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const io: AdminIo = {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: process.env,
  };
  if (argv.length === 0 || argv[0] === 'help') {
    io.out(USAGE);
    process.exit(argv.length === 0 ? 2 : 0);
  }
  const config = loadConfig();
  const storage = await openStorage(
    config.databaseUrl
      ? {
          kind: 'postgres',
          url: config.databaseUrl,
          ...(config.databaseSchema && { schema: config.databaseSchema }),
        }
      : { kind: 'pglite', dataDir: config.dataDir },
  );
  let code: number;
  try {
    await migrateToLatest(storage);
    code = await runAdmin(argv, storage, config, io);
  } finally {
    await storage.close();
  }
  process.exit(code);
}

const entry = process.argv[1];
if (entry && import.meta.url === pathToFileURL(realpathSync(entry)).href) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `eas admin: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}
