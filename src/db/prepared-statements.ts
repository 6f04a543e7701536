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

/**
 * Compiles `query`, marks its text as prepared and runs it: for a write whose text never varies that runs inside a
 * row lock other writers wait on, where planning it afresh each time is time they all wait for (README.md,
 * "Prepared statements"). Its text must not depend on the values, only on which columns are written.
 */
export async function executePrepared(
  db: QueryExecutor,
  query: { compile(): CompiledQuery },
): Promise<QueryResult<unknown>> {
  const compiled = query.compile();
  preparedStatement(compiled.sql);
  return db.executeQuery(compiled);
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
