import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/**
 * Named (server-side) prepared statements on PostgreSQL, for the few statements the service sends again and again
 * with other values only (src/db/README.md, "Prepared statements"). PostgreSQL parses, analyses and plans an unnamed
 * statement afresh every time; a named one is parsed once per connection, and its plan is kept. For the create's
 * one statement (an insert, its status history and its key check) that planning is most of what the database
 * spends on it.
 *
 * Kysely's driver hands `pg` the SQL text and the values only, so the names are kept here, by text: a repository
 * marks a compiled text with `preparedStatement`, and the pool given to Kysely sends every marked text under its
 * name. A statement sent under a name must return the same columns for as long as the connection lives (PostgreSQL
 * refuses a kept plan whose result changed): a marked statement names the columns it returns, never `*`.
 */

/** Texts marked, each with its name; bounded, as the texts are (a few compiled shapes per object). */
const names = new Map<string, string>();
const MARKED_KEPT = 1024;

/**
 * Marks an SQL text as one to prepare and answers it. The name is the text's digest, so one text has one name on
 * every connection and two texts never share one. Past the bound a text is simply sent unnamed.
 */
export function preparedStatement(text: string): string {
  if (!names.has(text) && names.size < MARKED_KEPT) {
    names.set(text, `eas_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`);
  }
  return text;
}

/** The name a text is sent under, if it was marked. */
export function preparedNameOf(text: string): string | undefined {
  return names.get(text);
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
    return this.client.query({ name, text: sql, values: parameters });
  }

  release(): void {
    this.client.release();
  }
}
