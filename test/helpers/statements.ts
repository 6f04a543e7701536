import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/**
 * The SQL texts of the statements sent to the database (PGlite, or PostgreSQL through `pg`) while `run` runs, in
 * the order sent: how tests show how many round trips a request costs. Counts every statement of the process, so
 * run nothing else meanwhile.
 */
export async function countStatements<T>(
  run: () => Promise<T>,
): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const pgliteQuery = PGlite.prototype.query;
  const pgQuery = pg.Client.prototype.query;
  const seen = (text: unknown) => statements.push(typeof text === 'string' ? text : JSON.stringify(text));
  PGlite.prototype.query = function (this: PGlite, ...args: Parameters<PGlite['query']>) {
    seen(args[0]);
    return pgliteQuery.apply(this, args);
  } as PGlite['query'];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    seen(typeof args[0] === 'object' && args[0] !== null ? (args[0] as { text?: unknown }).text : args[0]);
    return (pgQuery as (...parameters: unknown[]) => unknown).apply(this, args);
  } as typeof pgQuery;
  try {
    return { result: await run(), statements };
  } finally {
    PGlite.prototype.query = pgliteQuery;
    pg.Client.prototype.query = pgQuery;
  }
}

/** What writes in the background after a request: the logins' bookkeeping batch and the audit trail's sealing. */
interface BackgroundWriters {
  logins: { flush(): Promise<unknown> };
  audit: { seal(): Promise<number> };
}

/**
 * Writes now what would be written shortly after the requests so far (login bookkeeping, then the audit records it
 * and they made, sealed), so that a count of statements that follows holds only those of the request counted.
 */
export async function settleBackgroundWrites(services: BackgroundWriters): Promise<void> {
  await services.logins.flush();
  await services.audit.seal();
}
