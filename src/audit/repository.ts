import { sql, type Insertable, type Kysely, type QueryCreator, type Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import type { AuditTable } from './tables.js';

export type AuditRow = Selectable<AuditTable>;

export async function insertRecord(db: Kysely<Database>, row: Insertable<AuditTable>): Promise<void> {
  await db.insertInto('easaudit').values(row).execute();
}

/**
 * Where a domain's repository starts a statement of its change that also writes `record` (none when undefined): a
 * data-modifying WITH, which PostgreSQL runs to completion whatever the statement does with it, so the record commits
 * or rolls back with the change and costs no round trip of its own (src/audit/README.md, "Recording").
 */
export function withRecord(
  db: Kysely<Database>,
  record: Insertable<AuditTable> | undefined,
): Pick<QueryCreator<Database>, 'insertInto'> {
  if (record === undefined) return db;
  return db.with('easaudit_record', (creator) => creator.insertInto('easaudit').values(record));
}

/**
 * Takes the sealing lock for the rest of the transaction: one sealer at a time per deployment (the schema's name is
 * part of the key: deployments sharing a database do not wait for each other). `wait` false: answers false at once
 * when another process holds it (it will seal what this one would have).
 */
export async function lockSealing(db: Kysely<Database>, wait: boolean): Promise<boolean> {
  if (wait) {
    await sql`select pg_advisory_xact_lock(hashtext('eas audit seal ' || current_schema()))`.execute(db);
    return true;
  }
  const result = await sql<{
    locked: boolean;
  }>`select pg_try_advisory_xact_lock(hashtext('eas audit seal ' || current_schema())) as locked`.execute(db);
  return result.rows[0]?.locked === true;
}

/** The end of the chain: the sealed record with the highest position. */
export async function chainHead(
  db: Kysely<Database>,
): Promise<{ chainseq: number; digest: string | null } | undefined> {
  const row = await db
    .selectFrom('easaudit')
    .select(['chainseq', 'digest'])
    .where('chainseq', 'is not', null)
    .orderBy('chainseq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && row.chainseq !== null ? { chainseq: row.chainseq, digest: row.digest } : undefined;
}

/** Committed records not sealed yet, oldest first. */
export async function unsealedRecords(db: Kysely<Database>, limit: number, afterId = 0): Promise<AuditRow[]> {
  return db
    .selectFrom('easaudit')
    .selectAll()
    .where('chainseq', 'is', null)
    .where('auditid', '>', afterId)
    .orderBy('auditid')
    .limit(limit)
    .execute();
}

/**
 * Gives records their chain positions and digests, in one statement binding an array per column: a second's records
 * of a busy process are hundreds, and a VALUES list of them is three parameters a record for PostgreSQL to parse and
 * plan, and for Kysely to compile, every second (src/audit/README.md, "The chain").
 */
export async function sealRecords(
  db: Kysely<Database>,
  seals: ReadonlyArray<{ auditid: number; chainseq: number; digest: string }>,
): Promise<void> {
  if (seals.length === 0) return;
  await sql`update easaudit set chainseq = sealed.chainseq, digest = sealed.digest
    from unnest(${seals.map((seal) => seal.auditid)}::bigint[], ${seals.map((seal) => seal.chainseq)}::bigint[],
      ${seals.map((seal) => seal.digest)}::varchar[]) as sealed(auditid, chainseq, digest)
    where easaudit.auditid = sealed.auditid`.execute(db);
}

/** Gives records a new MAC and, when sealed, a new digest (a master-key rotation), in one statement. */
export async function rekeyRecords(
  db: Kysely<Database>,
  rows: ReadonlyArray<{ auditid: number; mac: string; digest: string | null }>,
): Promise<void> {
  if (rows.length === 0) return;
  await sql`update easaudit set mac = rekeyed.mac, digest = rekeyed.digest
    from unnest(${rows.map((row) => row.auditid)}::bigint[], ${rows.map((row) => row.mac)}::varchar[],
      ${rows.map((row) => row.digest)}::varchar[]) as rekeyed(auditid, mac, digest)
    where easaudit.auditid = rekeyed.auditid`.execute(db);
}

/** Sealed records in chain order, a page at a time. */
export async function sealedRecords(
  db: Kysely<Database>,
  afterSeq: number,
  limit: number,
): Promise<AuditRow[]> {
  return db
    .selectFrom('easaudit')
    .selectAll()
    .where('chainseq', '>', afterSeq)
    .orderBy('chainseq')
    .limit(limit)
    .execute();
}

/** The latest retention sweep's record: where the chain starts now (docs/audit.md, "Retention"). */
export async function latestSweep(db: Kysely<Database>): Promise<AuditRow | undefined> {
  return db
    .selectFrom('easaudit')
    .selectAll()
    .where('eventtype', '=', 'audit.retention')
    .where('chainseq', 'is not', null)
    .orderBy('chainseq', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * The sealed prefix of the chain older than `cutoff`: every record up to the first that is not older. Only a prefix
 * is removed, so what remains is one unbroken chain from its new start.
 */
export async function expiredPrefix(
  db: Kysely<Database>,
  cutoff: Date,
): Promise<{ lastSeq: number; lastDigest: string; count: number } | undefined> {
  const firstKept = await db
    .selectFrom('easaudit')
    .select('chainseq')
    .where('chainseq', 'is not', null)
    .where('eventtime', '>=', cutoff)
    .orderBy('chainseq')
    .limit(1)
    .executeTakeFirst();
  let query = db
    .selectFrom('easaudit')
    .select(['chainseq', 'digest'])
    .where('chainseq', 'is not', null)
    .orderBy('chainseq', 'desc')
    .limit(1);
  if (firstKept?.chainseq != null) query = query.where('chainseq', '<', firstKept.chainseq);
  const last = await query.executeTakeFirst();
  if (!last || last.chainseq === null || last.digest === null) return undefined;
  const counted = await db
    .selectFrom('easaudit')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('chainseq', '<=', last.chainseq)
    .executeTakeFirstOrThrow();
  return { lastSeq: last.chainseq, lastDigest: last.digest, count: Number(counted.count) };
}

export async function deleteThrough(db: Kysely<Database>, lastSeq: number): Promise<number> {
  const result = await db.deleteFrom('easaudit').where('chainseq', '<=', lastSeq).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Records of `since` and later, in chain order (records not sealed yet last), a page at a time. */
export async function recordsSince(
  db: Kysely<Database>,
  since: Date,
  afterId: number,
  limit: number,
): Promise<AuditRow[]> {
  return db
    .selectFrom('easaudit')
    .selectAll()
    .where('eventtime', '>=', since)
    .where('auditid', '>', afterId)
    .orderBy('auditid')
    .limit(limit)
    .execute();
}
