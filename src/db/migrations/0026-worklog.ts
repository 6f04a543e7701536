import type { Migration } from './migration.js';

/** Synonym domains this migration creates; the metadata may bind attributes to them (src/metadata/registry.ts). */
export const worklogDomainIds: readonly string[] = ['LOGTYPE'];

/** [maxvalue, value, description] of LOGTYPE: the deployed systems' four default log types (docs/compatibility.md). */
const logTypes: ReadonlyArray<readonly [string, string, string]> = [
  ['WORK', 'WORK', 'Work Log'],
  ['UPDATE', 'UPDATE', 'Update'],
  ['CLIENTNOTE', 'CLIENTNOTE', 'Client Note'],
  ['APPTNOTE', 'APPTNOTE', 'Appointment Note'],
];

/**
 * Work logs (docs/compatibility.md, "Work logs"): `worklog` holds the notes of work orders and service requests,
 * each row naming its record as the deployed systems do, by `recordkey` (the work order's `wonum`, the request's
 * `ticketid`), `class` (the record's class: WORKORDER, ACTIVITY, SR) and `siteid`. No foreign key: one table serves
 * records of several tables, and the write path removes a record's work logs with it (a child collection). The
 * `LOGTYPE` synonym domain lists the log types. Every statement applies again over a schema it has already changed.
 */
export const worklog: Migration = {
  name: '0026-worklog',
  phase: 'expand',
  statements: [
    `create table if not exists worklog (
       worklogid integer generated always as identity primary key,
       recordkey varchar(25) not null,
       class varchar(16) not null,
       siteid varchar(8) references site(siteid),
       orgid varchar(8) references organization(orgid),
       description varchar(100),
       description_longdescription text,
       logtype varchar(16),
       clientviewable boolean not null default false,
       createby varchar(30) not null,
       createdate timestamptz not null,
       modifyby varchar(30),
       modifydate timestamptz,
       rowstamp bigint not null)`,
    `create index if not exists worklog_record on worklog(recordkey, siteid, class)`,
    `drop trigger if exists worklog_rowstamp on worklog`,
    `create trigger worklog_rowstamp before insert or update on worklog for each row execute function set_rowstamp()`,
    `insert into maxdomain (domainid, description, domaintype, maxtype, length, scale, changedate, changeby)
     values ('LOGTYPE', 'Work log type', 'SYNONYM', 'UPPER', 16, 0, current_timestamp, 'MAXADMIN')
     on conflict do nothing`,
    `insert into synonymdomain (domainid, maxvalue, value, description, defaults, valueid) values
     ${logTypes.map(([maxvalue, value, text]) => `('LOGTYPE', '${maxvalue}', '${value}', '${text}', true, 'LOGTYPE|${value}')`).join(',\n     ')}
     on conflict do nothing`,
  ],
};
