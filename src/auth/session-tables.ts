import type { ColumnType, Generated } from 'kysely';
import type { MaxUserTable } from '../db/core-tables.js';

/** Row types of the session tables (migration 0005-sessions). */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface MaxSessionTable {
  maxsessionid: Generated<number>;
  /** SHA-256 (hex) of the session cookie's value; the value itself is never stored. */
  sessionhash: string;
  /** SHA-256 (hex) of the token cookie (`LtpaToken2`), when the login issued one. */
  tokenhash: string | null;
  userid: string;
  scheme: string;
  clientaddr: string | null;
  csrftoken: string;
  csrfrequired: boolean;
  /** The JSON form the login chose (`lean=1`/`lean=0`), the session's default; null: the API root's (0016). */
  lean: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  logindate: Timestamp;
  lastactive: Timestamp;
  expires: Timestamp;
}

/** Sealed session cookies replayed or logged out (migration 0024-session-cookie-claims), by the cookie's SHA-256. */
export interface MaxSessionClaimTable {
  sessionhash: string;
  /** The cookie's maximum timeout: past it, the claim is of no use. */
  expires: Timestamp;
}

export type LoginResult = 'SUCCESS' | 'FAILED' | 'BLOCKED' | 'REFUSED' | 'LOGOUT';

export interface LoginTrackingTable {
  logintrackingid: Generated<number>;
  loginid: string;
  userid: string | null;
  clientaddr: string | null;
  scheme: string;
  attemptresult: LoginResult;
  /** Attempts the row stands for (successes of one client are counted in one row per batch). */
  attempts: Generated<number>;
  /** Time of the (first) attempt. */
  attemptdate: Timestamp;
}

export interface LoginBlockTable {
  clientaddr: string;
  failures: number;
  windowstart: Timestamp;
  blockeduntil: Timestamp | null;
}

export interface SessionTables {
  maxsession: MaxSessionTable;
  maxsessionclaim: MaxSessionClaimTable;
  logintracking: LoginTrackingTable;
  loginblock: LoginBlockTable;
  maxuser: MaxUserTable;
}
