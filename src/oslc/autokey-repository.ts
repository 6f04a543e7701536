import { sql, type Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';

/**
 * SQL of autokeys (migration 0008-resource-model, docs/compatibility.md "Autokeys"). The row that applies is the
 * one of the record's organization and site, else of its organization, else the system row; the number issued is
 * its `seed`, which moves on by one. The update locks the row until the create's transaction ends, so creates on
 * any number of processes issue distinct numbers, and a rolled-back create gives its number back.
 */
export async function issueAutokey(
  db: Kysely<DynamicDatabase>,
  name: string,
  siteid: string | null,
): Promise<{ prefix: string; number: number } | undefined> {
  const result = await sql<{ prefix: string | null; issued: string | number }>`
    update autokey set seed = seed + 1
    where autokeyid = (
      select a.autokeyid from autokey a
      where a.autokeyname = ${name}
        and a.setid is null
        and (a.siteid is null or a.siteid = ${siteid})
        and (a.orgid is null or a.orgid = (select s.orgid from site s where s.siteid = ${siteid}))
        and (a.siteid is null or a.orgid is not null)
      order by a.siteid is null, a.orgid is null
      limit 1)
    returning prefix, seed - 1 as issued`.execute(db);
  const row = result.rows[0];
  return row ? { prefix: row.prefix ?? '', number: Number(row.issued) } : undefined;
}
