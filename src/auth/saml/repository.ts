import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export type SamlDb = Kysely<Database>;

/** Remembers an authentication request this service sent, until it expires. */
export async function saveRequest(db: SamlDb, requestId: string, issued: Date, expires: Date): Promise<void> {
  await db
    .insertInto('samlrequest')
    .values({ requestid: requestId, issued, expires })
    .onConflict((conflict) => conflict.column('requestid').doNothing())
    .execute();
}

/** When the request was issued, if this service sent it and it has not expired. */
export async function findRequest(db: SamlDb, requestId: string, now: Date): Promise<Date | undefined> {
  const row = await db
    .selectFrom('samlrequest')
    .select('issued')
    .where('requestid', '=', requestId)
    .where('expires', '>', now)
    .executeTakeFirst();
  return row?.issued;
}

/**
 * Records the assertion as consumed; false when some process consumed it already. One statement, so two processes
 * receiving the same assertion at once cannot both succeed: the primary key lets one insert through.
 */
export async function consumeAssertion(
  db: SamlDb,
  assertion: { assertionId: string; userid: string; consumed: Date; expires: Date },
): Promise<boolean> {
  const inserted = await db
    .insertInto('samlassertion')
    .values({
      assertionid: assertion.assertionId,
      userid: assertion.userid,
      consumed: assertion.consumed,
      expires: assertion.expires,
    })
    .onConflict((conflict) => conflict.column('assertionid').doNothing())
    .returning('assertionid')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Deletes the requests and assertions whose validity has ended: an expired assertion is refused by its dates. */
export async function deleteExpired(db: SamlDb, now: Date): Promise<void> {
  await db.deleteFrom('samlrequest').where('expires', '<=', now).execute();
  await db.deleteFrom('samlassertion').where('expires', '<=', now).execute();
}
