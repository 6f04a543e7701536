import { sql, type Insertable, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { LoginTrackingTable } from './session-tables.js';

export interface SessionRow {
  sessionhash: string;
  tokenhash: string | null;
  userid: string;
  csrftoken: string;
  csrfrequired: boolean;
  lean: boolean | null;
  lastactive: Date;
  expires: Date;
}

const sessionColumns = [
  'sessionhash',
  'tokenhash',
  'userid',
  'csrftoken',
  'csrfrequired',
  'lean',
  'lastactive',
  'expires',
] as const;

export interface NewSession extends SessionRow {
  scheme: string;
  clientaddr: string | null;
  logindate: Date;
}

export async function insertSession(db: Kysely<Database>, session: NewSession): Promise<void> {
  await db.insertInto('maxsession').values(session).execute();
}

export async function findSession(
  db: Kysely<Database>,
  by: 'sessionhash' | 'tokenhash',
  hash: string,
): Promise<SessionRow | undefined> {
  return db.selectFrom('maxsession').select(sessionColumns).where(by, '=', hash).executeTakeFirst();
}

/**
 * Claims a sealed cookie (by the SHA-256 of its session form) until `expires`: true when this call made the claim,
 * false when the cookie was claimed before (stored by a replay, on any process, or ended).
 */
export async function claimSession(
  db: Kysely<Database>,
  sessionhash: string,
  expires: Date,
): Promise<boolean> {
  const claimed = await db
    .insertInto('maxsessionclaim')
    .values({ sessionhash, expires })
    .onConflict((conflict) => conflict.column('sessionhash').doNothing())
    .returning('sessionhash')
    .executeTakeFirst();
  return claimed !== undefined;
}

export async function isClaimed(db: Kysely<Database>, sessionhash: string): Promise<boolean> {
  const row = await db
    .selectFrom('maxsessionclaim')
    .select('sessionhash')
    .where('sessionhash', '=', sessionhash)
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteSession(db: Kysely<Database>, sessionhash: string): Promise<boolean> {
  const result = await db.deleteFrom('maxsession').where('sessionhash', '=', sessionhash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Ends a user's sessions beyond the `keep` most recently opened, and answers the ended ones (their hashes, for the
 * change bus). The user's index keeps this to the user's own rows.
 */
export async function deleteOldestSessions(
  db: Kysely<Database>,
  userid: string,
  keep: number,
): Promise<Array<{ sessionhash: string; tokenhash: string | null }>> {
  return db
    .deleteFrom('maxsession')
    .where('userid', '=', userid)
    .where('maxsessionid', 'not in', (eb) =>
      eb
        .selectFrom('maxsession as kept')
        .select('kept.maxsessionid')
        .where('kept.userid', '=', userid)
        .orderBy('kept.maxsessionid', 'desc')
        .limit(keep),
    )
    .returning(['sessionhash', 'tokenhash'])
    .execute();
}

/** Whether a user of this id exists (the shell's commands name users by id). */
export async function userExists(db: Kysely<Database>, userid: string): Promise<boolean> {
  const row = await db.selectFrom('maxuser').select('userid').where('userid', '=', userid).executeTakeFirst();
  return row !== undefined;
}

/** Ends every session of a user; answers the ended ones (their hashes, for the change bus). */
export async function deleteUserSessions(
  db: Kysely<Database>,
  userid: string,
): Promise<Array<{ sessionhash: string; tokenhash: string | null; userid: string }>> {
  return db
    .deleteFrom('maxsession')
    .where('userid', '=', userid)
    .returning(['sessionhash', 'tokenhash', 'userid'])
    .execute();
}

/** Records activity; never moves `lastactive` backwards (processes write back independently). */
export async function touchSession(
  db: Kysely<Database>,
  sessionhash: string,
  lastactive: Date,
): Promise<void> {
  await db
    .updateTable('maxsession')
    .set({ lastactive })
    .where('sessionhash', '=', sessionhash)
    .where('lastactive', '<', lastactive)
    .execute();
}

/** Deletes sessions past their absolute end, or idle since before `idleBefore`, and claims past their cookie's end. */
export async function purgeSessions(db: Kysely<Database>, now: Date, idleBefore: Date): Promise<void> {
  await db
    .deleteFrom('maxsession')
    .where((eb) => eb.or([eb('expires', '<=', now), eb('lastactive', '<', idleBefore)]))
    .execute();
  await db.deleteFrom('maxsessionclaim').where('expires', '<=', now).execute();
}

/** Sessions neither past their absolute end nor idle since before `idleBefore`, of every process. */
export async function countLiveSessions(db: Kysely<Database>, now: Date, idleBefore: Date): Promise<number> {
  const row = await db
    .selectFrom('maxsession')
    .select((eb) => eb.fn.countAll<number>().as('live'))
    .where('expires', '>', now)
    .where('lastactive', '>=', idleBefore)
    .executeTakeFirstOrThrow();
  return Number(row.live);
}

export async function insertLoginTrackingRows(
  db: Kysely<Database>,
  rows: ReadonlyArray<Insertable<LoginTrackingTable>>,
): Promise<void> {
  if (rows.length > 0)
    await db
      .insertInto('logintracking')
      .values([...rows])
      .execute();
}

export interface AddressFailures {
  failures: number;
  blockeduntil: Date | null;
}

/**
 * Counts one failed login of a client address in its window: a failure after the window (which began at the first
 * failure counted in it) starts a new window.
 */
export async function countAddressFailure(
  db: Kysely<Database>,
  clientaddr: string,
  now: Date,
  windowStartedBefore: Date,
): Promise<AddressFailures> {
  return db
    .insertInto('loginblock')
    .values({ clientaddr, failures: 1, windowstart: now, blockeduntil: null })
    .onConflict((conflict) =>
      conflict.column('clientaddr').doUpdateSet({
        failures: sql<number>`case when loginblock.windowstart <= ${windowStartedBefore} then 1 else loginblock.failures + 1 end`,
        windowstart: sql<Date>`case when loginblock.windowstart <= ${windowStartedBefore} then ${now}::timestamptz else loginblock.windowstart end`,
      }),
    )
    .returning(['failures', 'blockeduntil'])
    .executeTakeFirstOrThrow();
}

export async function blockAddress(db: Kysely<Database>, clientaddr: string, until: Date): Promise<void> {
  await db
    .updateTable('loginblock')
    .set({ blockeduntil: until })
    .where('clientaddr', '=', clientaddr)
    .execute();
}

export async function activeAddressBlocks(
  db: Kysely<Database>,
  now: Date,
): Promise<Array<{ clientaddr: string; blockeduntil: Date }>> {
  const rows = await db
    .selectFrom('loginblock')
    .select(['clientaddr', 'blockeduntil'])
    .where('blockeduntil', '>', now)
    .execute();
  return rows.flatMap((row) =>
    row.blockeduntil ? [{ clientaddr: row.clientaddr, blockeduntil: row.blockeduntil }] : [],
  );
}

/**
 * Counts one failed login against the user a login name designates (by user id or login id, any case) and blocks
 * the user when the count reaches `maxFailures` (0 = never). One statement whether or not the user exists, so that
 * the work, and the time, do not tell. With `blockUntil` the block is temporary: the status stays ACTIVE, the
 * count starts again, and failures during the block neither count nor lengthen it; without, the status becomes
 * BLOCKED until an administrator reactivates the user.
 */
export async function countUserFailure(
  db: Kysely<Database>,
  login: string,
  maxFailures: number,
  now: Date,
  blockUntil: Date | null,
): Promise<{ userid: string; failedlogins: number; status: string; blockeduntil: Date | null } | undefined> {
  const upper = login.toUpperCase();
  const reaches = sql<boolean>`(${maxFailures}::integer > 0 and failedlogins + 1 >= ${maxFailures}::integer and status = 'ACTIVE')`;
  const blockedNow = sql<boolean>`(blockeduntil is not null and blockeduntil > ${now})`;
  const set =
    blockUntil === null
      ? {
          failedlogins: sql<number>`failedlogins + 1`,
          status: sql<string>`case when ${reaches} then 'BLOCKED' else status end`,
        }
      : {
          failedlogins: sql<number>`case when ${blockedNow} then failedlogins when ${reaches} then 0 else failedlogins + 1 end`,
          blockeduntil: sql<Date | null>`case when ${blockedNow} then blockeduntil when ${reaches} then ${blockUntil}::timestamptz else blockeduntil end`,
        };
  return db
    .updateTable('maxuser')
    .set(set)
    .where('userid', '=', (eb) =>
      eb
        .selectFrom('maxuser as login')
        .select('login.userid')
        .where((inner) => inner.or([inner('login.userid', '=', upper), inner('login.loginid', '=', upper)]))
        .orderBy('login.userid')
        .limit(1),
    )
    .returning(['userid', 'failedlogins', 'status', 'blockeduntil'])
    .executeTakeFirst();
}

/** Ends a user's block, temporary or not, and its failure count: the recovery command (src/admin/cli.ts). */
export async function unblockUser(
  db: Kysely<Database>,
  userid: string,
): Promise<{ userid: string; status: string } | undefined> {
  return db
    .updateTable('maxuser')
    .set({
      failedlogins: 0,
      blockeduntil: null,
      status: sql<string>`case when status = 'BLOCKED' then 'ACTIVE' else status end`,
    })
    .where('userid', '=', userid.toUpperCase())
    .returning(['userid', 'status'])
    .executeTakeFirst();
}

/** Sets a user's password hash (the recovery command); the user id, if there is such a user. */
export async function setUserPassword(
  db: Kysely<Database>,
  userid: string,
  passwordHash: string,
): Promise<string | undefined> {
  const row = await db
    .updateTable('maxuser')
    .set({ password: passwordHash })
    .where('userid', '=', userid.toUpperCase())
    .returning('userid')
    .executeTakeFirst();
  return row?.userid;
}

export async function resetUserFailures(db: Kysely<Database>, userids: readonly string[]): Promise<void> {
  if (userids.length === 0) return;
  await db
    .updateTable('maxuser')
    .set({ failedlogins: 0 })
    .where('userid', 'in', userids)
    .where('failedlogins', '>', 0)
    .execute();
}
