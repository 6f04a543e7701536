import type { Migration } from './migration.js';

/**
 * The attachments a deploy added (docs/migration.md, "Work logs and attachments"): one row per attachment a deploy
 * of a package wrote on this deployment, which the package's back-out deletes. An attachment deleted since goes
 * from the list with it; so does the list with its package. Every statement applies again over a schema it has
 * already changed.
 */
export const migrationAttachments: Migration = {
  name: '0035-migration-attachments',
  phase: 'expand',
  statements: [
    `create table if not exists dmdeploydoclink (
       dmpackageid bigint not null references dmpackage(dmpackageid) on delete cascade,
       doclinksid bigint not null references doclinks(doclinksid) on delete cascade,
       primary key (dmpackageid, doclinksid))`,
    `create index if not exists dmdeploydoclink_doclink on dmdeploydoclink(doclinksid)`,
  ],
};
