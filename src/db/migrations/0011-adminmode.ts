import type { Migration } from './migration.js';

/**
 * Admin mode (docs/adminmode.md): one state for the whole deployment, and the record of its changes.
 * - `adminmode`: exactly one row. `generation` grows with every change, so that the timed end of the pending state
 *   is a conditional update any process may attempt: only the first one for that generation changes the row.
 * - `adminmodelog`: one row per change: who (null for the timed transition), when, from which server process, what.
 * - The right to log in during admin mode is `maxgroup.adminmodelogin` (0001): data, given to the administrators'
 *   group here for databases whose group was created before it was set at creation.
 * Every statement also applies over a schema it has already changed.
 */
export const adminMode: Migration = {
  name: '0011-adminmode',
  phase: 'expand',
  statements: [
    `create table if not exists adminmode (
       adminmodeid smallint primary key default 1 check (adminmodeid = 1),
       state smallint not null default 0 check (state in (0, 1, 2)),
       generation bigint not null default 0,
       numsessions integer check (numsessions >= 1),
       logoutmin numeric(12, 4) check (logoutmin >= 0),
       changeby varchar(30),
       changedate timestamptz,
       servername varchar(100),
       logoutdate timestamptz,
       ondate timestamptz)`,
    `insert into adminmode (adminmodeid, state) values (1, 0) on conflict do nothing`,
    `create table if not exists adminmodelog (
       adminmodelogid bigint generated always as identity primary key,
       action varchar(16) not null check (action in ('ON', 'ACTIVE', 'OFF')),
       fromstate smallint not null,
       tostate smallint not null,
       numsessions integer,
       logoutmin numeric(12, 4),
       changeby varchar(30),
       changedate timestamptz not null,
       servername varchar(100) not null,
       endedsessions integer not null default 0)`,
    `create index if not exists adminmodelog_changedate on adminmodelog(changedate)`,
    `update maxgroup set adminmodelogin = true where groupname = 'MAXADMIN' and not adminmodelogin`,
  ],
};
