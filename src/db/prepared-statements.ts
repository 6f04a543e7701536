import type pg from 'pg';

/*
 * Statements PostgreSQL keeps parsed (and, when its generic plan is as good, planned) per connection: the compiled
 * statements of repeated query shapes (src/oslc/query/execute.ts) are sent by name, so that a connection parses
 * each once instead of once per request (src/oslc/query/README.md, "Compiled statements"). Values stay bound.
 */

/**
 * At most this many texts are named in a process: every connection of the pool may end up holding each of them,
 * and `pg` never deallocates a statement. Texts beyond are sent unnamed, as any other statement.
 */
const STATEMENTS_NAMED = 256;

/** SQLSTATE of "cached plan must not change result type": a table of a named statement changed under it. */
const CACHED_PLAN_CHANGED = '0A000';

const names = new Map<string, string>();
/** Never reused: a connection refuses a known name with another text. */
let nextName = 0;

/** Asks for `text` to be sent as a named statement from now on (up to the limit of names). */
export function keepPrepared(text: string): void {
  if (names.has(text) || names.size >= STATEMENTS_NAMED) return;
  names.set(text, `eas_${nextName++}`);
}

/** The name `text` is sent with, if any. */
export function preparedName(text: string): string | undefined {
  return names.get(text);
}

/** Forgets every name (the metadata changed): the next statements are prepared afresh under new names. */
export function forgetPrepared(): void {
  names.clear();
}

type QueryFunction = (...args: unknown[]) => unknown;

/**
 * Makes `client` send the texts asked for by name. Only the form Kysely uses (text and an array of values, promise
 * answer) is named; every other call passes through unchanged.
 */
export function namePreparedStatements(client: pg.ClientBase): void {
  // The class's method is looked up on each call, not kept: whatever wraps it later (instrumentation, the tests'
  // statement counter) still sees every statement.
  const prototype = Object.getPrototypeOf(client) as { query: QueryFunction };
  const query: QueryFunction = (...args) => {
    const original = prototype.query;
    const [text, values] = args;
    const name = args.length === 2 && typeof text === 'string' ? preparedName(text) : undefined;
    if (name === undefined || !Array.isArray(values)) return Reflect.apply(original, client, args);
    const named = Reflect.apply(original, client, [{ name, text, values }]) as Promise<unknown>;
    return named.catch((error: unknown) => {
      // Another process changed a table this statement reads (its text is the same): run it unnamed this time;
      // this process forgets its names once it hears of the change.
      if ((error as { code?: unknown }).code !== CACHED_PLAN_CHANGED) throw error;
      return Reflect.apply(original, client, args);
    });
  };
  (client as unknown as { query: QueryFunction }).query = query;
}
