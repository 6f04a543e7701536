import { hkdfSync } from 'node:crypto';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { ConfigError } from '../config.js';
import { EVERYTHING_CHANGED } from '../db/change-bus.js';
import type { Storage } from '../db/database.js';
import type { Database } from '../db/schema.js';
import {
  findCheckValue,
  findOneSealedKey,
  insertCheckValue,
  lockSealedKeys,
  replaceCheckValue,
  resealKey,
} from './key-check-repository.js';
import { KeyVault, MASTER_KEY_FILE } from './vault.js';

/** Name of the master key's row of check values, and the variable that sets the key. */
export const MASTER_KEY_VARIABLE = 'EAS_MASTER_KEY';
/** Where the re-seal command reads the new master key (never from its arguments: they show in `ps`). */
export const NEW_MASTER_KEY_VARIABLE = 'EAS_NEW_MASTER_KEY';
const MIN_MASTER_KEY_LENGTH = 32;

/**
 * A value derived from the master key (HKDF with a purpose of its own, so it reveals nothing of the sealing or
 * digest keys) that is stored in the database: a process started with another key sees the difference at once.
 */
export function masterKeyCheckValue(master: Buffer): string {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'eas master key check', 32)).toString('hex');
}

function mismatch(configured: boolean, dataDir: string): ConfigError {
  const source = configured
    ? ''
    : ` (${MASTER_KEY_VARIABLE} is unset, so the key file ${join(dataDir, MASTER_KEY_FILE)} was used)`;
  return new ConfigError(
    MASTER_KEY_VARIABLE,
    `does not match the master key that sealed the stored API keys${source}. Start every process with that key, ` +
      `or re-seal the keys under a new one with "npm run admin -- reseal-keys" (docs/security.md).`,
  );
}

/**
 * Refuses a master key other than the one that sealed the stored keys. On the first start of a database (or of
 * this release) the key's check value is stored, once a stored key, if there is one, has opened with it.
 */
export async function checkMasterKey(
  storage: Storage,
  master: Buffer,
  where: { configured: boolean; dataDir: string },
): Promise<void> {
  const db = storage.db;
  const expected = masterKeyCheckValue(master);
  let stored = await findCheckValue(db, MASTER_KEY_VARIABLE);
  if (stored === undefined) {
    const sample = await findOneSealedKey(db);
    if (sample && new KeyVault(master).open(sample.apikey) === undefined) {
      throw mismatch(where.configured, where.dataDir);
    }
    await insertCheckValue(db, MASTER_KEY_VARIABLE, expected);
    stored = await findCheckValue(db, MASTER_KEY_VARIABLE);
  }
  if (stored !== expected) throw mismatch(where.configured, where.dataDir);
}

/** The new master key of a rotation, from EAS_NEW_MASTER_KEY. */
export function newMasterKey(env: NodeJS.ProcessEnv): Buffer {
  const value = env[NEW_MASTER_KEY_VARIABLE];
  if (value === undefined || value.length < MIN_MASTER_KEY_LENGTH) {
    throw new ConfigError(
      NEW_MASTER_KEY_VARIABLE,
      `must hold the new master key, ${MIN_MASTER_KEY_LENGTH} characters or more`,
    );
  }
  return Buffer.from(value, 'utf8');
}

/**
 * Rotation: every stored key opened with the current master key and sealed (and digested) under the next one,
 * with the check value, in one transaction; all or nothing. The current key must be the one in use. Returns the
 * number of keys re-sealed. Processes still running with the old key stop accepting keys: stop them first.
 * `alsoInside` runs last in the same transaction, with the count: what else is keyed from the master key (the
 * audit trail, docs/audit.md) is re-keyed with the keys or not at all.
 */
export async function resealKeys(
  storage: Storage,
  current: Buffer,
  next: Buffer,
  where: { configured: boolean; dataDir: string },
  alsoInside?: (transaction: Kysely<Database>, keys: number) => Promise<void>,
): Promise<number> {
  await checkMasterKey(storage, current, where);
  const from = new KeyVault(current);
  const to = new KeyVault(next);
  const db = storage.db;
  const count = await db.transaction().execute(async (transaction) => {
    const rows = await lockSealedKeys(transaction);
    for (const row of rows) {
      const clear = from.open(row.apikey);
      if (clear === undefined) {
        throw new Error(
          `The API key ${row.apikeytokenid} does not open with the current master key; nothing was changed.`,
        );
      }
      await resealKey(transaction, row.apikeytokenid, to.seal(clear), to.digest(clear));
    }
    await replaceCheckValue(transaction, MASTER_KEY_VARIABLE, masterKeyCheckValue(next));
    await alsoInside?.(transaction, rows.length);
    await storage.bus.notify<Database>(transaction, 'apikey', EVERYTHING_CHANGED);
    return rows.length;
  });
  return count;
}
