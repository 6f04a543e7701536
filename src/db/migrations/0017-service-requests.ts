import type { Migration } from './migration.js';

/** Synonym domains this migration creates; the metadata may bind attributes to them (src/metadata/registry.ts). */
export const serviceRequestDomainIds: readonly string[] = ['SRSTATUS'];

/** [maxvalue, value, description] of SRSTATUS: the statuses of a service request (docs/compatibility.md). */
const srStatuses: ReadonlyArray<readonly [string, string, string]> = [
  ['NEW', 'NEW', 'New'],
  ['QUEUED', 'QUEUED', 'Queued'],
  ['INPROG', 'INPROG', 'In Progress'],
  ['RESOLVED', 'RESOLVED', 'Resolved'],
  ['CLOSED', 'CLOSED', 'Closed'],
];

/**
 * Service requests (MXAPISR, docs/compatibility.md "Service requests"):
 * - `ticket`: the tickets of class SR, keyed by `ticketid` and site, `ticketid` numbered by the `TICKETID` autokey;
 * - `tkstatus`: their status history, one row per status change;
 * - the `SRSTATUS` synonym domain and the `TICKETID` autokey: a system row, and one row per site that exists when
 *   the migration runs, so each site numbers its own requests (the demo data adds rows for its sites).
 * Every statement applies again over a schema it has already changed.
 */
export const serviceRequests: Migration = {
  name: '0017-service-requests',
  phase: 'expand',
  statements: [
    `create table if not exists ticket (
       ticketuid integer generated always as identity unique,
       ticketid varchar(15) not null,
       class varchar(16) not null default 'SR',
       siteid varchar(8) not null references site(siteid),
       orgid varchar(8) not null references organization(orgid),
       description varchar(100),
       description_longdescription text,
       status varchar(20) not null,
       statusdate timestamptz,
       reportedby varchar(30),
       reportdate timestamptz,
       affectedperson varchar(30),
       assetnum varchar(25),
       location varchar(12),
       reportedpriority integer,
       targetstart timestamptz,
       targetfinish timestamptz,
       changedate timestamptz,
       changeby varchar(30),
       rowstamp bigint not null,
       primary key (ticketid, siteid),
       foreign key (assetnum, siteid) references asset(assetnum, siteid),
       foreign key (location, siteid) references locations(location, siteid))`,
    `create index if not exists ticket_status_ticketid on ticket(status, ticketid, ticketuid)`,
    `create index if not exists ticket_asset on ticket(siteid, assetnum)`,
    `create table if not exists tkstatus (
       tkstatusid integer generated always as identity primary key,
       ticketid varchar(15) not null,
       siteid varchar(8) not null,
       orgid varchar(8) not null,
       status varchar(20) not null,
       changedate timestamptz not null,
       changeby varchar(30) not null,
       memo varchar(254),
       rowstamp bigint not null,
       foreign key (ticketid, siteid) references ticket(ticketid, siteid) on delete cascade)`,
    `create index if not exists tkstatus_ticketid on tkstatus(siteid, ticketid)`,
    ...['ticket', 'tkstatus'].flatMap((table) => [
      `drop trigger if exists ${table}_rowstamp on ${table}`,
      `create trigger ${table}_rowstamp before insert or update on ${table} for each row execute function set_rowstamp()`,
    ]),

    `insert into maxdomain (domainid, description, domaintype, maxtype, length, scale, changedate, changeby)
     values ('SRSTATUS', 'Service request status', 'SYNONYM', 'UPPER', 20, 0, current_timestamp, 'MAXADMIN')
     on conflict do nothing`,
    `insert into synonymdomain (domainid, maxvalue, value, description, defaults, valueid) values
     ${srStatuses.map(([maxvalue, value, text]) => `('SRSTATUS', '${maxvalue}', '${value}', '${text}', true, 'SRSTATUS|${value}')`).join(',\n     ')}
     on conflict do nothing`,

    `insert into autokey (autokeyname, seed) values ('TICKETID', 1000) on conflict do nothing`,
    `insert into autokey (autokeyname, orgid, siteid, seed)
     select 'TICKETID', orgid, siteid, 1000 from site on conflict do nothing`,
  ],
};
