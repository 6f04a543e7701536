import { isDeepStrictEqual } from 'node:util';
import { createQueryId } from 'kysely';
import type { CompiledQuery, PostgresPool, PostgresPoolClient, QueryResult } from 'kysely';
import pg from 'pg';

/**
 * Named (server-side) prepared statements on PostgreSQL, for the statements the service sends again and again with
 * other values only: the create's one statement and the compiled statements of repeated query shapes
 * (src/db/README.md, "Prepared statements"). PostgreSQL parses, analyses and plans an unnamed statement afresh every
 * time; a named one is parsed once per connection, and its plan is kept.
 *
 * Kysely's driver hands `pg` the SQL text and the values only, so the names are kept here, by text: a repository
 * marks a compiled text with `preparedStatement`, and the pool given to Kysely sends every marked text under its
 * name. A statement kept prepared must return the same columns for as long as the connection lives (PostgreSQL
 * refuses a kept plan whose result changed): one that may outlive a change of its tables either names its columns
 * or is compiled afresh, under a new name, once the metadata changes (`forgetPrepared`).
 */

/**
 * At most this many texts are named in a process: every connection of the pool may end up holding each of them,
 * and `pg` never deallocates a statement. Texts beyond are sent unnamed, as any other statement.
 */
const STATEMENTS_NAMED = 512;

/** SQLSTATE of "cached plan must not change result type": a table of a named statement changed under it. */
const CACHED_PLAN_CHANGED = '0A000';

const names = new Map<string, string>();
/** Never reused: a connection refuses a name it knows with another text, and keeps one it knows broken. */
let nextName = 0;

/** Marks an SQL text as one to send by name (up to the limit of names) and answers it. */
export function preparedStatement(text: string): string {
  if (!names.has(text) && names.size < STATEMENTS_NAMED) names.set(text, `eas_${nextName++}`);
  return text;
}

/** The name `text` is sent under, if it was marked. */
export function preparedName(text: string): string | undefined {
  return names.get(text);
}

/** A template's inputs: the rows a statement writes, or undefined where it writes none (no audit record). */
type TemplateInputs = ReadonlyArray<object | undefined>;

/** Stands for one field of one input while a template's shape is compiled. */
class Slot {
  constructor(
    readonly input: number,
    readonly field: string,
  ) {}
}

/** A shape compiled once: its text, and for each parameter the input field it is or the constant it always is. */
interface CompiledShape {
  readonly sql: string;
  readonly query: CompiledQuery['query'];
  readonly parameters: ReadonlyArray<Slot | { readonly constant: unknown }>;
}

/**
 * A statement built and compiled once per shape (which inputs are given, which of their fields are defined) and
 * afterwards only filled in with each call's values, then sent by name: for the writes that carry an audit record
 * inside a row lock every other writer of that row waits on, where building Kysely's tree and compiling it (7 µs
 * for a property's history row, 19 µs with its record, in a loop; several times that on a loaded machine) was time
 * they all waited for (README.md, "Prepared statements"). A shape is compiled with a placeholder in each field, so
 * every parameter is known to be a field of an input or a constant of the statement; its first use also compiles
 * the real statement and refuses a template that would send anything else.
 */
export class StatementTemplate<Db, Inputs extends TemplateInputs> {
  private readonly shapes = new Map<string, CompiledShape>();

  constructor(private readonly build: (db: Db, ...inputs: Inputs) => { compile(): CompiledQuery }) {}

  /** The statement for these values, compiled as `build` would compile it. */
  compile(db: Db, ...inputs: Inputs): CompiledQuery {
    const key = shapeKey(inputs);
    let shape = this.shapes.get(key);
    const fresh = shape === undefined;
    shape ??= this.compileShape(db, inputs);
    const parameters = shape.parameters.map((parameter) =>
      parameter instanceof Slot
        ? (inputs[parameter.input] as Record<string, unknown>)[parameter.field]
        : parameter.constant,
    );
    const compiled: CompiledQuery = {
      sql: shape.sql,
      query: shape.query,
      queryId: createQueryId(),
      parameters,
    };
    if (fresh) {
      const direct = this.build(db, ...inputs).compile();
      if (direct.sql !== compiled.sql || !isDeepStrictEqual(direct.parameters, compiled.parameters))
        throw new Error(`statement template does not reproduce its statement: ${direct.sql}`);
      this.shapes.set(key, shape);
    }
    preparedStatement(compiled.sql);
    return compiled;
  }

  /** Compiles `compile`'s statement and runs it inside `db` (a transaction, usually). */
  execute(db: Db & QueryExecutor, ...inputs: Inputs): Promise<QueryResult<unknown>> {
    return db.executeQuery(this.compile(db, ...inputs));
  }

  private compileShape(db: Db, inputs: Inputs): CompiledShape {
    const placeholders = inputs.map((input, index) =>
      input === undefined
        ? undefined
        : Object.fromEntries(
            Object.entries(input).map(([field, value]) => [
              field,
              value === undefined ? undefined : new Slot(index, field),
            ]),
          ),
    ) as unknown as Inputs;
    const compiled = this.build(db, ...placeholders).compile();
    return {
      sql: compiled.sql,
      query: compiled.query,
      parameters: compiled.parameters.map((parameter) =>
        parameter instanceof Slot ? parameter : { constant: parameter },
      ),
    };
  }
}

/** Which inputs are given and which of their fields are defined: what a statement's text depends on. */
function shapeKey(inputs: TemplateInputs): string {
  let key = '';
  for (const input of inputs) {
    if (input === undefined) key += '-';
    else
      for (const field in input)
        key += (input as Record<string, unknown>)[field] === undefined ? `${field}?,` : `${field},`;
    key += '|';
  }
  return key;
}

/** Forgets every name (the metadata changed): texts marked again are prepared afresh under new names. */
export function forgetPrepared(): void {
  names.clear();
}

/** What runs a statement when no pool is known for it: a Kysely instance or transaction. */
interface QueryExecutor {
  executeQuery(query: CompiledQuery): Promise<QueryResult<unknown>>;
}

/** The pool behind each Kysely instance on PostgreSQL (not its transactions, which are other objects). */
const poolsOf = new WeakMap<QueryExecutor, pg.Pool>();

/** Lets kept statements on `db` run straight on `pool`, the pool `db`'s own driver uses (`runKept`). */
export function keepOnPool(db: QueryExecutor, pool: pg.Pool): void {
  poolsOf.set(db, pool);
}

/**
 * Runs a kept statement and answers its rows. On a Kysely instance whose pool is known (`keepOnPool`), straight
 * through the pool, as `pg` itself would: Kysely's executor adds nothing to a statement already compiled (no
 * plugins, no transformation of rows) but a query id, a connection provider and a wrapper per checkout, which on a
 * page of ten members cost more CPU than the rows' own decoding (bench/README.md, "query"). Anywhere else (PGlite,
 * a transaction) through Kysely.
 */
export async function runKept<Row>(db: QueryExecutor, compiled: CompiledQuery): Promise<Row[]> {
  const pool = poolsOf.get(db);
  if (pool === undefined) return (await db.executeQuery(compiled)).rows as Row[];
  const { sql, parameters } = compiled;
  const name = names.get(sql);
  const values = parameters as unknown[];
  if (name === undefined) return (await pool.query(sql, values)).rows as Row[];
  try {
    return await runNamed<Row>(pool, name, sql, values);
  } catch (error) {
    // As in PreparingClient.query: another process changed a table of this statement before this one heard of it.
    if ((error as { code?: unknown }).code !== CACHED_PLAN_CHANGED) throw error;
    return (await pool.query(sql, values)).rows as Row[];
  }
}

/**
 * A named statement, made from its text rather than from a config object: `pg` copies a config object through its
 * property descriptors on every query (about as much CPU as the rows' decoding on a page of ten), a text it does not.
 */
class NamedQuery extends pg.Query {
  constructor(name: string, text: string, values: unknown[]) {
    super(text, values);
    (this as { name?: string }).name = name;
  }
}

async function runNamed<Row>(pool: pg.Pool, name: string, sql: string, values: unknown[]): Promise<Row[]> {
  // A submittable is sent as it is; the pool answers the promise of its result (its typings say otherwise).
  const result = pool.query(new NamedQuery(name, sql, values)) as unknown as Promise<pg.QueryResult>;
  return (await result).rows as Row[];
}

/**
 * The pool as Kysely sees it: each client sends marked texts as named statements (`pg` keeps which names each
 * connection has parsed and parses a name once), everything else as before.
 */
export function preparingPool(pool: pg.Pool): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const preparing = (client: pg.PoolClient): PostgresPoolClient => {
    let wrapped = clients.get(client);
    if (!wrapped) {
      wrapped = new PreparingClient(client) as unknown as PostgresPoolClient;
      clients.set(client, wrapped);
    }
    return wrapped;
  };
  return {
    connect: async () => preparing(await pool.connect()),
    end: () => pool.end(),
  };
}

/** A pool client that sends marked texts under their names (a cursor, which Kysely passes alone, as it is). */
class PreparingClient {
  constructor(private readonly client: pg.PoolClient) {}

  query(sql: string | pg.Submittable, parameters?: unknown[]): unknown {
    if (typeof sql !== 'string') return this.client.query(sql);
    const name = names.get(sql);
    if (name === undefined) return this.client.query(sql, parameters);
    return this.client.query({ name, text: sql, values: parameters }).catch((error: unknown) => {
      // Another process changed a table this statement reads (its text is the same): run it unnamed this time;
      // this process forgets its names once it hears of the change.
      if ((error as { code?: unknown }).code !== CACHED_PLAN_CHANGED) throw error;
      return this.client.query(sql, parameters);
    });
  }

  release(): void {
    this.client.release();
  }
}
