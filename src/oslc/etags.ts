import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import { errors } from '../errors.js';
import type { ObjectMeta } from '../metadata/registry.js';
import * as repository from './repository.js';
import type { StoredValue } from './values.js';

/** Refuses a write whose `If-Match` names none of the record's current ETag (its rowstamp). */
export async function checkIfMatch(
  db: Kysely<DynamicDatabase>,
  object: ObjectMeta,
  uniqueId: number,
  ifMatch: string | undefined,
): Promise<void> {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const row = await repository.lockByUniqueId(db, object, uniqueId);
  if (!row) throw errors.resourceNotFound(object.name, String(uniqueId));
  if (!etagMatches(ifMatch, row.rowstamp ?? null)) throw errors.preconditionFailed(object.name);
}

/** The ETag of a record: its rowstamp, which every write renews (docs/compatibility.md, "Writes"). */
export const etagOf = (rowstamp: StoredValue | undefined): string => `"${String(rowstamp ?? '')}"`;

/** Whether an `If-Match` list (`"12", W/"13"`, unquoted values accepted) names the rowstamp's ETag. */
export function etagMatches(ifMatch: string, rowstamp: StoredValue): boolean {
  const wanted = String(rowstamp ?? '');
  return ifMatch.split(',').some((part) => {
    const tag = part.trim().replace(/^W\//, '');
    return tag === '*' || tag.replace(/^"(.*)"$/, '$1') === wanted;
  });
}
