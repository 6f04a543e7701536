import type { Migration } from './migration.js';

/**
 * Login sessions, the login audit and the failed-login counters of client addresses (docs/security.md, "Failed
 * logins"). Sessions live in the database so that every server process on it shares them; each process serves them
 * from memory (src/auth/sessions.ts).
 */
export const sessions: Migration = {
  name: '0005-sessions',
  phase: 'expand',
  statements: [
    // Cookie values are never stored, only their SHA-256: a copy of this table cannot be replayed as cookies.
    `create table maxsession (
       maxsessionid bigint generated always as identity unique,
       sessionhash char(64) primary key,
       tokenhash char(64) unique,
       userid varchar(30) not null references maxuser(userid) on delete cascade,
       scheme varchar(16) not null,
       clientaddr varchar(64),
       csrftoken varchar(64) not null,
       csrfrequired boolean not null default false,
       logindate timestamptz not null,
       lastactive timestamptz not null,
       expires timestamptz not null)`,
    `create index maxsession_userid on maxsession(userid)`,
    `create index maxsession_expires on maxsession(expires)`,
    `create index maxsession_lastactive on maxsession(lastactive)`,

    // Login attempts and logouts; the password is never part of it. Failures and refusals have a row each;
    // successes of one client (user, address, scheme) within a fraction of a second share one, with their count
    // (`attempts`): clients that send credentials on every call would otherwise write a row per call.
    `create table logintracking (
       logintrackingid bigint generated always as identity primary key,
       loginid varchar(100) not null,
       userid varchar(30),
       clientaddr varchar(64),
       scheme varchar(16) not null,
       attemptresult varchar(16) not null check (attemptresult in ('SUCCESS', 'FAILED', 'BLOCKED', 'REFUSED', 'LOGOUT')),
       attempts integer not null default 1 check (attempts > 0),
       attemptdate timestamptz not null)`,
    `create index logintracking_loginid on logintracking(loginid, attemptdate)`,
    `create index logintracking_clientaddr on logintracking(clientaddr, attemptdate)`,

    // Failed logins of a client address in the current window (mxe.sec.IPblock.*), and the block they caused.
    `create table loginblock (
       clientaddr varchar(64) primary key,
       failures integer not null,
       windowstart timestamptz not null,
       blockeduntil timestamptz)`,
    `create index loginblock_blockeduntil on loginblock(blockeduntil)`,
  ],
};
