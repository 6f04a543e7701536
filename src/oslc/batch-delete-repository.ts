import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import type { ObjectMeta } from '../metadata/registry.js';
import { columnArray, nullPartMatches } from './batch-repository.js';
import type { ColumnLimits } from './column-limits.js';
import type { Row } from './repository.js';
import type { StoredValue } from './values.js';

/**
 * SQL of the batch deletion (src/oslc/batch-delete.ts): the rows of many records, and of their child collections,
 * locked and deleted with one statement per table, whatever the number of records. Values travel as one array per
 * column, as in batch-repository.ts.
 */
type Db = Kysely<DynamicDatabase>;

/** Locks the rows of these unique ids for the rest of the transaction and answers them whole. */
export async function lockUniqueIds(
  db: Db,
  object: ObjectMeta,
  limits: ColumnLimits,
  uniqueIds: readonly number[],
): Promise<Row[]> {
  const ids = columnArray(limits, object, object.uniqueId, uniqueIds);
  const result = await sql<Row>`select * from ${sql.table(object.table)}
    where ${sql.ref(object.uniqueId)} = any(${ids}) for update`.execute(db);
  return result.rows;
}

/**
 * Where `columns` equal one of `tuples`: a tuple with a null part matches nothing, as `in` compares, unless
 * `nullSafe` (a null-safe child collection's join), where its null part matches a null.
 */
function matching(
  limits: ColumnLimits,
  object: ObjectMeta,
  columns: readonly string[],
  tuples: readonly StoredValue[][],
  nullSafe: boolean,
): RawBuilder<unknown> {
  const names = sql.join(columns.map((column) => sql.ref(column)));
  const arrays = columns.map((column, index) =>
    columnArray(
      limits,
      object,
      column,
      tuples.map((tuple) => tuple[index] ?? null),
    ),
  );
  const complete = sql`(${names}) in (select * from unnest(${sql.join(arrays)}))`;
  const partial = nullSafe ? nullPartMatches(columns, tuples) : undefined;
  return partial ? sql`(${complete} or ${partial})` : complete;
}

/** Locks and answers the rows whose `columns` equal one of `tuples` (the children of many parents). */
export async function lockMatching(
  db: Db,
  object: ObjectMeta,
  limits: ColumnLimits,
  columns: readonly string[],
  tuples: readonly StoredValue[][],
  nullSafe = false,
): Promise<Row[]> {
  if (tuples.length === 0) return [];
  const result = await sql<Row>`select * from ${sql.table(object.table)}
    where ${matching(limits, object, columns, tuples, nullSafe)} for update`.execute(db);
  return result.rows;
}

/**
 * What a deletion answers of each deleted row: `rows`, the rows as they were (for the write observers); `keys`, the
 * unique id only (enough to tell which records were gone already); `nothing`. A row answered whole is read and
 * shipped for every deleted record, which a back-out of many records pays in full when no observer needs it.
 */
export type DeletedAnswer = 'rows' | 'keys' | 'nothing';

function answering(object: ObjectMeta, answer: DeletedAnswer): RawBuilder<unknown> {
  if (answer === 'rows') return sql` returning *`;
  if (answer === 'keys') return sql` returning ${sql.ref(object.uniqueId)}`;
  return sql``;
}

/** Deletes the rows whose `columns` equal one of `tuples` in one statement, and answers them as `answer` says. */
export async function deleteMatching(
  db: Db,
  object: ObjectMeta,
  limits: ColumnLimits,
  columns: readonly string[],
  tuples: readonly StoredValue[][],
  answer: DeletedAnswer,
  nullSafe = false,
): Promise<Row[]> {
  if (tuples.length === 0) return [];
  const result = await sql<Row>`delete from ${sql.table(object.table)}
    where ${matching(limits, object, columns, tuples, nullSafe)}${answering(object, answer)}`.execute(db);
  return result.rows;
}

/**
 * Deletes the rows of these unique ids in one statement, and answers them as `answer` says. Run inside a savepoint
 * (BatchDelete.flush): a failure leaves the planner setting below to the savepoint's rollback.
 *
 * PostgreSQL checks each deleted row against every table that refers to it, one query per row and table, planned as
 * if it ran once: a referring table of a few pages (the demo's 136 work orders) is then read whole for every row,
 * about three times the cost of the index probe (docs/migration.md, "Back-out"). Sequential scans are off while the
 * statement runs, so those checks go by the referring columns' indexes.
 */
export async function deleteUniqueIds(
  db: Db,
  object: ObjectMeta,
  limits: ColumnLimits,
  uniqueIds: readonly number[],
  answer: DeletedAnswer,
): Promise<Row[]> {
  if (uniqueIds.length === 0) return [];
  const ids = columnArray(limits, object, object.uniqueId, uniqueIds);
  await sql`set local enable_seqscan = off`.execute(db);
  const result = await sql<Row>`delete from ${sql.table(object.table)}
    where ${sql.ref(object.uniqueId)} = any(${ids})${answering(object, answer)}`.execute(db);
  await sql`set local enable_seqscan = default`.execute(db);
  return result.rows;
}
