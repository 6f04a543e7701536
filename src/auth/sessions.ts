import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { EVERYTHING_CHANGED, type ChangeBus, type Confirmation } from '../db/change-bus.js';
import { isMaximoError } from '../errors.js';
import { BoundedCache } from '../util/bounded-cache.js';
import { CacheStatistics } from '../util/cache-statistics.js';
import type { MaybePromise } from '../util/maybe-promise.js';
import { ConnectionCookies, type IssuingConnection } from './connection-cookies.js';
import { CookieSeal, isSealedCookie, type CookieClaims, type SealedCookies } from './cookie-seal.js';
import {
  claimSession,
  deleteOldestSessions,
  deleteSession,
  deleteUserSessions,
  findSession,
  insertSession,
  isClaimed,
  purgeSessions,
  touchSession,
  countLiveSessions,
  type NewSession,
  type SessionRow,
} from './session-repository.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** A live session as this process knows it. The cookie values themselves are known only to the client. */
export interface SessionEntry {
  /** SHA-256 of the session cookie: the row's key, and what the change bus names. */
  readonly id: string;
  /** SHA-256 of the token cookie, when the login issued one. */
  readonly tokenId: string | null;
  readonly userid: string;
  readonly csrfToken: string;
  /** Sessions whose login asked for the token (`csrf=1`, any scheme): their writes must echo `csrftoken`. */
  readonly csrfRequired: boolean;
  /** The JSON form the login chose (`lean=1` or `lean=0`): the default of the session's requests; null: none chosen. */
  readonly lean: boolean | null;
  readonly expiresAt: number;
  /** Latest activity this process saw or read from the database. */
  lastActive: number;
  /** Latest activity known to be in the database. */
  persistedActive: number;
  /**
   * A sealed cookie that no request had replayed yet: nothing is stored until `SessionService.materialise` (its
   * first replay) or `end` (its logout) claims it (docs/compatibility.md, "Sessions").
   */
  readonly unreplayed?: UnreplayedCookie;
}

/** What a sealed cookie's stored session takes from the cookie. */
export interface UnreplayedCookie {
  readonly issuedAt: number;
  /** The user's credential stamp when it was issued: the cookie is refused once it differs (a password change). */
  readonly credentialStamp: string;
  readonly scheme: string;
}

/** What the answer to per-request credentials seals into its cookie (the issue time is the service's clock). */
export type CookieSessionRequest = Omit<CookieClaims, 'issuedAt'>;

export interface OpenedSession {
  entry: SessionEntry;
  /** Value of the session cookie (JSESSIONID). */
  sessionCookie: string;
  /** Value of the token cookie (LtpaToken2), when asked for. */
  tokenCookie: string | undefined;
}

export interface NewSessionRequest {
  userid: string;
  scheme: string;
  address: string | null;
  csrfRequired: boolean;
  withToken: boolean;
  /** `lean` of the login request, when it had one. */
  lean?: boolean | undefined;
}

export interface SessionServiceOptions {
  db: Kysely<Database>;
  bus: ChangeBus;
  idleMinutes: number;
  maxMinutes: number;
  /** Live sessions a user may hold; a login past it ends that user's oldest (docs/compatibility.md, "Sessions"). */
  maxPerUser: number;
  /** Failures of background writes (activity write-back, purge): logged, never a request's failure. */
  onBackgroundError: (error: unknown) => void;
  now?: () => number;
}

export type CookieKind = 'session' | 'token';

/**
 * Decides, inside the transaction that opens a session, whether it may open (admin mode's login rules,
 * docs/adminmode.md); throws the refusal, which rolls the insert back.
 */
export type SessionAdmission = (transaction: Kysely<Database>, userid: string) => Promise<void>;

/** What the caller of an ending writes in its transaction with the deletes (the audit record of who ended them). */
export type WithinEnding = (
  transaction: Kysely<Database>,
  ended: ReadonlyArray<EndedSession & { userid?: string }>,
) => Promise<void>;

/** A session row deleted by another module's transaction, to be announced as ended. */
export interface EndedSession {
  sessionhash: string;
  tokenhash: string | null;
}

const CHANNEL = 'session';
const MINUTE = 60_000;
/** Cookie values this service issues: 43 characters of base64url, or a sealed cookie of at most about 170. */
const MAX_COOKIE_LENGTH = 512;
const MAX_CACHED_SESSIONS = 100_000;
/** How long a cookie value that names no session is remembered as such (ids are random: none becomes valid). */
const UNKNOWN_TTL_MS = MINUTE;
const MAX_UNKNOWN = 10_000;
const MAX_DIGESTS = 10_000;

/**
 * SHA-256 in hex. Every cookie-authenticated request hashes its cookie: the one-shot `crypto.hash` (Node 20.12+)
 * costs half of a `createHash` object, which older Node 20 releases fall back to.
 */
const sha256: (value: string) => string =
  typeof crypto.hash === 'function'
    ? (value) => crypto.hash('sha256', value, 'hex')
    : (value) => createHash('sha256').update(value).digest('hex');

function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares a client-sent token with the session's in constant time. */
export function sameToken(sent: string, expected: string): boolean {
  const left = Buffer.from(sent);
  const right = Buffer.from(expected);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Login sessions. The rows are in the database, shared by every process; each process serves them from memory, so
 * that a request authenticated by a cookie costs a hash and a map lookup. Processes stay consistent through the
 * change bus (an ended session is dropped everywhere when the delete commits) and through the activity write-back:
 * a process writes a session's last activity at most once per write-back interval, and before it declares a session
 * idle it reads the database, where another process's activity may be.
 */
export class SessionService {
  /**
   * The digests of the cookies seen lately: a client sends its cookie on every request, and a map lookup costs a
   * fraction of the hash (src/auth/README.md, "Caches"). The cookies are the process's own memory, as the requests
   * carrying them are; never written.
   */
  private readonly recentDigests = new BoundedCache<string, string>(MAX_DIGESTS);
  readonly idleMs: number;
  readonly maxMs: number;
  /** At most this much activity is unknown to other processes: a quarter of the idle timeout, at most a minute. */
  readonly writeBackMs: number;
  private readonly byId = new Map<string, SessionEntry>();
  private readonly byToken = new Map<string, SessionEntry>();
  private readonly unknown = new Map<string, number>();
  private readonly loading = new Map<string, Promise<SessionEntry | undefined>>();
  /** First replays being stored, by session id: one transaction per cookie and process. */
  private readonly materialising = new Map<string, Promise<SessionEntry | undefined>>();
  private seal: CookieSeal | undefined;
  private readonly connectionCookies = new ConnectionCookies();
  private readonly now: () => number;
  private lastPurge = 0;
  private admission: SessionAdmission | undefined;

  private digest(value: string): string {
    return this.recentDigests.getOrCompute(value, sha256);
  }
  /** Cookies resolved from memory (hits) and from the database (misses). */
  readonly cacheStatistics = new CacheStatistics();

  constructor(private readonly options: SessionServiceOptions) {
    this.idleMs = options.idleMinutes * MINUTE;
    this.maxMs = options.maxMinutes * MINUTE;
    this.writeBackMs = Math.min(MINUTE, this.idleMs / 4);
    this.now = options.now ?? Date.now;
  }

  async listen(): Promise<void> {
    await this.options.bus.listen(CHANNEL, (payload) => this.forget(payload));
  }

  /**
   * The key of sealed cookies, derived from the master key (the same in every process): until it is set, this
   * service issues none and takes none (the shell's commands, which only end sessions).
   */
  setCookieKey(key: Buffer): void {
    this.seal = new CookieSeal(key);
  }

  /**
   * The cookies of an answer to per-request credentials: sealed, nothing stored, nothing counted (no database). The
   * first request that replays one stores its session (`materialise`). Given the connection, they may be those it
   * was handed a moment ago for the same claims (src/auth/connection-cookies.ts).
   */
  issue(request: CookieSessionRequest, connection?: IssuingConnection): SealedCookies {
    const seal = this.seal;
    if (!seal) throw new Error('The session cookie key is not set');
    if (connection === undefined) return seal.seal({ ...request, issuedAt: this.now() });
    return this.connectionCookies.cookiesFor(
      connection.socket,
      connection.address,
      request,
      this.now(),
      seal,
    );
  }

  /** Sets the check every new session passes (one; admin mode's). */
  setAdmission(admission: SessionAdmission): void {
    this.admission = admission;
  }

  /** Sessions whose row shows activity since this are live: the idle timeout plus the write-back interval. */
  activeSince(now: number = this.now()): Date {
    return new Date(now - this.idleMs - this.writeBackMs);
  }

  /** Announces sessions that `transaction` deletes: every process drops them when it commits. */
  async announceEnded(transaction: Kysely<Database>, ended: readonly EndedSession[]): Promise<void> {
    for (const session of ended)
      await this.options.bus.notify<Database>(
        transaction,
        CHANNEL,
        `${session.sessionhash} ${session.tokenhash ?? ''}`,
      );
  }

  /**
   * Ends every session of a user, in every process: the rows deleted and each announced on the change bus in one
   * transaction (the break-glass `npm run admin -- sessions end <user>`, docs/security.md). Answers how many ended.
   */
  async endAllOf(userid: string, alsoWithin?: WithinEnding): Promise<number> {
    const ended = await this.options.db.transaction().execute(async (transaction) => {
      const rows = await deleteUserSessions(transaction, userid);
      await this.announceEnded(transaction, rows);
      await alsoWithin?.(transaction, rows);
      return rows;
    });
    this.forgetEnded(ended);
    return ended.length;
  }

  /** After the commit of `announceEnded`'s transaction: this process drops them at once. */
  forgetEnded(ended: readonly EndedSession[]): void {
    for (const session of ended) this.drop(session.sessionhash, session.tokenhash);
  }

  async open(request: NewSessionRequest): Promise<OpenedSession> {
    const sessionCookie = newSecret();
    const tokenCookie = request.withToken ? newSecret() : undefined;
    const now = this.now();
    const row: SessionRow = {
      sessionhash: this.digest(sessionCookie),
      tokenhash: tokenCookie === undefined ? null : this.digest(tokenCookie),
      userid: request.userid,
      csrftoken: randomBytes(24).toString('base64url'),
      csrfrequired: request.csrfRequired,
      lean: request.lean ?? null,
      lastactive: new Date(now),
      expires: new Date(now + this.maxMs),
    };
    // Every login has its own session, as on the deployed systems; clients that log in again and again without
    // the cookie open one per login, so the user's oldest beyond the bound end with the insert.
    const evicted = await this.options.db.transaction().execute((transaction) =>
      this.store(transaction, {
        ...row,
        scheme: request.scheme,
        clientaddr: request.address?.slice(0, 64) ?? null,
        logindate: new Date(now),
      }),
    );
    this.forgetEnded(evicted);
    const entry = this.remember(row);
    this.purgeNow(now);
    return { entry, sessionCookie, tokenCookie };
  }

  /**
   * Stores the session of a sealed cookie's first replay (`entry.unreplayed`), as a login stores its own: admitted
   * (admin mode), counted, within the per-user bound. Exactly once whichever processes receive the first replays
   * at the same moment: the claim's primary key lets one insert, and the others read what it stored. Undefined when
   * the cookie was ended meanwhile, or the admission refuses it (the cookie may be replayed later).
   */
  materialise(entry: SessionEntry, address: string | null): Promise<SessionEntry | undefined> {
    let storing = this.materialising.get(entry.id);
    if (!storing) {
      storing = this.storeReplayed(entry, address).finally(() => this.materialising.delete(entry.id));
      this.materialising.set(entry.id, storing);
    }
    return storing;
  }

  private async storeReplayed(
    entry: SessionEntry,
    address: string | null,
  ): Promise<SessionEntry | undefined> {
    const cookie = entry.unreplayed;
    if (!cookie) return entry;
    const now = this.now();
    const row: SessionRow = {
      sessionhash: entry.id,
      tokenhash: entry.tokenId,
      userid: entry.userid,
      csrftoken: entry.csrfToken,
      csrfrequired: entry.csrfRequired,
      lean: entry.lean,
      lastactive: new Date(now),
      expires: new Date(entry.expiresAt),
    };
    let stored: EndedSession[] | undefined;
    try {
      stored = await this.options.db.transaction().execute(async (transaction) => {
        if (!(await claimSession(transaction, entry.id, row.expires))) return undefined;
        return this.store(transaction, {
          ...row,
          scheme: cookie.scheme,
          clientaddr: address?.slice(0, 64) ?? null,
          logindate: new Date(cookie.issuedAt),
        });
      });
    } catch (error) {
      // Refused by the admission (admin mode): the claim rolled back with the insert.
      if (isMaximoError(error)) return undefined;
      throw error;
    }
    if (stored === undefined) {
      // Claimed before: another process stored it a moment ago, or it was ended.
      const found = await this.findSealed(entry.id);
      return found === 'ended' ? undefined : found;
    }
    this.forgetEnded(stored);
    const materialised = this.remember(row);
    this.purgeNow(now);
    return materialised;
  }

  /**
   * Inserts a session in `transaction`, after the admission; ends the user's oldest beyond the bound, announced to
   * every process when the transaction commits. Answers the ended ones (`forgetEnded` after the commit).
   */
  private async store(transaction: Kysely<Database>, session: NewSession): Promise<EndedSession[]> {
    if (this.admission) await this.admission(transaction, session.userid);
    await insertSession(transaction, session);
    const ended = await deleteOldestSessions(transaction, session.userid, this.options.maxPerUser);
    await this.announceEnded(transaction, ended);
    return ended;
  }

  /**
   * The live session a cookie value names, or undefined (unknown, ended, idle or past its end): at once when this
   * process knows the session, later when the database must be read.
   */
  resolve(kind: CookieKind, value: string): MaybePromise<SessionEntry | undefined> {
    if (value.length === 0 || value.length > MAX_COOKIE_LENGTH) return undefined;
    const hash = this.digest(value);
    const entry = (kind === 'session' ? this.byId : this.byToken).get(hash);
    if (entry) {
      this.cacheStatistics.hits += 1;
      return this.resolveEntry(entry);
    }
    // Cookie values that named no session lately are refused without a query (see `markUnknown`).
    const unknownUntil = this.unknown.get(hash);
    if (unknownUntil !== undefined && unknownUntil > this.now()) return undefined;
    this.cacheStatistics.misses += 1;
    if (isSealedCookie(value)) return this.resolveSealed(value, hash);
    return this.load(kind, hash).then((loaded) => loaded && this.alive(loaded));
  }

  /**
   * A sealed cookie this process does not hold: its stored session if a replay stored it (on any process), else,
   * if it was never claimed and is within its timeouts (the idle one counted from its issue), an unreplayed entry,
   * which nothing stores yet. Forged, altered, ended and timed-out cookies are unknown.
   */
  private resolveSealed(value: string, hash: string): MaybePromise<SessionEntry | undefined> {
    const opened = this.seal?.open(value);
    const now = this.now();
    if (!opened || now >= opened.claims.issuedAt + this.maxMs) {
      this.markUnknown(hash);
      return undefined;
    }
    const { claims } = opened;
    const id = this.digest(opened.sessionCookie);
    return this.findSealed(id).then((found) => {
      if (found !== undefined) {
        if (found !== 'ended') return this.alive(found);
        this.markUnknown(hash);
        return undefined;
      }
      if (now - claims.issuedAt > this.idleMs) {
        this.markUnknown(hash);
        return undefined;
      }
      return {
        id,
        tokenId: claims.withToken ? this.digest(opened.tokenCookie) : null,
        userid: claims.userid,
        csrfToken: randomBytes(24).toString('base64url'),
        csrfRequired: claims.csrfRequired,
        lean: claims.lean,
        expiresAt: claims.issuedAt + this.maxMs,
        lastActive: claims.issuedAt,
        persistedActive: claims.issuedAt,
        unreplayed: {
          issuedAt: claims.issuedAt,
          credentialStamp: claims.credentialStamp,
          scheme: claims.scheme,
        },
      };
    });
  }

  /** The stored session of a sealed cookie; `ended` when it was claimed and has no session; undefined: unclaimed. */
  private async findSealed(id: string): Promise<SessionEntry | 'ended' | undefined> {
    const known = this.byId.get(id);
    if (known) return known;
    const endedHere = () => {
      const until = this.unknown.get(id);
      return until !== undefined && until > this.now();
    };
    if (endedHere()) return 'ended';
    const row = await findSession(this.options.db, 'sessionhash', id);
    // Ended while the row was read (the notification came first): not to be cached again.
    if (endedHere()) return 'ended';
    if (row) return this.byId.get(row.sessionhash) ?? this.remember(row);
    if (!(await isClaimed(this.options.db, id))) return undefined;
    // A claim commits with the session it stores: one that another process committed after the read above shows
    // its session now, unless it was ended since.
    const stored = await findSession(this.options.db, 'sessionhash', id);
    if (stored && !endedHere()) return this.byId.get(stored.sessionhash) ?? this.remember(stored);
    return 'ended';
  }

  private resolveEntry(entry: SessionEntry): MaybePromise<SessionEntry | undefined> {
    // The path of nearly every request: a cached session within both timeouts, no database and no promise.
    const now = this.now();
    if (now < entry.expiresAt && now - entry.lastActive <= this.idleMs) {
      this.touch(entry, now);
      return entry;
    }
    return this.alive(entry);
  }

  /** Live sessions of every process, as the database knows them (activity not yet written back allowed for). */
  liveSessions(): Promise<number> {
    const now = this.now();
    return countLiveSessions(this.options.db, new Date(now), new Date(now - this.idleMs - this.writeBackMs));
  }

  /**
   * Ends a session on every process: the delete and the notification commit together, and the caller answers once
   * every process has dropped the session (`ChangeBus.confirm`), so the client's next request is refused wherever
   * it lands.
   */
  async end(
    entry: Pick<SessionEntry, 'id' | 'tokenId'> & Partial<SessionEntry>,
    alsoWithin?: WithinEnding,
  ): Promise<void> {
    const payload = `${entry.id} ${entry.tokenId ?? ''}`;
    let confirmation: Confirmation | undefined;
    try {
      await this.options.db.transaction().execute(async (transaction) => {
        // A sealed cookie never replayed is claimed as ended, so that no process stores it later.
        if (entry.unreplayed && entry.expiresAt !== undefined)
          await claimSession(transaction, entry.id, new Date(entry.expiresAt));
        await deleteSession(transaction, entry.id);
        await alsoWithin?.(transaction, [{ sessionhash: entry.id, tokenhash: entry.tokenId ?? null }]);
        await this.options.bus.notify<Database>(transaction, CHANNEL, payload);
        confirmation = await this.options.bus.confirm<Database>(transaction);
      });
    } catch (error) {
      confirmation?.cancel();
      throw error;
    }
    this.forget(payload);
    await confirmation?.heard;
  }

  private async alive(entry: SessionEntry): Promise<SessionEntry | undefined> {
    const now = this.now();
    if (now >= entry.expiresAt) return this.expire(entry);
    if (now - entry.lastActive > this.idleMs) {
      // Idle here; another process may have served it since, and written that back.
      const row = await findSession(this.options.db, 'sessionhash', entry.id);
      if (!row || now - row.lastactive.getTime() > this.idleMs) return this.expire(entry);
      entry.lastActive = row.lastactive.getTime();
      entry.persistedActive = entry.lastActive;
    }
    this.touch(entry, now);
    return entry;
  }

  /** Notes activity; written back at most once per write-back interval, off the request path. */
  private touch(entry: SessionEntry, now: number): void {
    entry.lastActive = now;
    if (now - entry.persistedActive >= this.writeBackMs) {
      entry.persistedActive = now;
      touchSession(this.options.db, entry.id, new Date(now)).catch(this.options.onBackgroundError);
    }
  }

  private expire(entry: SessionEntry): undefined {
    this.drop(entry.id, entry.tokenId);
    return undefined;
  }

  private load(kind: CookieKind, hash: string): Promise<SessionEntry | undefined> {
    let loading = this.loading.get(hash);
    if (!loading) {
      loading = findSession(this.options.db, kind === 'session' ? 'sessionhash' : 'tokenhash', hash)
        .then((row) => {
          // Ended while the row was read (the notification came first): not to be cached again.
          const ended = this.unknown.get(hash);
          if (!row || (ended !== undefined && ended > this.now())) {
            this.markUnknown(hash);
            return undefined;
          }
          return this.byId.get(row.sessionhash) ?? this.remember(row);
        })
        .finally(() => this.loading.delete(hash));
      this.loading.set(hash, loading);
    }
    return loading;
  }

  private remember(row: SessionRow): SessionEntry {
    if (this.byId.size >= MAX_CACHED_SESSIONS) {
      const oldest = this.byId.values().next().value;
      if (oldest) this.drop(oldest.id, oldest.tokenId, false);
    }
    const lastActive = row.lastactive.getTime();
    const entry: SessionEntry = {
      id: row.sessionhash,
      tokenId: row.tokenhash,
      userid: row.userid,
      csrfToken: row.csrftoken,
      csrfRequired: row.csrfrequired,
      lean: row.lean,
      expiresAt: row.expires.getTime(),
      lastActive,
      persistedActive: lastActive,
    };
    this.byId.set(entry.id, entry);
    if (entry.tokenId) this.byToken.set(entry.tokenId, entry);
    return entry;
  }

  /** A notification of an ended session: `<session hash> <token hash>`. */
  private forget(payload: string): void {
    if (payload === EVERYTHING_CHANGED) {
      this.connectionCookies.forgetAll();
      // Notifications may have been missed (docs/operations.md): sessions are read from the database again.
      this.byId.clear();
      this.byToken.clear();
      this.unknown.clear();
      return;
    }
    const [id = '', tokenId = ''] = payload.split(' ');
    this.drop(id, tokenId || null);
  }

  private drop(id: string, tokenId: string | null, ended = true): void {
    const entry = this.byId.get(id);
    this.byId.delete(id);
    const token = tokenId ?? entry?.tokenId ?? null;
    if (token) this.byToken.delete(token);
    if (ended) {
      this.connectionCookies.forgetAll();
      this.markUnknown(id);
      if (token) this.markUnknown(token);
    }
  }

  private markUnknown(hash: string): void {
    if (this.unknown.size >= MAX_UNKNOWN) {
      const now = this.now();
      for (const [key, until] of this.unknown) if (until <= now) this.unknown.delete(key);
      if (this.unknown.size >= MAX_UNKNOWN) this.unknown.clear();
    }
    this.unknown.set(hash, this.now() + UNKNOWN_TTL_MS);
  }

  /** Deletes dead rows now and then (at most once a minute per process), off the request path. */
  private purgeNow(now: number): void {
    if (now - this.lastPurge < MINUTE) return;
    this.lastPurge = now;
    // A session idle by its row may have activity not yet written back: allow for the write-back interval.
    const idleBefore = new Date(now - this.idleMs - this.writeBackMs);
    purgeSessions(this.options.db, new Date(now), idleBefore).catch(this.options.onBackgroundError);
  }
}
