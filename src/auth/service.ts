import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { EVERYTHING_CHANGED, type ChangeBus } from '../db/change-bus.js';
import type { Database } from '../db/schema.js';
import { errors } from '../errors.js';
import { ADMIN_GROUP } from './bootstrap.js';
import { UNUSABLE_HASH, verifyPassword } from './password.js';
import { findCredentials, loadProfileRows, mayLogIn } from './repository.js';
import type { ObjectStructureRights, UserProfile } from './types.js';
import { VerifiedCredentials } from './verified-credentials.js';
import { CacheStatistics } from '../util/cache-statistics.js';
import type { MaybePromise } from '../util/maybe-promise.js';

/** Objects whose writes change who may log in or what they may do. */
export const SECURITY_OBJECTS: ReadonlySet<string> = new Set([
  'MAXUSER',
  'PERSON',
  'MAXGROUP',
  'GROUPUSER',
  'OSAUTH',
  'SITE',
]);

/**
 * A digest of the stored password hash (salted, so it changes with every password set): what sealed session cookies
 * compare to refuse one issued before a password change. Sixteen characters of SHA-256 tell changes apart and, inside
 * the sealed cookie, reveal nothing.
 */
export function credentialStamp(passwordHash: string | null): string {
  return createHash('sha256')
    .update(passwordHash ?? '')
    .digest('base64url')
    .slice(0, 16);
}

/**
 * Verifies passwords and serves user profiles. Hashing a password costs tens of milliseconds and a profile takes
 * three queries, so verified credential headers (`credentials`) and profiles are cached in memory and dropped when
 * any process writes a user, group or right (the `object` notification of the write path).
 */
export class AuthService {
  /** Credential headers verified lately (LoginService reads and fills it; dropped with the profiles). */
  readonly credentials = new VerifiedCredentials();
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
    this.credentials.dropAll();
    this.profiles.clear();
  }

  /** The user id for a login and password; the same refusal, after the same work, whatever was wrong. */
  async verifyPassword(login: string, password: string): Promise<string> {
    const user = await findCredentials(this.db, login);
    const matches = await this.checkPassword(password, user?.password ?? UNUSABLE_HASH);
    if (!user || !matches || !mayLogIn(user, Date.now())) throw errors.notLoggedIn();
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
      loginid: rows.user.loginid,
      status: rows.user.status,
      defaultSite: rows.user.defsite,
      defaultOrg: rows.user.orgid,
      groups: rows.groups,
      isAdmin: rows.groups.includes(ADMIN_GROUP),
      adminModeLogin: rows.adminModeLogin,
      rights,
      credentialStamp: credentialStamp(rows.user.password),
    };
  }
}
