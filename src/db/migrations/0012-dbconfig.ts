import type { Migration } from './migration.js';

/**
 * Database configuration (docs/dbconfig.md): attributes an administrator adds to business objects at run time.
 * - `maxattribute`: the custom attributes in force, one row per attribute, each also a column of its object's
 *   table; the metadata registry adds them to the base definitions at start-up and after every apply.
 * - `maxattributecfg`: the pending changes (add, change, remove), at most one per attribute, staged through the
 *   object structure MXAPIMAXATTRIBUTECFG and applied together by "apply configuration changes".
 * Attribute and object names are kept upper case, as the data dictionary writes them; the column is the lower-case
 * attribute name. Every statement applies again over a schema it has already changed.
 */
export const dbconfig: Migration = {
  name: '0012-dbconfig',
  phase: 'expand',
  statements: [
    `create table if not exists maxattribute (
       maxattributeid bigint generated always as identity primary key,
       objectname varchar(30) not null,
       attributename varchar(30) not null,
       maxtype varchar(8) not null check (maxtype in ('ALN', 'UPPER', 'INTEGER', 'DECIMAL', 'DATE', 'DATETIME', 'YORN')),
       length integer,
       scale integer,
       required boolean not null default false,
       defaultvalue varchar(254),
       domainid varchar(18),
       title varchar(80) not null,
       changeby varchar(30),
       changedate timestamptz,
       rowstamp bigint not null,
       unique (objectname, attributename))`,
    `drop trigger if exists maxattribute_rowstamp on maxattribute`,
    `create trigger maxattribute_rowstamp before insert or update on maxattribute for each row execute function set_rowstamp()`,
    `create table if not exists maxattributecfg (
       maxattributecfgid bigint generated always as identity primary key,
       objectname varchar(30) not null,
       attributename varchar(30) not null,
       changetype varchar(6) not null check (changetype in ('ADD', 'CHANGE', 'REMOVE')),
       maxtype varchar(8),
       length integer,
       scale integer,
       required boolean,
       defaultvalue varchar(254),
       domainid varchar(18),
       title varchar(80),
       changeby varchar(30),
       changedate timestamptz,
       rowstamp bigint not null,
       unique (objectname, attributename))`,
    `drop trigger if exists maxattributecfg_rowstamp on maxattributecfg`,
    `create trigger maxattributecfg_rowstamp before insert or update on maxattributecfg for each row execute function set_rowstamp()`,
  ],
};
