import type { Migration } from './migration.js';

/**
 * Attachment content kept as files (src/attachments/README.md, "Where content is kept"): the row of an upload
 * streamed into the content folder names its file; rows without one keep their content in `doclinkchunk` as before.
 * The index answers the sweep's "does a row name this file". Every statement applies again over a schema it has
 * already changed.
 */
export const attachmentFiles: Migration = {
  name: '0036-attachment-files',
  phase: 'expand',
  statements: [
    `alter table doclinks add column if not exists contentfile text`,
    `create unique index if not exists doclinks_contentfile on doclinks(contentfile) where contentfile is not null`,
  ],
};
