import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** SQL of attachments in packages: the attachments of many records, and the list of those a deploy added. */

/** Notes attachments a deploy of the package added, which its back-out deletes. */
export async function noteDeployed(
  db: Kysely<Database>,
  dmpackageid: number,
  doclinksids: readonly number[],
): Promise<void> {
  if (doclinksids.length === 0) return;
  await db
    .insertInto('dmdeploydoclink')
    .values(doclinksids.map((doclinksid) => ({ dmpackageid, doclinksid })))
    .onConflict((conflict) => conflict.doNothing())
    .execute();
}

/** Deletes the attachments the package's deploys added (their chunks and list rows go with them); the count. */
export async function deleteDeployed(db: Kysely<Database>, dmpackageid: number): Promise<number> {
  const result = await db
    .deleteFrom('doclinks')
    .where('doclinksid', 'in', (select) =>
      select.selectFrom('dmdeploydoclink').select('doclinksid').where('dmpackageid', '=', dmpackageid),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** An attachment written by a deploy keeps the date it was attached on the source. */
export async function keepCreateDate(
  db: Kysely<Database>,
  doclinksid: number,
  createdate: string,
): Promise<void> {
  await db.updateTable('doclinks').set({ createdate }).where('doclinksid', '=', doclinksid).execute();
}
