import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export async function findCheckValue(db: Kysely<Database>, keyname: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('easkeycheck')
    .select('checkvalue')
    .where('keyname', '=', keyname)
    .executeTakeFirst();
  return row?.checkvalue;
}

/** Stores the check value unless one is stored already (processes starting together: the first one wins). */
export async function insertCheckValue(
  db: Kysely<Database>,
  keyname: string,
  checkvalue: string,
): Promise<void> {
  await db
    .insertInto('easkeycheck')
    .values({ keyname, checkvalue, changedate: new Date() })
    .onConflict((conflict) => conflict.column('keyname').doNothing())
    .execute();
}

export async function replaceCheckValue(
  db: Kysely<Database>,
  keyname: string,
  checkvalue: string,
): Promise<void> {
  await db
    .insertInto('easkeycheck')
    .values({ keyname, checkvalue, changedate: new Date() })
    .onConflict((conflict) => conflict.column('keyname').doUpdateSet({ checkvalue, changedate: new Date() }))
    .execute();
}

/** One sealed key, to test a master key against when no check value is stored yet. */
export async function findOneSealedKey(
  db: Kysely<Database>,
): Promise<{ apikeytokenid: number; apikey: string } | undefined> {
  return db
    .selectFrom('apikeytoken')
    .select(['apikeytokenid', 'apikey'])
    .where('apikeydigest', 'is not', null)
    .orderBy('apikeytokenid')
    .limit(1)
    .executeTakeFirst();
}

/** Every sealed key, locked for the rest of the transaction (re-sealing). */
export async function lockSealedKeys(
  db: Kysely<Database>,
): Promise<Array<{ apikeytokenid: number; apikey: string }>> {
  return db
    .selectFrom('apikeytoken')
    .select(['apikeytokenid', 'apikey'])
    .where('apikeydigest', 'is not', null)
    .orderBy('apikeytokenid')
    .forUpdate()
    .execute();
}

export async function resealKey(
  db: Kysely<Database>,
  id: number,
  sealed: string,
  digest: string,
): Promise<void> {
  await db
    .updateTable('apikeytoken')
    .set({ apikey: sealed, apikeydigest: digest })
    .where('apikeytokenid', '=', id)
    .execute();
}
