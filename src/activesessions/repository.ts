import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** A live session as administrators see it: never its cookie, its hashes or its CSRF token. */
export interface ActiveSessionRow {
  maxsessionid: number;
  userid: string;
  scheme: string;
  clientaddr: string | null;
  logindate: Date;
  lastactive: Date;
  expires: Date;
}

/** Most sessions a listing answers, the latest active first. */
export const MAX_LISTED_SESSIONS = 1000;

/** Sessions neither past their end nor idle since before `idleBefore`, of every process, latest active first. */
export async function listLiveSessions(
  db: Kysely<Database>,
  now: Date,
  idleBefore: Date,
): Promise<ActiveSessionRow[]> {
  return db
    .selectFrom('maxsession')
    .select(['maxsessionid', 'userid', 'scheme', 'clientaddr', 'logindate', 'lastactive', 'expires'])
    .where('expires', '>', now)
    .where('lastactive', '>=', idleBefore)
    .orderBy('lastactive', 'desc')
    .orderBy('maxsessionid', 'desc')
    .limit(MAX_LISTED_SESSIONS)
    .execute();
}

/** The hashes the session-ending path needs (`SessionService.end`), of the session with this id. */
export async function findSessionHashes(
  db: Kysely<Database>,
  maxsessionid: number,
): Promise<{ sessionhash: string; tokenhash: string | null; userid: string } | undefined> {
  return db
    .selectFrom('maxsession')
    .select(['sessionhash', 'tokenhash', 'userid'])
    .where('maxsessionid', '=', maxsessionid)
    .executeTakeFirst();
}

/** The id of the session with this cookie hash. */
export async function findSessionId(db: Kysely<Database>, sessionhash: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('maxsession')
    .select('maxsessionid')
    .where('sessionhash', '=', sessionhash)
    .executeTakeFirst();
  return row?.maxsessionid;
}
