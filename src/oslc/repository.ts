import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import { BoundedCache } from '../util/bounded-cache.js';
import { preparedStatement } from '../db/prepared-statements.js';
import type { DynamicDatabase } from '../db/schema.js';
import type { ObjectMeta } from '../metadata/registry.js';
import type { StoredValue } from './values.js';

/** SQL of the write path, for any object the metadata declares; names come from metadata, values are bound. */
type Db = Kysely<DynamicDatabase>;
export type Row = Record<string, StoredValue>;

const matches = (pairs: ReadonlyArray<readonly [string, StoredValue]>) =>
  pairs.map(([column, value]) =>
    value === null ? sql`${sql.ref(column)} is null` : sql`${sql.ref(column)} = ${value}`,
  );

function whereAll(pairs: ReadonlyArray<readonly [string, StoredValue]>) {
  return sql.join(matches(pairs), sql` and `);
}

export async function findByKeys(
  db: Db,
  object: ObjectMeta,
  keyValues: readonly StoredValue[],
): Promise<Row | undefined> {
  const pairs = object.keys.map((key, index) => [key, keyValues[index] ?? null] as const);
  const result =
    await sql<Row>`select * from ${sql.table(object.table)} where ${whereAll(pairs)} limit 1`.execute(db);
  return result.rows[0];
}

/** Every site's organization (the site cache's rows). */
export async function loadSiteOrganizations(
  db: Db,
): Promise<Array<{ siteid: string; orgid: string | null }>> {
  const result = await sql<{ siteid: string; orgid: string | null }>`select siteid, orgid from site`.execute(
    db,
  );
  return result.rows;
}

/** One site's organization, or undefined when there is no such site. */
export async function findSiteOrganization(
  db: Db,
  siteid: string,
): Promise<{ orgid: string | null } | undefined> {
  const result = await sql<{ orgid: string | null }>`select orgid from site where siteid = ${siteid}`.execute(
    db,
  );
  return result.rows[0];
}

export async function findByUniqueId(db: Db, object: ObjectMeta, uniqueId: number): Promise<Row | undefined> {
  const result =
    await sql<Row>`select * from ${sql.table(object.table)} where ${sql.ref(object.uniqueId)} = ${uniqueId}`.execute(
      db,
    );
  return result.rows[0];
}

/** Locks the row for the rest of the transaction, so a concurrent writer waits instead of overwriting. */
export async function lockByUniqueId(db: Db, object: ObjectMeta, uniqueId: number): Promise<Row | undefined> {
  const result =
    await sql<Row>`select * from ${sql.table(object.table)} where ${sql.ref(object.uniqueId)} = ${uniqueId} for update`.execute(
      db,
    );
  return result.rows[0];
}

export async function exists(
  db: Db,
  table: string,
  pairs: ReadonlyArray<readonly [string, StoredValue]>,
): Promise<boolean> {
  const result = await sql`select 1 from ${sql.table(table)} where ${whereAll(pairs)} limit 1`.execute(db);
  return result.rows.length > 0;
}

export async function findAll(
  db: Db,
  table: string,
  pairs: ReadonlyArray<readonly [string, StoredValue]>,
): Promise<Row[]> {
  const result = await sql<Row>`select * from ${sql.table(table)} where ${whereAll(pairs)}`.execute(db);
  return result.rows;
}

export async function insertRow(db: Db, object: ObjectMeta, values: Readonly<Row>): Promise<Row> {
  const columns = Object.keys(values);
  const result =
    await sql<Row>`insert into ${sql.table(object.table)} (${sql.join(columns.map((column) => sql.ref(column)))})
    values (${sql.join(columns.map((column) => values[column] ?? null))}) returning *`.execute(db);
  return result.rows[0]!;
}

/** A row written by the same statement as an inserted record, from the inserted row's values (a status history). */
export interface DependentInsert {
  table: string;
  /** Each column's value: the inserted row's column (or `otherwise` where it is null), or a value. */
  columns: ReadonlyMap<string, { from: string; otherwise?: StoredValue } | { value: StoredValue }>;
}

/** Change notifications an insert sends: `pg_notify(channel, payload)` for each payload. */
export interface InsertNotifications {
  /** The channel's name on the database (ChangeBus.channelName). */
  channel: string;
  payloads: readonly string[];
}

/**
 * What an insert statement looks like without its values, each value named by its index in the statement's
 * inputs: inserts of one shape differ only in their inputs, so the shape is compiled once.
 */
interface InsertShape {
  table: string;
  columns: ReadonlyArray<{ name: string; input: number }>;
  /** Key columns, each compared with an input, or null (`is null`). */
  keys: ReadonlyArray<{ name: string; input: number | null }>;
  /** Columns of each dependent row: the inserted row's column, an input, or the column else the input. */
  dependents: ReadonlyArray<{
    table: string;
    columns: ReadonlyArray<{ name: string; from?: string; input?: number }>;
  }>;
  notify?: { channel: number; payloads: readonly number[] };
  /** The columns the statement answers with, by name (a prepared statement's answer must not change). */
  returned: readonly string[];
}

/** A compiled shape: its SQL, and the input each parameter takes, in parameter order. */
interface CompiledInsert {
  sql: string;
  inputs: readonly number[];
}

/** Shapes kept compiled: a few per object a deployment writes (its sets of sent attributes). */
const INSERT_SHAPES_KEPT = 256;
const compiledInserts = new BoundedCache<string, CompiledInsert>(INSERT_SHAPES_KEPT);

/** Stands for an input while a shape is compiled, so that the parameters say which input each one takes. */
class Input {
  constructor(readonly index: number) {}
}

/**
 * Inserts a record unless one with the same key values exists (then answers undefined), together with the rows
 * that depend on it and its change notifications, in one statement: the write path's create is one round trip
 * (src/oslc/README.md, "Round trips of a write").
 */
export async function insertUnlessKeyTaken(
  db: Db,
  object: ObjectMeta,
  values: Readonly<Row>,
  keyValues: readonly StoredValue[],
  dependents: readonly DependentInsert[],
  /** Sent once when the record is inserted, never when it is refused. */
  notifications: InsertNotifications | undefined,
  /** The table's columns (the row answered), and the version of the catalog they come from. */
  returned: { columns: readonly string[]; version: number },
): Promise<Row | undefined> {
  const inputs: unknown[] = [];
  const input = (value: unknown): number => inputs.push(value) - 1;
  // What tells shapes apart, each part marked with its kind (the same shape numbers its inputs alike): cheaper than
  // the shape's JSON.
  const key: string[] = [object.table];
  const shape: Omit<InsertShape, 'returned'> = {
    table: object.table,
    columns: Object.keys(values).map((name) => {
      key.push(`c ${name}`);
      return { name, input: input(values[name] ?? null) };
    }),
    keys: object.keys.map((name, index) => {
      const value = keyValues[index] ?? null;
      key.push(value === null ? `k ${name} null` : `k ${name}`);
      return { name, input: value === null ? null : input(value) };
    }),
    dependents: dependents.map((dependent) => {
      key.push(`d ${dependent.table}`);
      return {
        table: dependent.table,
        columns: [...dependent.columns].map(([name, source]) => {
          if ('value' in source) {
            key.push(`v ${name}`);
            return { name, input: input(source.value) };
          }
          key.push(`f ${name} ${source.from}${source.otherwise === undefined ? '' : ' else'}`);
          if (source.otherwise === undefined) return { name, from: source.from };
          return { name, from: source.from, input: input(source.otherwise) };
        }),
      };
    }),
    ...(notifications &&
      notifications.payloads.length > 0 && {
        notify: { channel: input(notifications.channel), payloads: notifications.payloads.map(input) },
      }),
  };
  key.push(`n ${shape.notify?.payloads.length ?? 0}`, `r ${returned.version}`);
  // Building and compiling the statement costs more CPU than the rest of a create: done once per shape. PostgreSQL
  // plans it once per connection too: it is a prepared statement (src/db/prepared-statements.ts).
  const compiled = compiledInserts.getOrCompute(key.join('\u0000'), () => {
    const query = insertStatement({ ...shape, returned: returned.columns }).compile(db);
    return { sql: query.sql, inputs: query.parameters.map((parameter) => (parameter as Input).index) };
  });
  const result = await db.executeQuery<Row>(
    CompiledQuery.raw(
      // Only a statement that names its answer's columns may be kept prepared. Marked on every call, since the
      // names are forgotten when the metadata changes.
      returned.columns.length > 0 ? preparedStatement(compiled.sql) : compiled.sql,
      compiled.inputs.map((index) => inputs[index]),
    ),
  );
  return result.rows[0];
}

/** The statement of an insert shape, with an `Input` where each value goes. */
function insertStatement(shape: InsertShape): RawBuilder<Row> {
  const value = (index: number) => sql`${new Input(index)}`;
  const table = sql.table(shape.table);
  const keyMatches = shape.keys.map(({ name, input }) =>
    input === null ? sql`${sql.ref(name)} is null` : sql`${sql.ref(name)} = ${value(input)}`,
  );
  // Parameters of the select list take the types of the columns they are inserted into, as in a VALUES list.
  const inserted = sql`insert into ${table} (${sql.join(shape.columns.map(({ name }) => sql.ref(name)))})
    select ${sql.join(shape.columns.map(({ input }) => value(input)))}
    where not exists (select 1 from ${table} where ${sql.join(keyMatches, sql` and `)})
    returning *`;
  const writes = shape.dependents.map((dependent, index) => {
    const sources = dependent.columns.map(({ from, input }) => {
      if (from === undefined) return value(input!);
      if (input === undefined) return sql.ref(from);
      return sql`coalesce(${sql.ref(from)}, ${value(input)})`;
    });
    return sql`, ${sql.ref(`dependent${index}`)} as (insert into ${sql.table(dependent.table)}
      (${sql.join(dependent.columns.map(({ name }) => sql.ref(name)))}) select ${sql.join(sources)} from inserted)`;
  });
  const notify = shape.notify;
  // Joined in so that they run: a statement runs only the CTEs it reads, and this one once per inserted row.
  const notified = notify
    ? sql`, notified as (select ${sql.join(
        notify.payloads.map((payload) => sql`pg_notify(${value(notify.channel)}, ${value(payload)})`),
      )} from inserted)`
    : sql``;
  // The answer names its columns: a column added later (database configuration) must not change a kept plan's.
  const answer =
    shape.returned.length > 0
      ? sql.join(shape.returned.map((name) => sql.ref(`inserted.${name}`)))
      : sql`inserted.*`;
  return sql<Row>`with inserted as (${inserted})${sql.join(writes, sql``)}${notified}
    select ${answer} from inserted${notify ? sql`, notified` : sql``}`;
}

export async function updateRow(
  db: Db,
  object: ObjectMeta,
  uniqueId: number,
  values: Readonly<Row>,
): Promise<void> {
  const assignments = Object.entries(values).map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
  // An update with nothing to change still takes a new rowstamp: the client asked for a write. The unique id is an
  // identity column that refuses any assignment, so the no-op assigns the rowstamp (its trigger renews it).
  const set = assignments.length > 0 ? sql.join(assignments) : sql`rowstamp = rowstamp`;
  await sql`update ${sql.table(object.table)} set ${set} where ${sql.ref(object.uniqueId)} = ${uniqueId}`.execute(
    db,
  );
}

export async function deleteRow(db: Db, object: ObjectMeta, uniqueId: number): Promise<void> {
  await sql`delete from ${sql.table(object.table)} where ${sql.ref(object.uniqueId)} = ${uniqueId}`.execute(
    db,
  );
}
