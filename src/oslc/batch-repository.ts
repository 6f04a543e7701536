import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import type { ObjectMeta } from '../metadata/registry.js';
import type { ColumnLimits } from './column-limits.js';
import type { Row } from './repository.js';
import type { StoredValue } from './values.js';

/**
 * SQL of the batch writer (src/oslc/batch-writer.ts): many rows of one table per statement. Values travel as one
 * array per column (`unnest($1::varchar[], ...)`): a statement of a thousand rows binds a few parameters instead of
 * thousands, which PostgreSQL parses and binds several times faster.
 */
type Db = Kysely<DynamicDatabase>;

/** Column types an array parameter can be cast to by name; an object with a column of another type is not batched. */
const ARRAY_TYPES =
  /^(character varying|character|text|integer|bigint|smallint|numeric|double precision|real|boolean|date|timestamp with time zone|timestamp without time zone)$/;

/** Whether every column of the object's table has a type this file binds as an array (else: no batch). */
export function bindsAsArrays(limits: ColumnLimits, object: ObjectMeta): boolean {
  return [...object.attributes.keys()].every((name) => {
    const type = limits.column(object, name)?.dataType;
    return type === undefined || ARRAY_TYPES.test(type);
  });
}

/**
 * Whether the catalog read at start knows every column the row writes: a column a deploy adds in its own transaction
 * (a custom attribute) is not known yet, and such a row goes record by record.
 */
export function knowsColumns(limits: ColumnLimits, object: ObjectMeta, row: Row): boolean {
  for (const name in row) if (limits.column(object, name) === undefined) return false;
  return true;
}

/** `$n::type[]` of one column's values (its type checked by `bindsAsArrays`); also the batch deletion's arrays. */
export function columnArray(
  limits: ColumnLimits,
  object: ObjectMeta,
  column: string,
  values: readonly StoredValue[],
): RawBuilder<unknown> {
  const type = limits.column(object, column)?.dataType;
  if (type === undefined || !ARRAY_TYPES.test(type))
    throw new Error(`The column ${object.table}.${column} cannot be written in a batch`);
  return sql`${values}::${sql.raw(type)}[]`;
}

/** The stored rows whose keys are among `keyTuples` (no null parts), whole: a record equal to its row is not written. */
export async function findKeyed(
  db: Db,
  object: ObjectMeta,
  limits: ColumnLimits,
  keyTuples: readonly StoredValue[][],
): Promise<Row[]> {
  return findMatching(db, object, limits, object.keys, keyTuples);
}

/**
 * Where `columns` equal one of the `tuples` that have a null part, a null part matching only a null (the join of a
 * null-safe child collection, StructureNode.nullSafe); undefined when no tuple has one. One conjunction per tuple:
 * such parents are rare (a service request without a site).
 */
export function nullPartMatches(
  columns: readonly string[],
  tuples: readonly (readonly StoredValue[])[],
): RawBuilder<unknown> | undefined {
  const partial = tuples.filter((tuple) => tuple.some((value) => value === null));
  if (partial.length === 0) return undefined;
  const conjunction = (tuple: readonly StoredValue[]) =>
    sql`(${sql.join(
      columns.map((column, index) => {
        const value = tuple[index] ?? null;
        return value === null ? sql`${sql.ref(column)} is null` : sql`${sql.ref(column)} = ${value}`;
      }),
      sql` and `,
    )})`;
  return sql`(${sql.join(partial.map(conjunction), sql` or `)})`;
}

/** The stored rows whose `columns` hold one of `tuples` (no null parts): keys, or a child collection's join. */
export async function findMatching(
  db: Db,
  object: ObjectMeta,
  limits: ColumnLimits,
  columns: readonly string[],
  tuples: readonly StoredValue[][],
): Promise<Row[]> {
  const names = sql.join(columns.map((column) => sql.ref(column)));
  const arrays = columns.map((column, index) =>
    columnArray(
      limits,
      object,
      column,
      tuples.map((tuple) => tuple[index] ?? null),
    ),
  );
  const result = await sql<Row>`select * from ${sql.table(object.table)}
    where (${names}) in (select * from unnest(${sql.join(arrays)}))`.execute(db);
  return result.rows;
}

/**
 * Inserts rows into the object's table and answers them as stored (the caller matches them by key rather than
 * relying on the order of `returning`). Rows may set different columns: a column a row leaves out takes its
 * default, as a single-row insert without it would; rows are grouped by the defaulted columns they leave out.
 */
export async function insertRows(
  db: Db,
  object: ObjectMeta,
  limits: ColumnLimits,
  rows: readonly Row[],
  /** Whether the stored rows are wanted back (rows nobody reads again, such as history, are not sent back). */
  returning = true,
  /** The status history row of each inserted row, written by the same statement (see `historyOf`). */
  history?: StatusHistory,
): Promise<Row[]> {
  const groups = new Map<string, Row[]>();
  const defaulted = (column: string) => limits.column(object, column)?.hasDefault ?? true;
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  for (const row of rows) {
    const shape = columns.filter((column) => column in row || !defaulted(column)).join(',');
    const group = groups.get(shape) ?? [];
    group.push(row);
    groups.set(shape, group);
  }
  const stored: Row[] = [];
  for (const [shape, group] of groups) {
    const present = shape === '' ? [] : shape.split(',');
    stored.push(...(await insertGroup(db, object, limits, present, group, returning, history)));
  }
  return stored;
}

async function insertGroup(
  db: Db,
  object: ObjectMeta,
  limits: ColumnLimits,
  columns: readonly string[],
  rows: readonly Row[],
  returning: boolean,
  history: StatusHistory | undefined,
): Promise<Row[]> {
  const table = sql.table(object.table);
  const back = returning || history ? sql`returning *` : sql``;
  // With a history, the insert is a data-modifying WITH whose rows the history's insert reads (one statement).
  const statement = (insert: RawBuilder<unknown>) =>
    history
      ? sql<Row>`with inserted as (${insert}), history as (${historyOf(object, limits, history)})
          select * from inserted`
      : (insert as RawBuilder<Row>);
  if (columns.length === 0) {
    const stored: Row[] = [];
    for (let index = 0; index < rows.length; index++)
      stored.push(...(await statement(sql`insert into ${table} default values ${back}`).execute(db)).rows);
    return stored;
  }
  const names = sql.join(columns.map((column) => sql.ref(column)));
  const arrays = columns.map((column) =>
    columnArray(
      limits,
      object,
      column,
      rows.map((row) => row[column] ?? null),
    ),
  );
  const result = await statement(sql`insert into ${table} (${names})
    select * from unnest(${sql.join(arrays)}) ${back}`).execute(db);
  return returning ? result.rows : [];
}

/** Who and when of the status history rows an insert writes (src/oslc/stamps.ts `statusHistoryRow`, in SQL). */
export interface StatusHistory {
  object: ObjectMeta;
  now: Date;
  userid: string;
}

/**
 * The insert of the status history rows of the rows `inserted` (the WITH query of `insertGroup`), as
 * `statusHistoryRow` builds them: each history attribute the inserted row has, its status date (else now) as the
 * change date, the user, no memo.
 */
function historyOf(object: ObjectMeta, limits: ColumnLimits, history: StatusHistory): RawBuilder<unknown> {
  const stamped = new Set(['changedate', 'changeby', 'memo']);
  const copied = [...history.object.attributes.values()]
    .filter((attribute) => !attribute.generated && !stamped.has(attribute.name))
    .map((attribute) => attribute.name)
    .filter((name) => limits.column(object, name) !== undefined);
  const now = sql`${history.now}::timestamptz`;
  const changedate = limits.column(object, 'statusdate') ? sql`coalesce(inserted.statusdate, ${now})` : now;
  const names = sql.join([...copied, ...stamped].map((name) => sql.ref(name)));
  const values = sql.join([
    ...copied.map((name) => sql`inserted.${sql.ref(name)}`),
    changedate,
    sql`${history.userid}::varchar`,
    sql`null::varchar`,
  ]);
  return sql`insert into ${sql.table(history.object.table)} (${names}) select ${values} from inserted`;
}

/** The rows the planner believes the table holds (its last ANALYZE; 0 when never analyzed). */
export async function plannedRows(db: Db, table: string): Promise<number> {
  const result = await sql<{ rows: number | null }>`
    select greatest(reltuples, 0)::float8 as rows from pg_class where oid = to_regclass(${table})`.execute(
    db,
  );
  return Number(result.rows[0]?.rows ?? 0);
}

/**
 * Fresh statistics of a table, inside the writing transaction (its own rows are counted): its size, and the values of
 * `columns`, the ones its rows are looked up by. Every column of a wide table costs several times as much, and
 * autovacuum analyzes the table whole once the transaction has committed (docs/migration.md, "Deploy: speed").
 */
export async function analyzeTable(db: Db, table: string, columns: readonly string[]): Promise<void> {
  await sql`analyze ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))})`.execute(db);
}

/**
 * Updates rows of the object's table by unique id, every row setting the same `columns`, in one statement
 * (`update ... from unnest(...)`), and answers them as stored (the trigger renews each `rowstamp`).
 */
export async function updateRows(
  db: Db,
  object: ObjectMeta,
  limits: ColumnLimits,
  columns: readonly string[],
  rows: ReadonlyArray<{ uniqueId: number; values: Row }>,
): Promise<Row[]> {
  const table = sql.table(object.table);
  const uniqueIds = columnArray(
    limits,
    object,
    object.uniqueId,
    rows.map((row) => row.uniqueId),
  );
  const arrays = columns.map((column) =>
    columnArray(
      limits,
      object,
      column,
      rows.map((row) => row.values[column] ?? null),
    ),
  );
  const names = sql.join(columns.map((column, index) => sql`${sql.ref(column)} = v.${sql.ref(`c${index}`)}`));
  const aliases = sql.join(['u', ...columns.map((_, index) => `c${index}`)].map((alias) => sql.ref(alias)));
  const result = await sql<Row>`update ${table} set ${names}
    from unnest(${sql.join([uniqueIds, ...arrays])}) as v(${aliases})
    where ${table}.${sql.ref(object.uniqueId)} = v.u returning ${table}.*`.execute(db);
  return result.rows;
}
