import type { PGlite } from '@electric-sql/pglite';
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';

export type ChangeHandler = (payload: string) => void;

/**
 * Payload every handler receives when notifications may have been missed (the listening connection was lost and
 * is back): anything may have changed, so caches drop everything.
 */
export const EVERYTHING_CHANGED = '*';

/**
 * Cross-process change notifications over PostgreSQL LISTEN/NOTIFY. A writer sends the notification inside its
 * own transaction, so every process hears of a change exactly when it commits; caches that depend on shared
 * rows (users, rights, keys, properties) listen and drop what changed.
 */
export interface ChangeBus {
  /** Sends `payload` on `channel`, delivered when `executor`'s transaction commits (at once outside one). */
  notify<DB>(executor: Kysely<DB>, channel: string, payload: string): Promise<void>;
  /** Sends every one of `payloads` on `channel` as `notify` does, in one statement (one round trip). */
  notifyAll<DB>(executor: Kysely<DB>, channel: string, payloads: readonly string[]): Promise<void>;
  /**
   * The database's name of `channel`, for a writer that sends its notifications within a statement of its own
   * (`pg_notify(name, payload)`, src/oslc/README.md); they are delivered when that statement's transaction commits.
   */
  channelName(channel: string): string;
  listen(channel: string, handler: ChangeHandler): Promise<void>;
  /**
   * Runs this process's handlers at once, after a commit: the writer's own next request must not wait for the
   * notification's round trip. Other processes hear the notification itself.
   */
  deliverLocally(channel: string, payload: string): void;
  close(): Promise<void>;
}

/** Handlers by qualified channel name; shared by both engines' buses. */
class Handlers {
  private readonly byChannel = new Map<string, ChangeHandler[]>();

  /** Adds a handler; true when it is the channel's first (the channel must then be listened to). */
  add(channel: string, handler: ChangeHandler): boolean {
    const existing = this.byChannel.get(channel);
    if (existing) {
      existing.push(handler);
      return false;
    }
    this.byChannel.set(channel, [handler]);
    return true;
  }

  run(channel: string, payload: string): void {
    for (const handler of this.byChannel.get(channel) ?? []) handler(payload);
  }

  channels(): string[] {
    return [...this.byChannel.keys()];
  }

  runAll(payload: string): void {
    for (const channel of this.byChannel.keys()) this.run(channel, payload);
  }

  clear(): void {
    this.byChannel.clear();
  }
}

/** Channel names are prefixed so that several schemas (test runs) on one database stay apart. */
function qualify(prefix: string, channel: string): string {
  return `${prefix}_${channel}`.toLowerCase();
}

async function notifyOn<DB>(executor: Kysely<DB>, name: string, payloads: readonly string[]): Promise<void> {
  if (payloads.length === 0) return;
  await sql`select ${sql.join(payloads.map((payload) => sql`pg_notify(${name}, ${payload})`))}`.execute(
    executor,
  );
}

export class PGliteChangeBus implements ChangeBus {
  private readonly unsubscribers: Array<() => Promise<void>> = [];
  private readonly handlers = new Handlers();

  constructor(
    private readonly pglite: PGlite,
    private readonly prefix: string,
  ) {}

  notify<DB>(executor: Kysely<DB>, channel: string, payload: string): Promise<void> {
    return notifyOn(executor, qualify(this.prefix, channel), [payload]);
  }

  notifyAll<DB>(executor: Kysely<DB>, channel: string, payloads: readonly string[]): Promise<void> {
    return notifyOn(executor, qualify(this.prefix, channel), payloads);
  }

  channelName(channel: string): string {
    return qualify(this.prefix, channel);
  }

  async listen(channel: string, handler: ChangeHandler): Promise<void> {
    const name = qualify(this.prefix, channel);
    if (this.handlers.add(name, handler)) {
      this.unsubscribers.push(await this.pglite.listen(name, (payload) => this.handlers.run(name, payload)));
    }
  }

  deliverLocally(channel: string, payload: string): void {
    this.handlers.run(qualify(this.prefix, channel), payload);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    await Promise.all(this.unsubscribers.splice(0).map((unsubscribe) => unsubscribe()));
  }
}

export class PostgresChangeBus implements ChangeBus {
  private readonly handlers = new Handlers();
  private client: pg.Client | undefined;
  private closed = false;
  private retryDelay = MIN_RETRY_MS;

  /** `connect` opens a dedicated connection for LISTEN; it is opened again whenever it is lost. */
  constructor(
    private readonly connect: () => Promise<pg.Client>,
    private readonly prefix: string,
  ) {}

  async start(): Promise<void> {
    this.client = await this.open();
  }

  notify<DB>(executor: Kysely<DB>, channel: string, payload: string): Promise<void> {
    return notifyOn(executor, qualify(this.prefix, channel), [payload]);
  }

  notifyAll<DB>(executor: Kysely<DB>, channel: string, payloads: readonly string[]): Promise<void> {
    return notifyOn(executor, qualify(this.prefix, channel), payloads);
  }

  channelName(channel: string): string {
    return qualify(this.prefix, channel);
  }

  async listen(channel: string, handler: ChangeHandler): Promise<void> {
    const name = qualify(this.prefix, channel);
    if (this.handlers.add(name, handler)) await this.client?.query(listenStatement(name));
  }

  deliverLocally(channel: string, payload: string): void {
    this.handlers.run(qualify(this.prefix, channel), payload);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    await this.client?.end().catch(() => undefined);
  }

  private async open(): Promise<pg.Client> {
    const client = await this.connect();
    client.on('notification', (message) => this.handlers.run(message.channel, message.payload ?? ''));
    // A lost connection would silently stop invalidation: reconnect, and tell every cache it may be stale.
    client.on('error', () => this.reconnect(client));
    client.on('end', () => this.reconnect(client));
    try {
      for (const channel of this.handlers.channels()) await client.query(listenStatement(channel));
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  }

  private reconnect(lost: pg.Client): void {
    if (this.closed || this.client !== lost) return;
    this.client = undefined;
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.retryDelay * 2, MAX_RETRY_MS);
    setTimeout(() => {
      this.open().then(
        (client) => {
          if (this.closed) {
            void client.end();
            return;
          }
          this.client = client;
          this.retryDelay = MIN_RETRY_MS;
          this.handlers.runAll(EVERYTHING_CHANGED);
        },
        () => {
          this.client = lost;
          this.reconnect(lost);
        },
      );
    }, delay).unref();
  }
}

const MIN_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

const listenStatement = (name: string): string => `LISTEN "${name.replace(/"/g, '')}"`;
