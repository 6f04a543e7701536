import type { Kysely } from 'kysely';
import type { SessionService } from '../auth/sessions.js';
import type { UserProfile } from '../auth/types.js';
import type { ChangeBus } from '../db/change-bus.js';
import type { Database } from '../db/schema.js';
import { errors } from '../errors.js';
import {
  countLiveSessions,
  deleteOrdinarySessions,
  insertLogEntry,
  latestLogEntries,
  mayLogInDuringAdminMode,
  readState,
  writeState,
  type AdminModeRow,
  type LoggedChange,
} from './repository.js';
import type { AdminModeValue } from './tables.js';
import { adminModeEvent, sessionsEndedEvent } from '../audit/events.js';
import { NO_AUDIT, type AuditRecorder, type RequestOrigin } from '../audit/types.js';

export type { AdminModeValue } from './tables.js';

/** The deployment's admin mode as this process knows it (docs/adminmode.md). */
export interface AdminModeState {
  /** 0 off, 1 on, 2 turning on (ordinary users still have sessions, which end at `logoutAt`). */
  readonly state: AdminModeValue;
  /** Sessions users with the admin-mode login right may hold together while on or pending. */
  readonly numsessions: number | null;
  /** Minutes between turning on and the end of ordinary users' sessions (may be fractional). */
  readonly logoutmin: number | null;
  /** Who made the latest change by request (null: the timed end of the pending state, or never changed). */
  readonly changedBy: string | null;
  readonly changedAt: Date | null;
  /** The server process that made the latest change. */
  readonly serverName: string | null;
  /** While pending: when ordinary users' sessions end and the state becomes 1. */
  readonly logoutAt: Date | null;
  /** When the state became 1. */
  readonly onAt: Date | null;
}

/** What `GET /adminmode/state` reports besides the state: the sessions it is about. */
export interface AdminModeStatus extends AdminModeState {
  /** Live sessions of users without the admin-mode login right (they end when the state becomes 1). */
  readonly ordinarySessions: number;
  /** Live sessions of users with the right, counted against `numsessions`. */
  readonly adminSessions: number;
}

export interface TurnOnRequest {
  numsessions?: number | undefined;
  logoutmin?: number | undefined;
}

export interface AdminModeServiceOptions {
  db: Kysely<Database>;
  bus: ChangeBus;
  sessions: SessionService;
  /** Defaults of `turnOn`: `mxe.adminmode.numsessions`, `mxe.adminmode.logoutmin`. */
  defaults: () => { numsessions: number; logoutmin: number };
  serverName: string;
  /** Failures of the background work (timed transition, reloads): logged, retried by the next trigger. */
  onBackgroundError: (error: unknown) => void;
  now?: () => number;
  /** Where each transition is recorded, in its transaction (docs/audit.md); default: nowhere. */
  audit?: AuditRecorder;
}

const CHANNEL = 'adminmode';
const MINUTE = 60_000;
/** While pending, how often a process checks whether any ordinary session remains (it then turns on at once). */
const PENDING_POLL_MS = 1_000;
/** The longest a timer may wait (Node's limit); a later deadline re-arms it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const DEFAULT_NUMSESSIONS = 5;
export const DEFAULT_LOGOUTMIN = 5;

const OFF: AdminModeState = {
  state: 0,
  numsessions: null,
  logoutmin: null,
  changedBy: null,
  changedAt: null,
  serverName: null,
  logoutAt: null,
  onAt: null,
};

function toState(row: AdminModeRow): AdminModeState {
  return {
    state: row.state,
    numsessions: row.numsessions,
    logoutmin: row.logoutmin,
    changedBy: row.changeby,
    changedAt: row.changedate,
    serverName: row.servername,
    logoutAt: row.logoutdate,
    onAt: row.ondate,
  };
}

/**
 * Admin mode: one state for the deployment, in the database. Every process holds it in memory and reloads it when
 * the change bus announces a change, so the per-request checks (`current`, `admitCaller`) read no database. Turning
 * on is pending (2) until ordinary users' sessions end: at `logoutAt`, or as soon as none remains. Any process may
 * make that transition; it is a conditional update on the row's generation, so exactly one does, and each process
 * re-arms its timer from the stored state when it starts.
 */
export class AdminModeService {
  private state: AdminModeState = OFF;
  private generation = -1;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly db: Kysely<Database>;
  private readonly now: () => number;

  constructor(private readonly options: AdminModeServiceOptions) {
    this.db = options.db;
    this.now = options.now ?? Date.now;
  }

  /** Loads the state, listens for changes, re-arms the pending state's timer, and takes part in session opening. */
  async start(): Promise<void> {
    // Every notification reloads the row, the bus's "notifications may have been missed" (EVERYTHING_CHANGED) too.
    await this.options.bus.listen(CHANNEL, () => this.reloadInBackground());
    await this.reload();
    this.options.sessions.setAdmission((transaction, userid) => this.admitSession(transaction, userid));
  }

  close(): void {
    this.closed = true;
    this.disarm();
  }

  /** The state as this process knows it: no database read. */
  current(): AdminModeState {
    return this.state;
  }

  /** Throws BMXAA0578E unless admin mode is on (state 1): structural database changes need it. */
  assertStructuralChangesAllowed(): void {
    if (this.state.state !== 1) throw errors.adminModeRequired();
  }

  /**
   * A login or API-key call while admin mode is on or pending: only users with the admin-mode login right
   * (BMXAA7901E for the others). From the cached state and profile: no database read.
   */
  admitCaller(profile: UserProfile): void {
    if (this.state.state !== 0 && !profile.adminModeLogin) throw errors.notLoggedIn();
  }

  /**
   * A request in an existing session: while pending, an ordinary user's session goes on, with the warning of
   * docs/adminmode.md (answered as the header value); once on, it has ended (BMXAA0021E, the client logs in again
   * and is refused). Its row was deleted with the transition; this covers the moment before the notification.
   */
  sessionWarning(profile: UserProfile): string | undefined {
    const { state, logoutAt } = this.state;
    if (state === 0 || profile.adminModeLogin) return undefined;
    if (state === 1) throw errors.sessionNotValid();
    return `199 eas "BMXAA4030I - Starting to set Admin Mode ON. Your session ends at ${logoutAt?.toISOString() ?? 'once admin mode is on'}."`;
  }

  /** The state with the session counts, for the administrator; a pending state that is due turns on here too. */
  async status(): Promise<AdminModeStatus> {
    let row = await readState(this.db);
    this.apply(row);
    if (row.state === 2 && (await this.due(row))) {
      await this.activate(row.generation);
      row = await readState(this.db);
      this.apply(row);
    }
    const now = this.now();
    const activeSince = this.options.sessions.activeSince(now);
    const [ordinary, adminSessions] = await Promise.all([
      countLiveSessions(this.db, false, new Date(now), activeSince),
      countLiveSessions(this.db, true, new Date(now), activeSince),
    ]);
    let ordinarySessions = ordinary;
    if (row.state === 1 && ordinarySessions > 0) {
      await this.endStragglers();
      ordinarySessions = await countLiveSessions(this.db, false, new Date(now), activeSince);
    }
    return { ...toState(row), ordinarySessions, adminSessions };
  }

  /**
   * Ordinary sessions while on: opened by a login on a process that had not yet heard of the change (the change bus
   * takes a moment). Every process refuses them (`sessionWarning`) once it knows; this deletes their rows.
   */
  private async endStragglers(): Promise<void> {
    const ended = await this.db.transaction().execute(async (transaction) => {
      const current = await readState(transaction, true);
      if (current.state !== 1) return [];
      const deleted = await deleteOrdinarySessions(transaction);
      await this.options.sessions.announceEnded(transaction, deleted);
      await this.recordEnded(transaction, deleted, undefined);
      return deleted;
    });
    this.options.sessions.forgetEnded(ended);
  }

  /** The latest changes, newest first. */
  history(limit: number): Promise<LoggedChange[]> {
    return latestLogEntries(this.db, limit);
  }

  /**
   * Starts turning admin mode on (state 2), or turns it on at once when no ordinary session is live or `logoutmin`
   * is 0. While already on or pending, nothing changes: the state is answered as it is.
   */
  async turnOn(userid: string, request: TurnOnRequest, origin?: RequestOrigin): Promise<AdminModeState> {
    const defaults = this.options.defaults();
    const numsessions = request.numsessions ?? defaults.numsessions;
    const logoutmin = request.logoutmin ?? defaults.logoutmin;
    const changed = await this.db.transaction().execute(async (transaction) => {
      const current = await readState(transaction, true);
      if (current.state !== 0) return { row: current, ended: [] };
      const now = this.now();
      const ordinary = await countLiveSessions(
        transaction,
        false,
        new Date(now),
        this.options.sessions.activeSince(now),
      );
      const immediately = ordinary === 0 || logoutmin === 0;
      const ended = immediately ? await deleteOrdinarySessions(transaction) : [];
      const tostate: AdminModeValue = immediately ? 1 : 2;
      const row = await writeState(transaction, current.generation, {
        state: tostate,
        numsessions,
        logoutmin,
        changeby: userid,
        changedate: new Date(now),
        servername: this.options.serverName,
        logoutdate: immediately ? null : new Date(now + logoutmin * MINUTE),
        ondate: immediately ? new Date(now) : null,
      });
      if (!row) throw new Error('The adminmode row changed under its lock');
      await insertLogEntry(transaction, {
        action: 'ON',
        fromstate: 0,
        tostate,
        numsessions,
        logoutmin,
        changeby: userid,
        changedate: new Date(now),
        servername: this.options.serverName,
        endedsessions: ended.length,
      });
      const audited = adminModeEvent(tostate === 1 ? 'on' : 'pending', current.state, tostate, ended.length);
      await this.audit.record(transaction, {
        ...audited,
        origin,
        after: { state: tostate, numsessions, logoutmin },
      });
      await this.announce(transaction, row, ended, origin);
      return { row, ended };
    });
    this.options.sessions.forgetEnded(changed.ended);
    this.apply(changed.row);
    return this.state;
  }

  /** Turns admin mode off at once (from on or pending): logins are open again. Off already: nothing changes. */
  async turnOff(userid: string, origin?: RequestOrigin): Promise<AdminModeState> {
    const row = await this.db.transaction().execute(async (transaction) => {
      const current = await readState(transaction, true);
      if (current.state === 0) return current;
      const now = new Date(this.now());
      const off = await writeState(transaction, current.generation, {
        state: 0,
        numsessions: current.numsessions,
        logoutmin: current.logoutmin,
        changeby: userid,
        changedate: now,
        servername: this.options.serverName,
        logoutdate: null,
        ondate: null,
      });
      if (!off) throw new Error('The adminmode row changed under its lock');
      await insertLogEntry(transaction, {
        action: 'OFF',
        fromstate: current.state,
        tostate: 0,
        numsessions: current.numsessions,
        logoutmin: current.logoutmin,
        changeby: userid,
        changedate: now,
        servername: this.options.serverName,
        endedsessions: 0,
      });
      await this.audit.record(transaction, { ...adminModeEvent('off', current.state, 0, 0), origin });
      await this.announce(transaction, off, [], origin);
      return off;
    });
    this.apply(row);
    return this.state;
  }

  /**
   * Admission of a new session (inside its transaction): while on or pending, only users with the admin-mode login
   * right, and at most `numsessions` live sessions among them. The row's lock makes concurrent logins count in turn.
   */
  private async admitSession(transaction: Kysely<Database>, userid: string): Promise<void> {
    // Off as far as this process knows: no read (a change made elsewhere this instant is caught by the timed
    // transition, which ends every ordinary session).
    if (this.state.state === 0) return;
    const db = transaction;
    const row = await readState(db, true);
    if (row.state === 0) return;
    if (!(await mayLogInDuringAdminMode(db, userid))) throw errors.notLoggedIn();
    const now = this.now();
    const live = await countLiveSessions(db, true, new Date(now), this.options.sessions.activeSince(now));
    if (live >= (row.numsessions ?? DEFAULT_NUMSESSIONS)) throw errors.notLoggedIn();
  }

  /** Whether a pending state may turn on: its time has come, or no ordinary session remains. */
  private async due(row: AdminModeRow): Promise<boolean> {
    const now = this.now();
    if (row.logoutdate === null || row.logoutdate.getTime() <= now) return true;
    const ordinary = await countLiveSessions(
      this.db,
      false,
      new Date(now),
      this.options.sessions.activeSince(now),
    );
    return ordinary === 0;
  }

  /**
   * The end of the pending state of `generation`: ordinary sessions end and the state becomes 1. Any process may
   * try; the first for that generation does it, the others find the row changed and do nothing.
   */
  private async activate(generation: number): Promise<void> {
    const changed = await this.db.transaction().execute(async (transaction) => {
      const current = await readState(transaction, true);
      if (current.state !== 2 || current.generation !== generation) return undefined;
      const ended = await deleteOrdinarySessions(transaction);
      const now = new Date(this.now());
      const row = await writeState(transaction, generation, {
        state: 1,
        numsessions: current.numsessions,
        logoutmin: current.logoutmin,
        changeby: current.changeby,
        changedate: current.changedate ?? now,
        servername: current.servername ?? this.options.serverName,
        logoutdate: current.logoutdate,
        ondate: now,
      });
      if (!row) return undefined;
      await insertLogEntry(transaction, {
        action: 'ACTIVE',
        fromstate: 2,
        tostate: 1,
        numsessions: current.numsessions,
        logoutmin: current.logoutmin,
        changeby: null,
        changedate: now,
        servername: this.options.serverName,
        endedsessions: ended.length,
      });
      await this.audit.record(transaction, {
        ...adminModeEvent('on', 2, 1, ended.length),
        user: null,
        scheme: 'system',
      });
      await this.announce(transaction, row, ended);
      return { row, ended };
    });
    if (!changed) return;
    this.options.sessions.forgetEnded(changed.ended);
    this.apply(changed.row);
  }

  /** Sends the change (and the ended sessions) on the change bus, delivered when `transaction` commits. */
  private get audit(): AuditRecorder {
    return this.options.audit ?? NO_AUDIT;
  }

  private async announce(
    transaction: Kysely<Database>,
    row: AdminModeRow,
    ended: ReadonlyArray<{ sessionhash: string; tokenhash: string | null; userid: string }>,
    origin?: RequestOrigin,
  ): Promise<void> {
    await this.options.sessions.announceEnded(transaction, ended);
    await this.recordEnded(transaction, ended, origin);
    await this.options.bus.notify(transaction, CHANNEL, String(row.generation));
  }

  /** The sessions admin mode ended, one record beside the transition's (docs/audit.md). */
  private async recordEnded(
    transaction: Kysely<Database>,
    ended: ReadonlyArray<{ sessionhash: string; userid: string }>,
    origin: RequestOrigin | undefined,
  ): Promise<void> {
    if (ended.length > 0)
      await this.audit.record(transaction, { ...sessionsEndedEvent('adminmode', ended), origin });
  }

  private async reload(): Promise<void> {
    this.apply(await readState(this.db));
  }

  private reloadInBackground(): void {
    if (this.closed) return;
    this.reload().catch(this.options.onBackgroundError);
  }

  /** Takes a row read or written; an older generation than the one held (reads finishing out of order) is ignored. */
  private apply(row: AdminModeRow): void {
    if (row.generation < this.generation) return;
    const changed = row.generation !== this.generation;
    this.generation = row.generation;
    this.state = toState(row);
    if (changed) this.arm(row);
  }

  /** While pending: a timer for the deadline, and a poll that turns on as soon as no ordinary session remains. */
  private arm(row: AdminModeRow): void {
    this.disarm();
    if (this.closed || row.state !== 2) return;
    const attempt = () => {
      if (this.closed || this.generation !== row.generation || this.state.state !== 2) return;
      this.due(row)
        .then((due) => (due ? this.activate(row.generation) : undefined))
        .catch(this.options.onBackgroundError);
    };
    const wait = Math.max(0, (row.logoutdate?.getTime() ?? 0) - this.now());
    const deadline = () => {
      if (wait > MAX_TIMER_MS && this.generation === row.generation) this.arm(row);
      else attempt();
    };
    this.deadlineTimer = setTimeout(deadline, Math.min(wait, MAX_TIMER_MS));
    this.deadlineTimer.unref();
    this.pollTimer = setInterval(attempt, PENDING_POLL_MS);
    this.pollTimer.unref();
  }

  private disarm(): void {
    clearTimeout(this.deadlineTimer);
    clearInterval(this.pollTimer);
    this.deadlineTimer = undefined;
    this.pollTimer = undefined;
  }
}
