import type { Insertable, Kysely } from 'kysely';
import type { AuthMode } from '../config.js';
import { EVERYTHING_CHANGED, type ChangeBus, type Confirmation } from '../db/change-bus.js';
import { isDatabaseUnavailable } from '../db/faults.js';
import type { Database } from '../db/schema.js';
import { errors, isMaximoError } from '../errors.js';
import type { ObservedWrites, WriteObserver } from '../oslc/write-extensions.js';
import type { LdapDirectory } from './ldap.js';
import { findCredentials, mayLogIn } from './repository.js';
import type { AuthService } from './service.js';
import type { CallerAdmission } from './types.js';
import {
  activeAddressBlocks,
  blockAddress,
  countAddressFailure,
  countUserFailure,
  insertLoginTrackingRows,
  resetUserFailures,
} from './session-repository.js';
import type { LoginResult, LoginTrackingTable } from './session-tables.js';
import { typedView } from '../db/schema.js';
import { andThen, type MaybePromise } from '../util/maybe-promise.js';
import { lockoutEvent, loginEvent } from '../audit/events.js';
import type { AuditRecorder, RequestOrigin } from '../audit/types.js';

/** How the credentials came: header `maxauth`, header `Authorization: Basic`, or the login form. */
export type LoginScheme = 'MAXAUTH' | 'BASIC' | 'FORM';
/** Sign-ins through an identity provider (src/auth/federated): audited like logins, no password involved. */
export type SignInScheme = LoginScheme | 'OIDC' | 'SAML';

export interface LoginAttempt {
  login: string;
  password: string;
  scheme: SignInScheme;
  /** Client address (the socket's: proxies' headers are not trusted). */
  address: string;
  /** The request that tries, for the audit records of a refusal (src/audit/README.md, "Request context"). */
  origin?: RequestOrigin | undefined;
}

/** `mxe.sec.IPblock`, `mxe.sec.IPblock.num`, `mxe.sec.IPblock.sec`: read at every attempt, so changes apply at once. */
export interface AddressBlockPolicy {
  enabled: boolean;
  /** Failed logins within the window that block the address. */
  failures: number;
  /** Length of the window, and of the block. */
  seconds: number;
}

/** The deployed systems' defaults (docs/compatibility.md, "The contract in brief"). */
export const DEFAULT_ADDRESS_BLOCK: AddressBlockPolicy = { enabled: true, failures: 50, seconds: 30 };

export interface LoginServiceOptions {
  db: Kysely<Database>;
  bus: ChangeBus;
  auth: AuthService;
  mode: AuthMode;
  /** The directory of the `appserver` mode. */
  directory: LdapDirectory | undefined;
  /** Failed logins after which a user is blocked (0 = never). */
  maxFailedLogins: number;
  /** Minutes a user stays blocked after `maxFailedLogins` failures; 0: until an administrator unblocks it. */
  lockoutMinutes: number;
  addressBlock: () => AddressBlockPolicy;
  /**
   * Logs what fails besides the caller's credentials: the verifier itself (directory or database down: the attempt
   * is refused without counting), or a batch of audit rows.
   */
  logError: (error: unknown, what: string) => void;
  /** Where each tracked attempt is also recorded, in the same transaction (docs/audit.md); default: nowhere. */
  audit?: AuditRecorder;
  now?: () => number;
}

const BLOCK_CHANNEL = 'loginblock';
const MAX_LOGIN_LENGTH = 100;
/** Successful logins are written in batches at most this long after they happened (see `flush`). */
const FLUSH_DELAY_MS = 200;
const MAX_PENDING = 500;
/**
 * How long a verified credential header is trusted without verifying it again (docs/compatibility.md, "Sessions"):
 * against the database, until any user, group or right changes (which drops it on every process at once), at most
 * 5 minutes; against a directory, whose changes this service never hears of, 60 seconds.
 */
export const NATIVE_CREDENTIAL_TRUST_MS = 5 * 60_000;
export const DIRECTORY_CREDENTIAL_TRUST_MS = 60_000;

/** `base64(user:password)`, as in `maxauth` and BASIC; a value without a colon is a login name with no password. */
export function decodeCredentials(encoded: string): { login: string; password: string } {
  const decoded = Buffer.from(encoded.trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0
    ? { login: decoded, password: '' }
    : { login: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Every login with a password, whatever the scheme: the security mode decides who verifies it (the database or the
 * directory), failures are counted per user and per client address (brute force), and every attempt is written to
 * the login audit. Every refusal is the same BMXAA7901E, after the same work, whatever the reason.
 */
export class LoginService {
  /** Blocked client addresses and when their block ends, as every process learns them through the change bus. */
  private readonly blocked = new Map<string, number>();
  private readonly db: Kysely<Database>;
  private readonly now: () => number;
  private pending: Array<Insertable<LoginTrackingTable>> = [];
  /** The pending success row of each client, which its next successes count into. */
  private pendingByClient = new Map<string, Insertable<LoginTrackingTable>>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private admission: CallerAdmission | undefined;

  constructor(private readonly options: LoginServiceOptions) {
    this.db = options.db;
    this.now = options.now ?? Date.now;
  }

  async listen(): Promise<void> {
    await this.options.bus.listen(BLOCK_CHANNEL, (payload) => {
      // Blocks may have been missed while the listener was away (docs/operations.md): read them again.
      if (payload === EVERYTHING_CHANGED) void this.reloadBlocks();
      const space = payload.indexOf(' ');
      const until = Number(payload.slice(0, space));
      if (space > 0 && Number.isFinite(until)) this.noteBlock(payload.slice(space + 1), until);
    });
    for (const block of await activeAddressBlocks(this.db, new Date(this.now()))) {
      this.noteBlock(block.clientaddr, block.blockeduntil.getTime());
    }
  }

  private async reloadBlocks(): Promise<void> {
    try {
      for (const block of await activeAddressBlocks(this.db, new Date(this.now()))) {
        this.noteBlock(block.clientaddr, block.blockeduntil.getTime());
      }
    } catch (error) {
      this.options.logError(error, 'reloading address blocks failed');
    }
  }

  /**
   * The user id a credential header (`maxauth`, `Authorization: Basic`: `base64(user:password)`) stands for; a
   * per-request credential, verified once and then found by its keyed digest (`AuthService.credentials`) with no
   * promise and no database. A miss, a blocked address or a scheme not offered takes `login`'s full path, where
   * refusals are counted and audited; only successes are remembered.
   */
  loginWithHeader(
    encoded: string,
    scheme: 'MAXAUTH' | 'BASIC',
    address: string,
    origin?: RequestOrigin,
  ): MaybePromise<string> {
    const verified = this.options.auth.credentials;
    const digest = verified.digest(encoded);
    const now = this.now();
    const known = verified.find(digest, now);
    if (known !== undefined && this.offers(scheme) && !this.blockedNow(address)) {
      const attempt: LoginAttempt = { login: known, password: '', scheme, address, origin };
      return andThen(this.admitted(attempt, known), () => {
        this.recordSuccess(attempt, known);
        return known;
      });
    }
    const version = verified.version;
    return this.login({ ...decodeCredentials(encoded), scheme, address, origin }).then((userid) => {
      const trust = this.options.directory ? DIRECTORY_CREDENTIAL_TRUST_MS : NATIVE_CREDENTIAL_TRUST_MS;
      verified.remember(digest, userid, version, this.now() + trust);
      return userid;
    });
  }

  /**
   * Admin mode (docs/adminmode.md): the right password of a user who may not log in now is audited as refused. From
   * the cached profile: on the fast path, no promise.
   */
  private admitted(attempt: LoginAttempt, userid: string): MaybePromise<void> {
    const admission = this.admission;
    if (!admission) return;
    return andThen(this.options.auth.profile(userid), (profile) => {
      if (!profile) return;
      try {
        admission.admitCaller(profile);
      } catch (error) {
        return this.track(attempt, userid, 'REFUSED').then(() => {
          throw error;
        });
      }
    });
  }

  private blockedNow(address: string): boolean {
    return this.blocked.size > 0 && this.options.addressBlock().enabled && this.isBlocked(address);
  }

  /** The user id the credentials log in as; BMXAA7901E (or the scheme's refusal) otherwise. */
  async login(attempt: LoginAttempt): Promise<string> {
    if (!this.offers(attempt.scheme)) {
      await this.track(attempt, null, 'REFUSED');
      throw errors.loginSchemeNotAvailable(attempt.scheme);
    }
    const policy = this.options.addressBlock();
    if (policy.enabled && this.isBlocked(attempt.address)) {
      await this.track(attempt, null, 'BLOCKED');
      throw errors.notLoggedIn();
    }
    let userid: string | undefined;
    try {
      userid = await this.verify(attempt.login, attempt.password);
    } catch (error) {
      // The database away is no failed login: 503, and nothing counted against the user (docs/operations.md).
      // With a directory the same network errors may be the directory's, which stays a refused login.
      if (!this.options.directory && isDatabaseUnavailable(error)) throw error;
      if (!isMaximoError(error)) {
        this.options.logError(error, 'password verification failed');
        await this.track(attempt, null, 'FAILED');
        throw errors.notLoggedIn();
      }
    }
    if (userid === undefined) {
      await this.recordFailure(attempt, policy);
      throw errors.notLoggedIn();
    }
    await this.admitted(attempt, userid);
    this.recordSuccess(attempt, userid);
    return userid;
  }

  /** Sets who may log in while the deployment is in admin mode (one; admin mode's). */
  setAdmission(admission: CallerAdmission): void {
    this.admission = admission;
  }

  /**
   * Writes the successful logins not written yet: their audit rows, and the reset of their users' failure counts.
   * Successes are batched off the request path, since clients that send credentials on every call log in on every
   * call; a failure flushes them first, so that counting stays in order.
   */
  flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const rows = this.pending;
    this.pending = [];
    this.pendingByClient = new Map();
    const previous = this.flushing;
    this.flushing = (async () => {
      await previous;
      if (rows.length === 0) return;
      const succeeded = rows.filter((row) => row.attemptresult === 'SUCCESS' && row.userid);
      const userids = [...new Set(succeeded.map((row) => row.userid!))];
      try {
        await this.db.transaction().execute(async (transaction) => {
          await insertLoginTrackingRows(transaction, rows);
          await resetUserFailures(transaction, userids);
          for (const row of rows) await this.options.audit?.record(transaction, loginEvent(row));
        });
      } catch (error) {
        this.options.logError(error, 'writing the login audit failed');
      }
    })();
    return this.flushing;
  }

  /** Counts the success into its client's pending row, or queues a new row for it. */
  private recordSuccess(attempt: LoginAttempt, userid: string): void {
    const client = `${userid} ${attempt.scheme} ${attempt.address} ${attempt.login}`;
    const counting = this.pendingByClient.get(client);
    if (counting) {
      counting.attempts = Number(counting.attempts ?? 1) + 1;
      return;
    }
    const row = this.trackingRow(attempt, userid, 'SUCCESS');
    this.pendingByClient.set(client, row);
    this.queue(row);
  }

  private queue(row: Insertable<LoginTrackingTable>): void {
    if (row.attemptresult !== 'SUCCESS') {
      // Later successes of this user get a row of their own, after this one.
      for (const [client, pending] of this.pendingByClient) {
        if (pending.userid === row.userid) this.pendingByClient.delete(client);
      }
    }
    this.pending.push(row);
    if (this.pending.length >= MAX_PENDING) void this.flush();
    else if (!this.flushTimer) this.flushTimer = setTimeout(() => void this.flush(), FLUSH_DELAY_MS).unref();
  }

  /** Audits a sign-in the identity provider vouched for (`login`: the name it gave), batched like logins. */
  recordSignIn(userid: string, scheme: 'OIDC' | 'SAML', address: string, login: string): void {
    this.recordSuccess({ login, password: '', scheme, address }, userid);
  }

  /**
   * Audits a sign-in the provider's answer did not complete (refused, not valid, a user the service does not know):
   * a failure, not counted against any user (the name is the provider's, when it got that far). A failure to
   * write it is logged: the caller's refusal stands either way.
   */
  async recordSignInFailure(
    scheme: 'OIDC' | 'SAML',
    address: string,
    login: string | undefined,
    origin?: RequestOrigin,
  ): Promise<void> {
    await this.track({ login: login ?? '', password: '', scheme, address, origin }, null, 'FAILED').catch(
      (error: unknown) => this.options.logError(error, 'writing the login audit failed'),
    );
  }

  /** Audits a logout, in order with the logins (batched like them). */
  recordLogout(userid: string, scheme: string, address: string): void {
    this.queue({
      loginid: userid,
      userid,
      clientaddr: address.slice(0, 64),
      scheme: scheme.slice(0, 16),
      attemptresult: 'LOGOUT',
      attemptdate: new Date(this.now()),
    });
  }

  /** Whether a client address is blocked now (every process: blocks travel on the change bus). */
  isBlocked(address: string): boolean {
    const until = this.blocked.get(address);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.blocked.delete(address);
    return false;
  }

  /**
   * Reactivating a user (status back to ACTIVE, by an administrator through the write path) clears its failed-login
   * count, in the same transaction, so that the next failure does not block it again at once.
   */
  readonly reactivationObserver: WriteObserver = async (transaction, write) => {
    if (!this.reactivationWrites(write.object, write.operation)) return;
    if (write.after?.status !== 'ACTIVE' || write.before?.status === 'ACTIVE') return;
    const userid = write.after.userid;
    if (typeof userid === 'string') await resetUserFailures(typedView(transaction), [userid]);
  };

  /** The writes a reactivation can be: updates of users. */
  readonly reactivationWrites: ObservedWrites = (object, operation) =>
    object.name === 'MAXUSER' && operation === 'update';

  /**
   * Native, BASIC and FORM logins by mode: a managed or federated deployment takes none (its users sign in at the
   * identity provider, docs/federated-login.md), an LDAP one no native `maxauth`.
   */
  private offers(scheme: SignInScheme): boolean {
    const mode = this.options.mode;
    if (mode === 'managed' || mode === 'oidc' || mode === 'saml') return false;
    return !(this.options.mode === 'appserver' && scheme === 'MAXAUTH');
  }

  /** The user id, or undefined when the credentials are refused; throws when the directory cannot be asked. */
  private async verify(login: string, password: string): Promise<string | undefined> {
    if (this.options.mode === 'native') {
      try {
        return await this.options.auth.verifyPassword(login, password);
      } catch (error) {
        if (isMaximoError(error)) return undefined;
        throw error;
      }
    }
    const uid = await this.options.directory!.authenticate(login, password);
    if (uid === undefined) return undefined;
    const user = await findCredentials(this.options.db, uid);
    return user && mayLogIn(user, this.now()) ? user.userid : undefined;
  }

  private async recordFailure(attempt: LoginAttempt, policy: AddressBlockPolicy): Promise<void> {
    await this.flush();
    const now = this.now();
    const max = this.options.maxFailedLogins;
    let userBlocked = false;
    let addressBlockedUntil: number | undefined;
    let confirmation: Confirmation | undefined;
    try {
      await this.db.transaction().execute(async (transaction) => {
        // Temporary by default: a permanent block lets anyone who knows a user id lock the user out, the only
        // administrator included (docs/security.md).
        const minutes = this.options.lockoutMinutes;
        const blockUntil = minutes > 0 ? new Date(now + minutes * 60_000) : null;
        const user = await countUserFailure(
          transaction,
          attempt.login.slice(0, MAX_LOGIN_LENGTH),
          max,
          new Date(now),
          blockUntil,
        );
        userBlocked =
          user !== undefined &&
          (blockUntil === null
            ? user.status === 'BLOCKED' && user.failedlogins === max
            : user.blockeduntil?.getTime() === blockUntil.getTime());
        // The user's cached profile and verified passwords must go on every process (the write path's channel).
        if (userBlocked) await this.options.bus.notify<Database>(transaction, 'object', 'MAXUSER');
        if (policy.enabled) {
          const windowStart = new Date(now - policy.seconds * 1000);
          const counted = await countAddressFailure(transaction, attempt.address, new Date(now), windowStart);
          const alreadyBlocked = counted.blockeduntil !== null && counted.blockeduntil.getTime() > now;
          if (counted.failures >= policy.failures && !alreadyBlocked) {
            addressBlockedUntil = now + policy.seconds * 1000;
            await blockAddress(transaction, attempt.address, new Date(addressBlockedUntil));
            const payload = `${addressBlockedUntil} ${attempt.address}`;
            await this.options.bus.notify<Database>(transaction, BLOCK_CHANNEL, payload);
            confirmation = await this.options.bus.confirm<Database>(transaction);
          }
        }
        await this.trackIn(transaction, attempt, user?.userid ?? null, 'FAILED');
        if (userBlocked)
          await this.options.audit?.record(transaction, {
            ...lockoutEvent(attempt.login, attempt.address),
            origin: attempt.origin,
          });
      });
    } catch (error) {
      confirmation?.cancel();
      throw error;
    }
    if (userBlocked) this.options.bus.deliverLocally('object', 'MAXUSER');
    if (addressBlockedUntil !== undefined) {
      this.noteBlock(attempt.address, addressBlockedUntil);
      // The next attempt from that address is refused by every process, whichever it reaches.
      await confirmation?.heard;
    }
  }

  private noteBlock(address: string, until: number): void {
    if (until > (this.blocked.get(address) ?? 0)) this.blocked.set(address, until);
  }

  /** A refusal's audit row, written now, after the queued ones (so that the table keeps the order of events). */
  private async track(attempt: LoginAttempt, userid: string | null, result: LoginResult): Promise<void> {
    await this.flush();
    await this.db.transaction().execute((transaction) => this.trackIn(transaction, attempt, userid, result));
  }

  private async trackIn(
    db: Kysely<Database>,
    attempt: LoginAttempt,
    userid: string | null,
    result: LoginResult,
  ): Promise<void> {
    const row = this.trackingRow(attempt, userid, result);
    await insertLoginTrackingRows(db, [row]);
    await this.options.audit?.record(db, { ...loginEvent(row), origin: attempt.origin });
  }

  /** One audit row; the password is never part of it. */
  private trackingRow(
    attempt: LoginAttempt,
    userid: string | null,
    result: LoginResult,
  ): Insertable<LoginTrackingTable> {
    return {
      loginid: attempt.login.toUpperCase().slice(0, MAX_LOGIN_LENGTH),
      userid,
      clientaddr: attempt.address.slice(0, 64),
      scheme: attempt.scheme,
      attemptresult: result,
      attemptdate: new Date(this.now()),
    };
  }
}
