import type { Migration } from './migration.js';

/**
 * Collection pages order by the requested attributes and then by the unique id (so that pages never overlap).
 * With the unique id in the index, `status = ? order by assetnum` reads one page straight off the index and stops,
 * instead of sorting every matching row first; the new indexes serve everything the replaced ones did.
 */
export const queryIndexes: Migration = {
  name: '0006-query-indexes',
  phase: 'contract',
  statements: [
    `create index asset_status_assetnum_uid on asset(status, assetnum, assetuid)`,
    `drop index asset_status_assetnum`,
    `create index workorder_status_wonum_uid on workorder(status, wonum, workorderid)`,
    `drop index workorder_status_wonum`,
  ],
};
