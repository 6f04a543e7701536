import type { Kysely } from 'kysely';
import { withRecord } from '../audit/repository.js';
import { StatementTemplate } from '../db/prepared-statements.js';
import type { AuditRecord } from '../audit/types.js';
import type { Database } from '../db/schema.js';

/** What verifying a presented key needs of its row. */
export interface KeyOwner {
  apikeytokenid: number;
  userid: string;
  expiration: number;
  creationdate: Date;
  exposedinurl: boolean;
}

export async function findByDigest(db: Kysely<Database>, digest: string): Promise<KeyOwner | undefined> {
  return db
    .selectFrom('apikeytoken')
    .select(['apikeytokenid', 'userid', 'expiration', 'creationdate', 'exposedinurl'])
    .where('apikeydigest', '=', digest)
    .executeTakeFirst();
}

export async function hasKey(db: Kysely<Database>, userid: string): Promise<boolean> {
  const row = await db
    .selectFrom('apikeytoken')
    .select('apikeytokenid')
    .where('userid', '=', userid)
    .executeTakeFirst();
  return row !== undefined;
}

/** When the user's key was made and for how long, without its value; undefined when the user has none. */
export async function findOwnKey(
  db: Kysely<Database>,
  userid: string,
): Promise<{ expiration: number; creationdate: Date } | undefined> {
  return db
    .selectFrom('apikeytoken')
    .select(['expiration', 'creationdate'])
    .where('userid', '=', userid)
    .executeTakeFirst();
}

export interface NewKey {
  userid: string;
  sealed: string;
  digest: string;
  expiration: number;
  creationdate: Date;
}

/**
 * Creates the user's key, or replaces the one it has (the old value stops matching in the same statement), and writes
 * the change's audit record, when there is one, in that statement too.
 */
export function keyUpsert(db: Kysely<Database>, key: NewKey, record?: AuditRecord) {
  return withRecord(db, record)
    .insertInto('apikeytoken')
    .values({
      userid: key.userid,
      apikey: key.sealed,
      apikeydigest: key.digest,
      expiration: key.expiration,
      creationdate: key.creationdate,
    })
    .onConflict((conflict) =>
      conflict.column('userid').doUpdateSet({
        apikey: key.sealed,
        apikeydigest: key.digest,
        expiration: key.expiration,
        creationdate: key.creationdate,
        exposedinurl: false,
        exposeddate: null,
      }),
    );
}

/** Writes `keyUpsert`, from its template (compiled once, sent by name): it runs inside the lock of the user's key row. */
export async function upsertKey(db: Kysely<Database>, key: NewKey, record?: AuditRecord): Promise<void> {
  await keyTemplate.execute(db, key, record);
}

const keyTemplate = new StatementTemplate(keyUpsert);

/** Deletes the user's key; true when there was one. */
export async function deleteKey(db: Kysely<Database>, userid: string): Promise<boolean> {
  const result = await db.deleteFrom('apikeytoken').where('userid', '=', userid).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Marks a key as sent in a URL, once: the first time is the one administrators need to know. */
export async function markExposed(db: Kysely<Database>, digest: string, when: Date): Promise<boolean> {
  const result = await db
    .updateTable('apikeytoken')
    .set({ exposedinurl: true, exposeddate: when })
    .where('apikeydigest', '=', digest)
    .where('exposedinurl', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Rows of the plain-text layout (before 0007-apikeys): a value but no digest yet. */
export async function findPlainKeys(
  db: Kysely<Database>,
): Promise<Array<{ apikeytokenid: number; apikey: string }>> {
  return db
    .selectFrom('apikeytoken')
    .select(['apikeytokenid', 'apikey'])
    .where('apikeydigest', 'is', null)
    .execute();
}

/** Seals one plain-text row, unless another process already did. */
export async function sealPlainKey(
  db: Kysely<Database>,
  id: number,
  sealed: string,
  digest: string,
): Promise<void> {
  await db
    .updateTable('apikeytoken')
    .set({ apikey: sealed, apikeydigest: digest })
    .where('apikeytokenid', '=', id)
    .where('apikeydigest', 'is', null)
    .execute();
}
