import { sql, type Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';

/** SQL of `transactionid` bookkeeping (migration 0008-oslc-transactions). */
type Db = Kysely<DynamicDatabase>;

/** How long a transaction id is remembered, as the deployed systems keep them by default. */
const RETENTION = sql`interval '5 minutes'`;

/**
 * Claims a transaction id at the start of the writing transaction. Answers undefined when the id is new, else the
 * resource the earlier request wrote. A concurrent request with the same id waits on the key until the first
 * commits (then finds it) or rolls back (then claims it itself), before it writes anything: two requests with one
 * id never both write.
 */
export async function claimTransactionId(db: Db, transactionId: string): Promise<string | undefined> {
  await sql`delete from oslc_transaction where created < now() - ${RETENTION}`.execute(db);
  const inserted = await sql<{ transactionid: string }>`insert into oslc_transaction (transactionid, resource)
    values (${transactionId}, '') on conflict (transactionid) do nothing returning transactionid`.execute(db);
  if (inserted.rows.length > 0) return undefined;
  const existing = await sql<{ resource: string }>`select resource from oslc_transaction
    where transactionid = ${transactionId}`.execute(db);
  return existing.rows[0]?.resource ?? '';
}

/** The resource a claimed transaction id wrote, once the write has it. */
export async function recordTransactionResource(
  db: Db,
  transactionId: string,
  resource: string,
): Promise<void> {
  await sql`update oslc_transaction set resource = ${resource} where transactionid = ${transactionId}`.execute(
    db,
  );
}

/**
 * Runs `work` inside a savepoint of the transaction `db`: when it fails, what it wrote is undone and the transaction
 * can go on (PostgreSQL refuses every statement of a transaction after a failed one until it rolls back to a
 * savepoint). Used by all-or-nothing BULK requests to report each element's own outcome (src/oslc/bulk.ts).
 */
export async function inSavepoint<T>(db: Db, work: () => Promise<T>): Promise<T> {
  await sql`savepoint bulk_element`.execute(db);
  try {
    const value = await work();
    await sql`release savepoint bulk_element`.execute(db);
    return value;
  } catch (error) {
    await sql`rollback to savepoint bulk_element`.execute(db);
    throw error;
  }
}
