import type { Migration } from './migration.js';

/**
 * The status history of service requests is found by `(ticketid, sitekey)` since 0029 (`tkstatus_ticket`, the key
 * its foreign key uses); the index by `(siteid, ticketid)` of 0017 serves no query and costs every status change.
 * Releases from 0029 on read nothing through it, so dropping it waits only for them to stop (a contract).
 */
export const upgradeTkstatusIndex: Migration = {
  name: '0034-upgrade-tkstatus-index',
  phase: 'contract',
  statements: [`drop index if exists tkstatus_ticketid`],
};
