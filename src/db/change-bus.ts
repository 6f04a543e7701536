import type { PGlite } from '@electric-sql/pglite';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import { registerLevel } from './process-registry.js';

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
  /**
   * Last in a transaction that notified, for a change whose effect must be everywhere before the writer answers (a
   * logout, a blocked address, a revoked key): the caller awaits `heard` after the commit, and the client's next request then
   * lands on processes that have all run their handlers for the transaction's notifications. Costs a query and a
   * round trip through every process; rare writes only (see src/db/README.md, "Confirmations").
   */
  confirm<DB>(executor: Kysely<DB>): Promise<Confirmation>;
  close(): Promise<void>;
}

/** See `ChangeBus.confirm`. */
export interface Confirmation {
  /** Every process has heard, or the bounded wait for one that stopped answering is over; never rejects. */
  readonly heard: Promise<void>;
  /** The transaction did not commit: nothing is to be heard. */
  cancel(): void;
}

/** Internal channels of confirmations: `confirm` carries a token, `confirmed` "<token> <process id>". */
const CONFIRM_CHANNEL = 'confirm';
const CONFIRMED_CHANNEL = 'confirmed';
const CONFIRM_TIMEOUT_MS = 2000;

/**
 * The confirmations one process waits for. A token goes out on `confirm` after the transaction's other
 * notifications; a process hears them in the order they were sent and runs handlers synchronously, so once it
 * hears the token it has run its handlers for everything before it, and says so.
 */
export class Confirmations {
  readonly processId = randomUUID();
  private readonly waiting = new Map<
    string,
    { expected: number; heardBy: Set<string>; finish: () => void }
  >();
  private sent = 0;

  constructor(private readonly timeoutMs = CONFIRM_TIMEOUT_MS) {}

  newToken(): string {
    this.sent += 1;
    return `${this.processId}.${this.sent}`;
  }

  isOwn(token: string): boolean {
    return token.startsWith(`${this.processId}.`);
  }

  /** Waits until `expected` distinct processes have heard `token`, at most the timeout. */
  expect(token: string, expected: number): Confirmation {
    let resolve: () => void = () => undefined;
    const heard = new Promise<void>((done) => {
      resolve = done;
    });
    const finish = (): void => {
      clearTimeout(timer);
      this.waiting.delete(token);
      resolve();
    };
    const timer = setTimeout(finish, this.timeoutMs);
    timer.unref();
    if (expected <= 0) finish();
    else this.waiting.set(token, { expected, heardBy: new Set(), finish });
    return { heard, cancel: finish };
  }

  /** `processId` has run its handlers for everything sent before `token`. */
  heard(token: string, processId: string): void {
    const waiter = this.waiting.get(token);
    if (!waiter) return;
    waiter.heardBy.add(processId);
    if (waiter.heardBy.size >= waiter.expected) waiter.finish();
  }
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

async function sendConfirmToken<DB>(
  executor: Kysely<DB>,
  name: string,
  token: string,
  confirmation: Confirmation,
): Promise<void> {
  try {
    await notifyOn(executor, name, [token]);
  } catch (error) {
    confirmation.cancel();
    throw error;
  }
}

export class PGliteChangeBus implements ChangeBus {
  private readonly unsubscribers: Array<() => Promise<void>> = [];
  private readonly handlers = new Handlers();
  private readonly confirmations: Confirmations;

  constructor(
    private readonly pglite: PGlite,
    private readonly prefix: string,
    confirmTimeoutMs?: number,
  ) {
    this.confirmations = new Confirmations(confirmTimeoutMs);
  }

  /** Before any transaction: PGlite's one connection cannot LISTEN while a transaction holds it. */
  async start(): Promise<void> {
    await this.listen(CONFIRM_CHANNEL, (token) =>
      this.confirmations.heard(token, this.confirmations.processId),
    );
  }

  /**
   * PGlite is one process, whose listeners it calls one after the other as each notification arrives: when this bus
   * hears its token, every bus on the database has run its handlers for what came before.
   */
  async confirm<DB>(executor: Kysely<DB>): Promise<Confirmation> {
    const token = this.confirmations.newToken();
    const confirmation = this.confirmations.expect(token, 1);
    await sendConfirmToken(executor, qualify(this.prefix, CONFIRM_CHANNEL), token, confirmation);
    return confirmation;
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
  private readonly confirmations: Confirmations;
  /**
   * Statements on the listening connection run one after another (a `pg` client given a second query while one
   * runs only queues it, and is to refuse it); acknowledgements heard meanwhile wait here and go out together.
   */
  private listenerQueue: Promise<void> = Promise.resolve();
  private pendingAcknowledgements: string[] = [];
  /**
   * The listening connection's `application_name`, the same on every process of the deployment: `confirm` counts
   * the connections that carry it (PostgreSQL names at most 63 bytes).
   */
  readonly applicationName: string;

  /** `connect` opens a dedicated connection for LISTEN; it is opened again whenever it is lost. */
  constructor(
    private readonly connect: () => Promise<pg.Client>,
    private readonly prefix: string,
    confirmTimeoutMs?: number,
  ) {
    this.applicationName = `eas bus ${prefix}`.slice(0, 63);
    this.confirmations = new Confirmations(confirmTimeoutMs);
  }

  /** The listening connection's backend process id: this process's entry in the registry (process-registry.ts). */
  get backendPid(): number | undefined {
    return (this.client as { processID?: number | null } | undefined)?.processID ?? undefined;
  }

  async start(): Promise<void> {
    this.handlers.add(qualify(this.prefix, CONFIRM_CHANNEL), (token) => this.acknowledge(token));
    this.handlers.add(qualify(this.prefix, CONFIRMED_CHANNEL), (payload) => {
      const space = payload.indexOf(' ');
      if (space > 0) this.confirmations.heard(payload.slice(0, space), payload.slice(space + 1));
    });
    this.client = await this.open();
  }

  /**
   * Waits for every process whose listening connection is open when the transaction runs. One that connects later
   * may hear the token too (an answer more than needed); one whose connection is lost is not waited for: it drops
   * every cache when it is back (`EVERYTHING_CHANGED`). `application_name` is one of the columns of
   * `pg_stat_activity` that every role may read of every connection.
   */
  async confirm<DB>(executor: Kysely<DB>): Promise<Confirmation> {
    const { rows } = await sql<{ listeners: number }>`
      select count(*)::int as listeners from pg_stat_activity
      where datname = current_database() and application_name = ${this.applicationName}`.execute(executor);
    const token = this.confirmations.newToken();
    const confirmation = this.confirmations.expect(token, rows[0]?.listeners ?? 0);
    await sendConfirmToken(executor, qualify(this.prefix, CONFIRM_CHANNEL), token, confirmation);
    return confirmation;
  }

  /** Heard a token: this process's handlers have run for everything sent before it. */
  private acknowledge(token: string): void {
    if (token === EVERYTHING_CHANGED) return;
    if (this.confirmations.isOwn(token)) {
      this.confirmations.heard(token, this.confirmations.processId);
      return;
    }
    // Sent on the listening connection itself: no pool connection is taken while requests may wait for one. A
    // burst of tokens (every write of a busy process) is answered by one statement per turn of the queue.
    this.pendingAcknowledgements.push(`${token} ${this.confirmations.processId}`);
    if (this.pendingAcknowledgements.length > 1) return;
    void this.onListener(() => {
      const payloads = this.pendingAcknowledgements.splice(0);
      return this.client?.query('select pg_notify($1, payload) from unnest($2::text[]) as payload', [
        qualify(this.prefix, CONFIRMED_CHANNEL),
        payloads,
      ]);
    }).catch(() => undefined);
  }

  /** Runs a statement on the listening connection after those queued before it. */
  private onListener(run: () => Promise<unknown> | undefined): Promise<void> {
    const next = this.listenerQueue.then(async () => {
      await run();
    });
    this.listenerQueue = next.catch(() => undefined);
    return next;
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
    if (this.handlers.add(name, handler))
      await this.onListener(() => this.client?.query(listenStatement(name)));
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
      // Set here rather than in the connection's options, which an application_name in DATABASE_URL overrides.
      await client.query(`select set_config('application_name', $1, false)`, [this.applicationName]);
      await registerLevel(client);
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
