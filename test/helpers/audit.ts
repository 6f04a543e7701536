import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';

/** The newest audit record's id (0 when there is none): a test reads the records written after it. */
export async function lastAuditId(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('easaudit')
    .select((eb) => eb.fn.max('auditid').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}
