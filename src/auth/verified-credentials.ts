import * as crypto from 'node:crypto';
import { BoundedCache } from '../util/bounded-cache.js';

/** Credential headers verified lately, at most this many (the oldest forgotten first). */
const MAX_VERIFIED = 10_000;

interface Verified {
  userid: string;
  /** The credentials' version when they were verified: any change to users since makes the entry worthless. */
  version: number;
  expires: number;
}

/**
 * The per-request credential headers (`maxauth`, `Authorization: Basic`) this process verified lately, so that the
 * password hash (or the directory bind) runs once per credential rather than once per request
 * (docs/compatibility.md, "Sessions"). An entry is found by a keyed hash of the header's value under a secret
 * drawn when the process starts: neither the password nor the header value is kept, and the digests are worthless
 * elsewhere. Only successes are remembered; a refusal is never cached, so every wrong password still counts
 * towards the lockout rules.
 *
 * `version` grows whenever any process writes a user, group or right (AuthService listens on the change bus): every
 * entry then stops counting at once, and a verification that began before the change is not remembered.
 */
export class VerifiedCredentials {
  private readonly secret = crypto.randomBytes(32).toString('base64');
  private readonly entries = new BoundedCache<string, Verified>(MAX_VERIFIED);
  private currentVersion = 0;

  /** The version verifications started now are remembered under. */
  get version(): number {
    return this.currentVersion;
  }

  /**
   * The keyed digest of a header value. A secret prefix on SHA-256 rather than an HMAC: Node's one-shot `crypto.hash`
   * costs a fraction of an HMAC object on the request path, and a fixed-length secret before the value gives the
   * same unforgeability for a lookup key (no length extension applies: nothing is appended to a known digest).
   */
  digest(headerValue: string): string {
    return keyedSha256(this.secret + headerValue);
  }

  /** The user id the credentials behind `digest` were verified as, if still valid now. */
  find(digest: string, now: number): string | undefined {
    const entry = this.entries.get(digest);
    if (entry === undefined) return undefined;
    if (entry.version === this.currentVersion && entry.expires > now) return entry.userid;
    return undefined;
  }

  /** Remembers a success until `expires`, unless users changed since the verification began (`version`). */
  remember(digest: string, userid: string, version: number, expires: number): void {
    if (version !== this.currentVersion) return;
    this.entries.set(digest, { userid, version, expires });
  }

  /** Users, groups or rights changed somewhere: nothing verified before counts any more. */
  dropAll(): void {
    this.currentVersion += 1;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

const keyedSha256: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'base64')
    : (text) => crypto.createHash('sha256').update(text).digest('base64');
