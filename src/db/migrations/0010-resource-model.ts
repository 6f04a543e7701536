import type { Migration } from './migration.js';

/**
 * The resource model's breadth (docs/compatibility.md, "Autokeys", "Actions", "Object structures"):
 * - `autokey`: the numbers the service issues for key attributes a client leaves out (`wonum`, `assetnum`, ...),
 *   one row per autokey name and scope (system, organization, or organization and site), `seed` being the next
 *   number. Shared by every process; a create takes the row's lock for the rest of its transaction, so two
 *   processes never issue the same number.
 * - the work order's planning attributes, tasks (`parent`, `istask`, `taskid`) and long description;
 * - the status history of work orders and assets (`wostatus`, `assetstatus`), one row per status change;
 * - asset specifications and meters (children of MXAPIASSET).
 * Every statement also applies over a schema it has already changed, as 0007's do: a database rewound to an
 * older release's state (the upgrade tests) runs it again.
 */
export const resourceModel: Migration = {
  name: '0010-resource-model',
  phase: 'expand',
  statements: [
    `create table if not exists autokey (
       autokeyid integer generated always as identity primary key,
       autokeyname varchar(40) not null,
       orgid varchar(8) references organization(orgid),
       siteid varchar(8) references site(siteid),
       setid varchar(8),
       prefix varchar(20),
       seed bigint not null check (seed >= 0),
       langcode varchar(4))`,
    `create unique index if not exists autokey_scope on autokey(autokeyname, coalesce(orgid, ''), coalesce(siteid, ''), coalesce(setid, ''))`,
    `insert into autokey (autokeyname, seed) values ('WORKORDERNUM', 1000), ('ASSETNUM', 1000) on conflict do nothing`,

    `alter table workorder
       add column if not exists woclass varchar(16) not null default 'WORKORDER',
       add column if not exists historyflag boolean not null default false,
       add column if not exists parent varchar(25),
       add column if not exists istask boolean not null default false,
       add column if not exists taskid integer,
       add column if not exists schedstart timestamptz,
       add column if not exists schedfinish timestamptz,
       add column if not exists actstart timestamptz,
       add column if not exists actfinish timestamptz,
       add column if not exists description_longdescription text`,
    `do $$ begin
       if not exists (select 1 from pg_constraint where conname = 'workorder_parent_fk'
                      and conrelid = 'workorder'::regclass) then
         alter table workorder add constraint workorder_parent_fk
           foreign key (parent, siteid) references workorder(wonum, siteid);
       end if;
     end $$`,
    `create index if not exists workorder_parent on workorder(siteid, parent)`,

    `create table if not exists wostatus (
       wostatusid integer generated always as identity primary key,
       wonum varchar(25) not null,
       siteid varchar(8) not null,
       orgid varchar(8) not null,
       status varchar(16) not null,
       changedate timestamptz not null,
       changeby varchar(30) not null,
       memo varchar(254),
       rowstamp bigint not null,
       foreign key (wonum, siteid) references workorder(wonum, siteid) on delete cascade)`,
    `create index if not exists wostatus_wonum on wostatus(siteid, wonum)`,
    `create table if not exists assetstatus (
       assetstatusid integer generated always as identity primary key,
       assetnum varchar(25) not null,
       siteid varchar(8) not null,
       orgid varchar(8) not null,
       status varchar(20) not null,
       changedate timestamptz not null,
       changeby varchar(30) not null,
       memo varchar(254),
       rowstamp bigint not null,
       foreign key (assetnum, siteid) references asset(assetnum, siteid) on delete cascade)`,
    `create index if not exists assetstatus_assetnum on assetstatus(siteid, assetnum)`,

    `create table if not exists assetspec (
       assetspecid integer generated always as identity unique,
       assetnum varchar(25) not null,
       siteid varchar(8) not null,
       orgid varchar(8),
       assetattrid varchar(20) not null,
       alnvalue varchar(254),
       numvalue numeric(15, 4),
       measureunitid varchar(16),
       changedate timestamptz,
       changeby varchar(30),
       rowstamp bigint not null,
       primary key (assetnum, siteid, assetattrid),
       foreign key (assetnum, siteid) references asset(assetnum, siteid))`,
    `create table if not exists assetmeter (
       assetmeterid integer generated always as identity unique,
       assetnum varchar(25) not null,
       siteid varchar(8) not null,
       orgid varchar(8),
       metername varchar(10) not null,
       linearassetid integer not null default 0,
       active boolean not null default true,
       lastreading varchar(18),
       lastreadingdate timestamptz,
       measureunitid varchar(16),
       changedate timestamptz,
       changeby varchar(30),
       rowstamp bigint not null,
       primary key (assetnum, siteid, metername, linearassetid),
       foreign key (assetnum, siteid) references asset(assetnum, siteid))`,

    ...['wostatus', 'assetstatus', 'assetspec', 'assetmeter'].flatMap((table) => [
      `drop trigger if exists ${table}_rowstamp on ${table}`,
      `create trigger ${table}_rowstamp before insert or update on ${table} for each row execute function set_rowstamp()`,
    ]),
  ],
};
