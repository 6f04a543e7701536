import type { ObjectMeta } from '../metadata/registry.js';
import type { Row } from './repository.js';

/** Who writes and when: the values the service derives rather than the client (src/oslc/README.md, "Write path"). */
export interface WriteStamp {
  now: Date;
  userid: string;
  /** The date a status change takes (`wsmethod:changeStatus` may name one), else `now`. */
  statusDate?: Date;
}

/** Change stamps and the status date of a record whose status is set or changed (`before`: the stored row). */
export function stampWrite(
  object: ObjectMeta,
  values: Row,
  before: Row | undefined,
  stamp: WriteStamp,
): void {
  if (object.attributes.has('changedate')) values.changedate = stamp.now;
  if (object.attributes.has('changeby')) values.changeby = stamp.userid;
  if (object.attributes.has('statusdate') && 'status' in values && values.status !== before?.status) {
    values.statusdate = stamp.statusDate ?? stamp.now;
  }
}

/** The status-history row of a written record: the history's attributes the record has, then who, when and why. */
export function statusHistoryRow(
  history: ObjectMeta,
  after: Row,
  stamp: WriteStamp,
  memo: string | null,
): Row {
  const row: Row = {};
  for (const attribute of history.attributes.values()) {
    if (!attribute.generated && attribute.name in after) row[attribute.name] = after[attribute.name] ?? null;
  }
  row.changedate = after.statusdate ?? stamp.now;
  row.changeby = stamp.userid;
  row.memo = memo;
  return row;
}
