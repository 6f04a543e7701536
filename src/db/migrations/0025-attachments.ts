import type { Migration } from './migration.js';

/**
 * Attachments (docs/compatibility.md, "Attachments"): one `doclinks` row per attached file, owned by a record of a
 * business object (`ownertable`, `ownerid` = the record's unique id), and its content in `doclinkchunk` rows of a
 * few hundred KB each, written as the upload streams in. The content is stored without compression (`external`):
 * most attached files are compressed already, and trying again costs CPU on every chunk. The size limit is the
 * `mxe.doclink.maxfilesize` property (MB), named as the deployed systems name it.
 * Every statement applies again over a schema it has already changed.
 */
export const attachments: Migration = {
  name: '0025-attachments',
  phase: 'expand',
  statements: [
    `create table if not exists doclinks (
       doclinksid bigint generated always as identity primary key,
       ownertable varchar(30) not null,
       ownerid bigint not null,
       document varchar(255) not null,
       description varchar(254),
       urltype varchar(20) not null,
       doctype varchar(16) not null,
       mimetype varchar(100) not null,
       attachmentsize bigint not null default 0,
       checksum varchar(64),
       createby varchar(30) not null,
       createdate timestamptz not null default now())`,
    `create index if not exists doclinks_owner on doclinks(ownertable, ownerid, doclinksid)`,
    `create table if not exists doclinkchunk (
       doclinksid bigint not null references doclinks(doclinksid) on delete cascade,
       seq integer not null,
       data bytea not null,
       primary key (doclinksid, seq))`,
    `alter table doclinkchunk alter column data set storage external`,
    `insert into maxprop (propname, description, maxtype, maximodefault, rangemin, globalonly, liverefresh,
       onlinechanges, masked, nullsallowed, changeby, changedate) values
     ('mxe.doclink.maxfilesize', 'Largest attachment a client may upload, in MB', 'INTEGER', '10', 1, false, true,
       true, false, false, 'MAXADMIN', now())
     on conflict (propname) do nothing`,
  ],
};
