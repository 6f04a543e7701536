import type { Migration } from './migration.js';

/**
 * Back-out of deployed packages (docs/migration.md, "Back-out"):
 * - `dmpackage.inverseof`: the inverse package a deploy captured names the deployed package it undoes; it goes with
 *   that package (closed or deleted);
 * - `dmpkghistory`: what happened to a package (deploy, back-out), by whom and when, kept with the package.
 * Every statement applies again over a schema it has already changed.
 */
export const migrationBackout: Migration = {
  name: '0022-migration-backout',
  phase: 'expand',
  statements: [
    `alter table dmpackage add column if not exists inverseof bigint references dmpackage(dmpackageid) on delete cascade`,
    `create unique index if not exists dmpackage_inverseof on dmpackage(inverseof)`,
    `create table if not exists dmpkghistory (
       dmpkghistoryid bigint generated always as identity primary key,
       dmpackageid bigint not null references dmpackage(dmpackageid) on delete cascade,
       action varchar(20) not null,
       status varchar(20) not null,
       message varchar(1000),
       changeby varchar(30) not null,
       changedate timestamptz not null default now())`,
    `create index if not exists dmpkghistory_package on dmpkghistory(dmpackageid, dmpkghistoryid)`,
  ],
};
