import type { Migration } from './migration.js';

/**
 * Stable paging (`stablepaging=1`): the ordered unique ids of a result are kept in the database, not in one
 * process's memory, so that the next page can be served by any process behind the load balancer. A set lives
 * until it has been idle longer than `mxe.oslc.idleexiry` seconds.
 */
export const stablePages: Migration = {
  name: '0003-stable-pages',
  phase: 'expand',
  statements: [
    `create table oslc_stable_set (
       stableid varchar(40) primary key,
       objectstructure varchar(30) not null,
       userid varchar(30) not null,
       total integer not null,
       created timestamptz not null default now(),
       lastaccess timestamptz not null default now())`,
    // Expired sets are found by idle time when a new set is made.
    `create index oslc_stable_set_lastaccess on oslc_stable_set(lastaccess)`,
    `create table oslc_stable_member (
       stableid varchar(40) not null references oslc_stable_set(stableid) on delete cascade,
       position integer not null,
       uniqueid bigint not null,
       primary key (stableid, position))`,
  ],
};
