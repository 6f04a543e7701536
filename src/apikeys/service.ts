import { CacheStatistics } from '../util/cache-statistics.js';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { UserProfile } from '../auth/types.js';
import { EVERYTHING_CHANGED, type Confirmation } from '../db/change-bus.js';
import type { Storage } from '../db/database.js';
import { errors, MaximoError } from '../errors.js';
import { NO_AUDIT, type AuditEvent, type AuditRecorder, type RequestOrigin } from '../audit/types.js';
import type { MaybePromise } from '../util/maybe-promise.js';
import type { WriteRuleContext, WriteRules } from '../oslc/write-extensions.js';
import type { StoredValue } from '../oslc/values.js';
import {
  deleteKey,
  findByDigest,
  findOwnKey,
  findPlainKeys,
  hasKey,
  markExposed,
  sealPlainKey,
  upsertKey,
} from './repository.js';
import { checkMasterKey } from './master-key.js';
import { KeyVault, loadMasterKey } from './vault.js';
import { typedView, type Database } from '../db/schema.js';

/** Bus channel of key changes made outside the object-structure write path (create, regenerate, revoke). */
export const APIKEY_CHANNEL = 'apikey';
export const APIKEY_OBJECT = 'APIKEYTOKEN';

/** Properties that control keys (docs/apikeys.md, "Properties"), read live on every decision. */
export const SYSTEM_USERS_PROPERTY = 'mxe.apikeysysusers';
export const ONLY_FOR_SELF_PROPERTY = 'mxe.apikeyforloggedinuser';
export const EXTERNAL_KEYS_PROPERTY = 'mxe.allowexternalapikey';

/** Bounds of an externally generated key value (a generated one is 48 hexadecimal digits, 192 random bits). */
export const EXTERNAL_KEY_MIN_LENGTH = 32;
export const EXTERNAL_KEY_MAX_LENGTH = 128;
const EXTERNAL_KEY_ALPHABET = /^[A-Za-z0-9._~-]+$/;
const EXTERNAL_KEY_MIN_DISTINCT = 12;

/** Refusals by the key properties (mxe.apikeysysusers, mxe.apikeyforloggedinuser, mxe.allowexternalapikey). */
const PROPERTY_REFUSALS: ReadonlySet<string> = new Set(['EAS0070E', 'EAS0071E', 'EAS0072E']);

const MAX_CACHED_KEYS = 100_000;
const MS_PER_MINUTE = 60_000;

/** The system properties the key rules read: the property service's synchronous lookups. */
export interface KeyProperties {
  get(name: string): string | undefined;
  getFlag(name: string): boolean | undefined;
}

export interface ApiKeyServiceOptions {
  storage: Storage;
  properties: KeyProperties;
  /** EAS_MASTER_KEY; undefined: the key file of `dataDir`. */
  masterKey: string | undefined;
  dataDir: string;
  /** Where key changes and refusals are recorded (docs/audit.md); default: nowhere. */
  audit?: AuditRecorder;
}

/** A verified key, as held in memory: enough to answer the next request without the database. */
interface CachedKey {
  userid: string;
  /** Epoch milliseconds; null: never expires. */
  expiresAt: number | null;
  exposedInUrl: boolean;
}

export interface KeyRequest {
  /** Minutes until the key expires, -1 for never. */
  expiration: number;
  /** A key value generated outside the service (allowed unless mxe.allowexternalapikey is 0). */
  apikey?: string | undefined;
}

/**
 * API keys: creation, regeneration, revocation, and the verification of every request that presents one.
 *
 * Verification runs on every key-bearing request, so it never decrypts and never scans: the presented value's
 * HMAC digest finds its row by a unique index, and the result is held in memory by digest. Every change of a key
 * (regenerate, revoke, an administrator's write or delete through MXAPIAPIKEY) sends a bus notification in its
 * transaction, and every process drops its cache when it arrives; expiry is checked on every use.
 */
/** A user's own key, described without its value. */
export interface OwnKey {
  createdAt: Date;
  /** null: never expires. */
  expiresAt: Date | null;
}

export class ApiKeyService {
  private readonly db: Kysely<Database>;
  private vault: KeyVault | undefined;
  private readonly cache = new Map<string, CachedKey>();
  /** Keys verified from memory (hits) and from the database (misses). */
  readonly cacheStatistics = new CacheStatistics();
  /** Bumped on every invalidation: a lookup that started before one must not put its result in the cache. */
  private generation = 0;

  constructor(private readonly options: ApiKeyServiceOptions) {
    this.db = options.storage.db;
  }

  /** Loads the master key, seals keys left in plain text by an older release, and follows key changes. */
  async start(): Promise<void> {
    const master = await loadMasterKey(this.options.masterKey, this.options.dataDir);
    await checkMasterKey(this.options.storage, master, {
      configured: this.options.masterKey !== undefined,
      dataDir: this.options.dataDir,
    });
    this.vault = new KeyVault(master);
    const bus = this.options.storage.bus;
    await bus.listen(APIKEY_CHANNEL, () => this.invalidate());
    await bus.listen('object', (objectName) => {
      if (objectName === APIKEY_OBJECT || objectName === EVERYTHING_CHANGED) this.invalidate();
    });
    await this.sealPlainKeys();
  }

  /** Drops every cached verification (a key changed somewhere; keys change rarely, so no finer bookkeeping). */
  invalidate(): void {
    this.generation += 1;
    this.cache.clear();
  }

  /**
   * The owner of a presented key; BMXAA9549E for an unknown, revoked or expired one. At once for a key this process
   * has verified before (nearly every request), later when its row must be read or its exposure recorded. `origin`:
   * the request presenting it, for the records of a refusal or an exposure (read only when one is made).
   */
  verify(apikey: string, sentInUrl: boolean, origin?: RequestOrigin): MaybePromise<string> {
    const digest = this.keys().digest(apikey);
    const cached = this.cache.get(digest);
    if (cached) this.cacheStatistics.hits += 1;
    else this.cacheStatistics.misses += 1;
    return cached
      ? this.admit(digest, cached, sentInUrl, origin)
      : this.load(digest, origin).then((entry) => this.admit(digest, entry, sentInUrl, origin));
  }

  private async load(digest: string, origin: RequestOrigin | undefined): Promise<CachedKey> {
    const generation = this.generation;
    const row = await findByDigest(this.db, digest);
    if (!row) return this.notValid(null, 'unknown', origin);
    const entry: CachedKey = {
      userid: row.userid,
      expiresAt: row.expiration < 0 ? null : row.creationdate.getTime() + row.expiration * MS_PER_MINUTE,
      exposedInUrl: row.exposedinurl,
    };
    if (generation === this.generation) {
      if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
      this.cache.set(digest, entry);
    }
    return entry;
  }

  private admit(
    digest: string,
    entry: CachedKey,
    sentInUrl: boolean,
    origin: RequestOrigin | undefined,
  ): MaybePromise<string> {
    if (entry.expiresAt !== null && entry.expiresAt <= Date.now()) {
      this.cache.delete(digest);
      return this.notValid(entry.userid, 'expired', origin);
    }
    if (sentInUrl && !entry.exposedInUrl) {
      entry.exposedInUrl = true;
      return this.db
        .transaction()
        .execute(async (transaction) => {
          if (await markExposed(transaction, digest, new Date()))
            await this.audit.record(transaction, keyEvent('apikey.exposed', entry.userid, origin));
        })
        .then(() => entry.userid);
    }
    return entry.userid;
  }

  /** `/apitoken/create`: the caller's key, created or regenerated (the old value stops working at once). */
  async createOwn(user: UserProfile, request: KeyRequest, origin?: RequestOrigin): Promise<string> {
    checkExpiration(request.expiration);
    const apikey = this.refusalRecorded(user.userid, origin, () => this.keyValue(request.apikey));
    const vault = this.keys();
    await this.changeKeys(async (db) => {
      const type = (await hasKey(db, user.userid)) ? 'apikey.regenerate' : 'apikey.create';
      // The audit record rides on the key's statement (src/audit/README.md, "Recording").
      await upsertKey(
        db,
        {
          userid: user.userid,
          sealed: vault.seal(apikey),
          digest: vault.digest(apikey),
          expiration: request.expiration,
          creationdate: new Date(),
        },
        this.audit.recordOf(keyEvent(type, user.userid, origin, { expiration: request.expiration })),
      );
    });
    return apikey;
  }

  /** The caller's key as the sign-in page shows it: since when and until when, never its value. */
  async describeOwn(userid: string): Promise<OwnKey | undefined> {
    const row = await findOwnKey(this.db, userid);
    if (!row) return undefined;
    const expiresAt =
      row.expiration < 0 ? null : new Date(row.creationdate.getTime() + row.expiration * MS_PER_MINUTE);
    return { createdAt: row.creationdate, expiresAt };
  }

  /** A key derived from the master key for another use (see KeyVault.derive). */
  derivedKey(purpose: string): Buffer {
    return this.keys().derive(purpose);
  }

  /** `/apitoken/revoke`: deletes the caller's key; false when there was none. */
  async revokeOwn(user: UserProfile, origin?: RequestOrigin): Promise<boolean> {
    return this.changeKeys(async (db) => {
      const revoked = await deleteKey(db, user.userid);
      if (revoked) await this.audit.record(db, keyEvent('apikey.revoke', user.userid, origin));
      return revoked;
    });
  }

  /** How the audit trail names a presented key: the start of its digest (apikeytoken.apikeydigest), never its value. */
  keyFingerprint(apikey: string): string {
    return this.keys().digest(apikey).slice(0, 16);
  }

  /**
   * A presented key refused (unknown, revoked or expired): BMXAA9549E, and a failed login in the audit trail, named by
   * the key's fingerprint (docs/audit.md). A key that works is no login record; one that fails is, like a password.
   */
  private async notValid(
    userid: string | null,
    reason: 'unknown' | 'expired',
    origin: RequestOrigin | undefined,
  ): Promise<never> {
    await this.audit
      .recordAlone({
        type: 'login.failure',
        origin,
        outcome: 'FAILURE',
        user: userid,
        scheme: 'APIKEY',
        object: 'APIKEYTOKEN',
        ...(userid !== null && { key: userid }),
        detail: { reason },
      })
      .catch(() => undefined);
    throw errors.apiKeyNotValid();
  }

  private get audit(): AuditRecorder {
    return this.options.audit ?? NO_AUDIT;
  }

  /**
   * Runs a decision of the key properties; a refusal is recorded (docs/audit.md) in a transaction of its own, not
   * awaited: it may be taken inside the writer's transaction, which rolls back and, on PGlite, holds the connection.
   */
  private refusalRecorded<T>(userid: string, origin: RequestOrigin | undefined, decide: () => T): T {
    try {
      return decide();
    } catch (error) {
      if (error instanceof MaximoError && PROPERTY_REFUSALS.has(error.reasonCode)) {
        this.audit
          .recordAlone({
            ...keyEvent('apikey.refused', userid, origin),
            outcome: 'REFUSED',
            detail: { reasonCode: error.reasonCode },
          })
          .catch(() => undefined);
      }
      throw error;
    }
  }

  /**
   * Write rules of APIKEYTOKEN (MXAPIAPIKEY): administrators create keys for users within the key properties,
   * and the value is generated (or checked) and sealed here; nothing but the expiration changes afterwards.
   */
  readonly writeRules: WriteRules = {
    beforeInsert: (context) => this.beforeInsert(context),
    beforeUpdate: async ({ values, object }) => {
      if ('apikey' in values) throw errors.readOnlyAttribute('API Key', 'apikey', object.name.toLowerCase());
      if ('expiration' in values) checkExpiration(values.expiration);
    },
  };

  /** Administrators read key values in clear (docs/apikeys.md, "MXAPIAPIKEY"); anyone else reads none. */
  readonly readTransform = (stored: StoredValue, reader: UserProfile | null): StoredValue => {
    if (typeof stored !== 'string' || !reader?.isAdmin) return null;
    return this.keys().open(stored) ?? null;
  };

  private async beforeInsert({ db, values, user, origin }: WriteRuleContext): Promise<void> {
    checkExpiration(values.expiration);
    const userid = String(values.userid);
    this.refusalRecorded(userid, origin, () => {
      if (this.options.properties.getFlag(ONLY_FOR_SELF_PROPERTY) === true && userid !== user.userid) {
        throw errors.apiKeyOnlyForSelf(userid);
      }
      if (systemUsers(this.options.properties.get(SYSTEM_USERS_PROPERTY)).has(userid)) {
        throw errors.apiKeySystemUser(userid);
      }
    });
    // Inside the writer's transaction (on PGlite it holds the only connection).
    if (await hasKey(typedView(db), userid)) throw errors.apiKeyExists(userid);
    const sent = typeof values.apikey === 'string' && values.apikey !== '' ? values.apikey : undefined;
    const apikey = this.refusalRecorded(userid, origin, () => this.keyValue(sent));
    const vault = this.keys();
    values.apikey = vault.seal(apikey);
    values.apikeydigest = vault.digest(apikey);
    values.creationdate = new Date();
  }

  /** A generated value, or the one sent when external values are allowed and it is strong enough. */
  private keyValue(sent: string | undefined): string {
    if (sent === undefined) return randomBytes(24).toString('hex');
    if (this.options.properties.getFlag(EXTERNAL_KEYS_PROPERTY) !== true)
      throw errors.apiKeyExternalRefused();
    checkStrength(sent);
    return sent;
  }

  /**
   * Runs a key change in a transaction with its notification, and answers once every process has dropped its cache
   * (`ChangeBus.confirm`): the old value is refused at once, wherever the client's next request lands.
   */
  private async changeKeys<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    const bus = this.options.storage.bus;
    let confirmation: Confirmation | undefined;
    let result: T;
    try {
      result = await this.db.transaction().execute(async (transaction) => {
        const value = await work(transaction);
        await bus.notify<Database>(transaction, APIKEY_CHANNEL, EVERYTHING_CHANGED);
        confirmation = await bus.confirm<Database>(transaction);
        return value;
      });
    } catch (error) {
      confirmation?.cancel();
      throw error;
    }
    bus.deliverLocally(APIKEY_CHANNEL, EVERYTHING_CHANGED);
    await confirmation?.heard;
    return result;
  }

  /** Upgrade from the plain-text layout: every row without a digest gets its value sealed and digested. */
  private async sealPlainKeys(): Promise<void> {
    const plain = await findPlainKeys(this.db);
    if (plain.length === 0) return;
    const vault = this.keys();
    await this.changeKeys(async (db) => {
      for (const row of plain) {
        await sealPlainKey(db, row.apikeytokenid, vault.seal(row.apikey), vault.digest(row.apikey));
      }
    });
  }

  private keys(): KeyVault {
    if (!this.vault) throw new Error('ApiKeyService used before start()');
    return this.vault;
  }
}

/** A key's event: the key is its owner's user id (one key per user); never its value. */
function keyEvent(
  type: string,
  owner: string,
  origin: RequestOrigin | undefined,
  detail?: Record<string, unknown>,
): AuditEvent {
  return { type, origin, object: APIKEY_OBJECT, key: owner, ...(detail && { detail }) };
}

function checkExpiration(value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || (value !== -1 && value <= 0)) {
    throw errors.apiKeyExpirationNotValid(String(value));
  }
}

function checkStrength(apikey: string): void {
  if (apikey.length < EXTERNAL_KEY_MIN_LENGTH || apikey.length > EXTERNAL_KEY_MAX_LENGTH) {
    throw errors.apiKeyTooWeak(
      `it must have ${EXTERNAL_KEY_MIN_LENGTH} to ${EXTERNAL_KEY_MAX_LENGTH} characters`,
    );
  }
  if (!EXTERNAL_KEY_ALPHABET.test(apikey)) {
    throw errors.apiKeyTooWeak('it may hold only letters, digits and the characters . _ ~ -');
  }
  if (new Set(apikey).size < EXTERNAL_KEY_MIN_DISTINCT) {
    throw errors.apiKeyTooWeak(`it must use at least ${EXTERNAL_KEY_MIN_DISTINCT} different characters`);
  }
}

/** `mxe.apikeysysusers`: comma-separated user ids, compared as stored (upper case). */
function systemUsers(value: string | undefined): ReadonlySet<string> {
  return new Set(
    (value ?? '')
      .split(',')
      .map((userid) => userid.trim().toUpperCase())
      .filter((userid) => userid !== ''),
  );
}
