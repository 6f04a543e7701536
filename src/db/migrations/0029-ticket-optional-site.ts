import type { Migration } from './migration.js';

/**
 * A service request's site is optional (docs/compatibility.md, "Service requests"): `ticket.siteid` and `orgid` may be
 * null. A primary key cannot hold a null part, so the key is `ticketid` with `sitekey`, a stored column the database
 * derives as the site or '' (the same `ticketid` stays unique per site, and once among the requests without one).
 * The status history refers to its request by the same pair, so deleting a request without a site still deletes
 * its history (a foreign key on a null part would neither check nor cascade). Every statement applies again over a
 * schema it has already changed.
 */
export const ticketOptionalSite: Migration = {
  name: '0029-ticket-optional-site',
  phase: 'offline',
  statements: [
    `alter table tkstatus drop constraint if exists tkstatus_ticketid_siteid_fkey,
       drop constraint if exists tkstatus_ticket_fkey`,
    `alter table ticket drop constraint if exists ticket_pkey`,
    `alter table ticket alter column siteid drop not null, alter column orgid drop not null,
       add column if not exists sitekey varchar(8) generated always as (coalesce(siteid, '')) stored`,
    `alter table ticket add constraint ticket_pkey primary key (ticketid, sitekey)`,
    `alter table tkstatus alter column siteid drop not null, alter column orgid drop not null,
       add column if not exists sitekey varchar(8) generated always as (coalesce(siteid, '')) stored`,
    `alter table tkstatus add constraint tkstatus_ticket_fkey foreign key (ticketid, sitekey)
       references ticket(ticketid, sitekey) on delete cascade`,
    `create index if not exists tkstatus_ticket on tkstatus(ticketid, sitekey)`,
  ],
};
