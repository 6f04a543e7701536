import type { Migration } from './migration.js';

/**
 * Key hygiene and lockout. `maxuser.blockeduntil`: the end of a user's temporary block after failed logins
 * (docs/security.md); the status stays ACTIVE meanwhile. `easkeycheck`: a check value derived from each master
 * key, by which a process started with another key refuses to start instead of refusing every key silently.
 */
export const hardening: Migration = {
  name: '0008-hardening',
  phase: 'expand',
  statements: [
    `alter table maxuser add column if not exists blockeduntil timestamptz`,
    `create table if not exists easkeycheck (
       keyname varchar(30) primary key,
       checkvalue varchar(128) not null,
       changedate timestamptz not null default now())`,
  ],
};
