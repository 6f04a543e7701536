import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * Kysely dialect for the embedded PGlite database. PGlite is one connection, so the driver hands it out to one
 * caller at a time: a transaction holds it from BEGIN to COMMIT and no other query can slip in between.
 * (The published kysely-pglite-dialect package does not accept PGlite 0.5; this is the same thin adapter.)
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's Dialect interface takes Kysely<any>
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

/**
 * Longest run of statements between two turns of the event loop (milliseconds). PGlite runs on the event loop's
 * thread and its queries resolve without giving the loop a turn, so a long transaction (a deploy of tens of
 * thousands of records) would otherwise leave every other request of the process unanswered until it commits.
 */
const STATEMENTS_RUN_MS = 50;

class PGliteConnection implements DatabaseConnection {
  private runSince = performance.now();

  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    // The connection stays held meanwhile (PGliteDriver), so what runs in that turn and needs the database waits
    // for it: nothing slips into an open transaction (docs/operations.md, "The embedded database keeps answering").
    if (performance.now() - this.runSince >= STATEMENTS_RUN_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.runSince = performance.now();
    }
    const result = await this.pglite.query<R>(compiledQuery.sql, [...compiledQuery.parameters]);
    return {
      rows: result.rows,
      ...(result.affectedRows !== undefined && { numAffectedRows: BigInt(result.affectedRows) }),
    };
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    yield await this.executeQuery<R>(compiledQuery);
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly pglite: PGlite) {
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {
    await this.pglite.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.busy = true;
    return this.connection;
  }

  async releaseConnection(): Promise<void> {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy = false;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await connection.executeQuery(CompiledQuery.raw(`begin${isolation}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    // The owner of the PGlite instance closes it (see openDatabase), after listeners are removed.
  }
}
