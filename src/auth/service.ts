import * as crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { EVERYTHING_CHANGED, type ChangeBus } from '../db/change-bus.js';
import type { Database } from '../db/schema.js';
import { errors } from '../errors.js';
import { ADMIN_GROUP } from './bootstrap.js';
import { UNUSABLE_HASH, verifyPassword } from './password.js';
import { findCredentials, loadProfileRows, mayLogIn } from './repository.js';
import type { ObjectStructureRights, UserProfile } from './types.js';
import { CacheStatistics } from '../util/cache-statistics.js';
import type { MaybePromise } from '../util/maybe-promise.js';

/** SHA-256 (base64) by the one-shot `crypto.hash` where Node has it (20.12+): half the cost of a Hash object. */
const sha256: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'base64')
    : (text) => crypto.createHash('sha256').update(text).digest('base64');

/** Objects whose writes change who may log in or what they may do. */
export const SECURITY_OBJECTS: ReadonlySet<string> = new Set([
  'MAXUSER',
  'PERSON',
  'MAXGROUP',
  'GROUPUSER',
  'OSAUTH',
  'SITE',
]);

/** How long a verified password is trusted without hashing it again (a change drops it at once anyway). */
const CREDENTIAL_TTL_MS = 5 * 60 * 1000;
const MAX_CACHED_CREDENTIALS = 10_000;

/**
 * Verifies passwords and serves user profiles. Hashing a password costs tens of milliseconds and a profile takes
 * three queries, so both are cached in memory and dropped when any process writes a user, group or right (the
 * `object` notification of the write path).
 */
export class AuthService {
  private readonly verified = new Map<string, { userid: string; expires: number }>();
  /** A profile being loaded, then the loaded profile itself (null: no such user), so that a hit makes no promise. */
  /** Profiles served from memory (hits) and loaded from the database (misses). */
  readonly cacheStatistics = new CacheStatistics();
  private readonly profiles = new Map<string, Promise<UserProfile | undefined> | UserProfile | null>();

  constructor(
    private readonly db: Kysely<Database>,
    /** Checks a password against a stored hash; replaceable so tests can observe that every refusal hashes. */
    private readonly checkPassword: (password: string, stored: string) => Promise<boolean> = verifyPassword,
  ) {}

  async listen(bus: ChangeBus): Promise<void> {
    await bus.listen('object', (objectName) => {
      if (objectName === EVERYTHING_CHANGED || SECURITY_OBJECTS.has(objectName)) this.invalidate();
    });
  }

  invalidate(): void {
    this.verified.clear();
    this.profiles.clear();
  }

  /** The user id for a login and password; the same refusal, after the same work, whatever was wrong. */
  async verifyPassword(login: string, password: string): Promise<string> {
    const cacheKey = sha256(`${login.toUpperCase()}\u0000${password}`);
    const cached = this.verified.get(cacheKey);
    if (cached && cached.expires > Date.now()) return cached.userid;
    const user = await findCredentials(this.db, login);
    const matches = await this.checkPassword(password, user?.password ?? UNUSABLE_HASH);
    if (!user || !matches || !mayLogIn(user, Date.now())) throw errors.notLoggedIn();
    if (this.verified.size >= MAX_CACHED_CREDENTIALS) this.verified.clear();
    this.verified.set(cacheKey, { userid: user.userid, expires: Date.now() + CREDENTIAL_TTL_MS });
    return user.userid;
  }

  profile(userid: string): MaybePromise<UserProfile | undefined> {
    const known = this.profiles.get(userid);
    if (known !== undefined) {
      this.cacheStatistics.hits += 1;
      return known ?? undefined;
    }
    this.cacheStatistics.misses += 1;
    const loading = this.loadProfile(userid);
    this.profiles.set(userid, loading);
    // Unless a change dropped the load meanwhile: then the next request loads the profile again.
    const stillWanted = () => this.profiles.get(userid) === loading;
    loading.then(
      (profile) => {
        if (stillWanted()) this.profiles.set(userid, profile ?? null);
      },
      () => {
        if (stillWanted()) this.profiles.delete(userid);
      },
    );
    return loading;
  }

  private async loadProfile(userid: string): Promise<UserProfile | undefined> {
    const rows = await loadProfileRows(this.db, userid);
    if (!rows) return undefined;
    const rights = new Map<string, ObjectStructureRights>();
    for (const row of rows.rights) {
      const name = row.objectstructure.toUpperCase();
      const current = rights.get(name) ?? { read: false, insert: false, update: false, delete: false };
      rights.set(name, {
        read: current.read || row.read,
        insert: current.insert || row.insert,
        update: current.update || row.update,
        delete: current.delete || row.delete,
      });
    }
    return {
      userid: rows.user.userid,
      personid: rows.user.personid,
      displayname: rows.user.displayname,
      status: rows.user.status,
      defaultSite: rows.user.defsite,
      defaultOrg: rows.user.orgid,
      groups: rows.groups,
      isAdmin: rows.groups.includes(ADMIN_GROUP),
      adminModeLogin: rows.adminModeLogin,
      rights,
    };
  }
}
