import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export type SamlDb = Kysely<Database>;

/**
 * Remembers an authentication request this service sent, until it expires, with the address that started it; that
 * address's oldest requests beyond `perAddress` are forgotten (their sign-ins can no longer complete).
 */
export async function saveRequest(
  db: SamlDb,
  request: { requestId: string; issued: Date; expires: Date; address: string },
  perAddress: number,
): Promise<void> {
  await db
    .insertInto('samlrequest')
    .values({
      requestid: request.requestId,
      issued: request.issued,
      expires: request.expires,
      address: request.address,
    })
    .onConflict((conflict) => conflict.column('requestid').doNothing())
    .execute();
  await db
    .deleteFrom('samlrequest')
    .where('requestid', 'in', (eb) =>
      eb
        .selectFrom('samlrequest')
        .select('requestid')
        .where('address', '=', request.address)
        .orderBy('issued', 'desc')
        .orderBy('requestid', 'desc')
        .offset(perAddress),
    )
    .execute();
}

/** How many requests are waiting for an answer (not expired), whatever their address. */
export async function countOutstanding(db: SamlDb, now: Date): Promise<number> {
  const row = await db
    .selectFrom('samlrequest')
    .select(sql<string>`count(*)`.as('count'))
    .where('expires', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.count);
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
