import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { typedView, type DynamicDatabase } from '../../db/schema.js';

/**
 * Repository of stable page sets (`stablepaging=1`, README.md, "Paging"), in the tables of migration
 * 0003-stable-pages so that every process of the service sees them. A set is owned by the user and object
 * structure that made it; it lives until it has been idle longer than the idle expiry (`mxe.oslc.idleexiry`).
 */

/** Who may read a set: a stable id is a bearer token only for the user and structure it was made for. */
export interface StableSetOwner {
  objectStructure: string;
  userid: string;
}

/** Shape of a stable id: what `newStableId` makes. Anything else cannot name a set. */
export const STABLE_ID = /^[A-Za-z0-9_-]{24}$/;

/** 18 random bytes: unguessable, and URL-safe as base64url. */
export const newStableId = (): string => randomBytes(18).toString('base64url');

/** Last access older than this many seconds means the set has expired. */
const idleLimit = (idleSeconds: number) =>
  sql<Date>`now() - make_interval(secs => cast(${Math.max(0, idleSeconds)} as double precision))`;

/**
 * Makes a set in one transaction: drops the sets that expired meanwhile, writes the header, lets `fillMembers`
 * write the members (with the transaction it is given), and records how many there are.
 */
export async function createStableSet(
  db: Kysely<DynamicDatabase>,
  stableId: string,
  owner: StableSetOwner,
  idleSeconds: number,
  fillMembers: (transaction: Kysely<DynamicDatabase>) => Promise<number>,
): Promise<number> {
  return db.transaction().execute(async (transaction) => {
    const store = typedView(transaction);
    await store.deleteFrom('oslc_stable_set').where('lastaccess', '<', idleLimit(idleSeconds)).execute();
    await store
      .insertInto('oslc_stable_set')
      .values({ stableid: stableId, objectstructure: owner.objectStructure, userid: owner.userid, total: 0 })
      .execute();
    const total = await fillMembers(transaction);
    await store.updateTable('oslc_stable_set').set({ total }).where('stableid', '=', stableId).execute();
    return total;
  });
}

/**
 * Marks a set as used now and answers its size; undefined when there is no such set for this owner, or when it
 * had been idle too long (it is then removed).
 */
export async function touchStableSet(
  db: Kysely<DynamicDatabase>,
  stableId: string,
  owner: StableSetOwner,
  idleSeconds: number,
): Promise<number | undefined> {
  const store = typedView(db);
  const row = await store
    .updateTable('oslc_stable_set')
    .set({ lastaccess: sql<Date>`now()` })
    .where('stableid', '=', stableId)
    .where('objectstructure', '=', owner.objectStructure)
    .where('userid', '=', owner.userid)
    .where('lastaccess', '>=', idleLimit(idleSeconds))
    .returning('total')
    .executeTakeFirst();
  if (row) return row.total;
  await store
    .deleteFrom('oslc_stable_set')
    .where('stableid', '=', stableId)
    .where('lastaccess', '<', idleLimit(idleSeconds))
    .execute();
  return undefined;
}
