import type { Migration } from './migration.js';

/**
 * Sealed session cookies (docs/compatibility.md, "Sessions"): the answers to per-request credentials carry a cookie
 * that nothing stores until a request replays it. Its first replay, or its logout, claims it here, by the SHA-256 of
 * the cookie: the primary key makes exactly one process store it, and a claim whose session was since deleted
 * (logout, the per-user bound, admin mode) keeps the cookie from being stored again. A claim lives as long as the
 * cookie could (its maximum timeout).
 */
export const sessionCookieClaims: Migration = {
  name: '0024-session-cookie-claims',
  phase: 'expand',
  statements: [
    `create table if not exists maxsessionclaim (
       sessionhash char(64) primary key,
       expires timestamptz not null)`,
    `create index if not exists maxsessionclaim_expires on maxsessionclaim(expires)`,
  ],
};
