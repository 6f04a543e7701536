import type { Migration } from './migration.js';

/** Synonym domains this migration creates; the metadata may bind attributes to them (src/metadata/registry.ts). */
export const packageDomainIds: readonly string[] = ['DMPKGTRGTTYPE'];

/**
 * Migration packages (docs/migration.md):
 * - `dmpackagedef`: package definitions (CHANGE or SNAPSHOT), `dmpkgdefcontent` the object structures each covers
 *   (a where clause each for SNAPSHOT), `dmpkgdsttrgt` where its packages go (FILE or DATABASE, synonym domain
 *   `DMPKGTRGTTYPE`; the password of a DATABASE target is sealed, never stored in clear);
 * - `dmpackage`: packages, source side (created here) and target side (uploaded or distributed to here);
 * - `dmpkgstaging`: the content of a package, as its manifest and chunks of NDJSON records per object structure;
 * - `dmpkgchange`: what the write observer records for an active CHANGE definition.
 * Every statement applies again over a schema it has already changed.
 */
export const migrationPackages: Migration = {
  name: '0013-migration-packages',
  phase: 'expand',
  statements: [
    `create table if not exists dmpackagedef (
       dmpackagedefid bigint generated always as identity unique,
       pkgdefname varchar(30) primary key,
       source varchar(200) not null,
       type varchar(10) not null check (type in ('CHANGE', 'SNAPSHOT')),
       status varchar(10) not null default 'WAPPR' check (status in ('WAPPR', 'APPR', 'LOCKED')),
       statusdate timestamptz,
       description varchar(100),
       active boolean not null default false,
       xmlaction varchar(10) not null default 'AddChange' check (xmlaction in ('AddChange', 'Replace')),
       batchsize integer not null default 500 check (batchsize between 1 and 10000),
       changedate timestamptz,
       changeby varchar(30),
       rowstamp bigint not null)`,
    `create table if not exists dmpkgdefcontent (
       dmpkgdefcontentid bigint generated always as identity unique,
       pkgdefname varchar(30) not null references dmpackagedef(pkgdefname) on delete cascade,
       objectstructure varchar(30) not null,
       whereclause varchar(4000),
       cfgdataorder integer not null default 1,
       rowstamp bigint not null,
       primary key (pkgdefname, objectstructure))`,
    `create table if not exists dmpkgdsttrgt (
       dmpkgdsttrgtid bigint generated always as identity unique,
       pkgdefname varchar(30) not null references dmpackagedef(pkgdefname) on delete cascade,
       targetname varchar(30) not null,
       type varchar(10) not null,
       url varchar(1000),
       username varchar(100),
       password text,
       schemaname varchar(63),
       description varchar(100),
       rowstamp bigint not null,
       primary key (pkgdefname, targetname))`,
    `create table if not exists dmpackage (
       dmpackageid bigint generated always as identity primary key,
       pkgdefname varchar(30) not null,
       source varchar(200) not null,
       package varchar(60) not null,
       type varchar(10) not null,
       status varchar(20) not null,
       statusdate timestamptz not null default now(),
       filename varchar(200),
       readme varchar(1000),
       createby varchar(30),
       createdate timestamptz not null default now(),
       changeby varchar(30),
       progressstatus varchar(200),
       distributionmessage varchar(1000),
       side varchar(6) not null check (side in ('SOURCE', 'TARGET')),
       rowstamp bigint not null)`,
    `create unique index if not exists dmpackage_key on dmpackage(pkgdefname, source, package, side)`,
    `create table if not exists dmpkgstaging (
       dmpkgstagingid bigint generated always as identity primary key,
       dmpackageid bigint not null references dmpackage(dmpackageid) on delete cascade,
       type varchar(12) not null,
       cfgobject varchar(30),
       cfgdataorder integer not null,
       chunk integer not null default 0,
       cfgobjectcount integer not null default 0,
       content text not null)`,
    `create unique index if not exists dmpkgstaging_key on dmpkgstaging(dmpackageid, type, cfgdataorder, chunk)`,
    `create table if not exists dmpkgchange (
       dmpkgchangeid bigint generated always as identity primary key,
       pkgdefname varchar(30) not null references dmpackagedef(pkgdefname) on delete cascade,
       objectstructure varchar(30) not null,
       operation varchar(10) not null,
       keyvalues text not null,
       changedate timestamptz not null default now())`,
    `create index if not exists dmpkgchange_def on dmpkgchange(pkgdefname, dmpkgchangeid)`,
    ...['dmpackagedef', 'dmpkgdefcontent', 'dmpkgdsttrgt', 'dmpackage'].flatMap((table) => [
      `drop trigger if exists ${table}_rowstamp on ${table}`,
      `create trigger ${table}_rowstamp before insert or update on ${table} for each row execute function set_rowstamp()`,
    ]),
    `insert into maxdomain (domainid, description, domaintype, maxtype, length, scale, changedate, changeby)
     values ('DMPKGTRGTTYPE', 'Distribution target types of migration packages', 'SYNONYM', 'UPPER', 10, 0, now(), 'MAXADMIN')
     on conflict (domainid) do nothing`,
    `insert into synonymdomain (domainid, maxvalue, value, description, defaults, valueid)
     select 'DMPKGTRGTTYPE', v, v, d, true, 'DMPKGTRGTTYPE|' || v from (values ('FILE', 'File'), ('DATABASE', 'Database')) as t(v, d)
     where not exists (select 1 from synonymdomain where domainid = 'DMPKGTRGTTYPE' and value = t.v)`,
  ],
};
