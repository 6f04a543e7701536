import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Short-lived state a sign-in carries through the browser between leaving for the identity provider and coming back
 * (state, nonce, PKCE verifier, return address): sealed with AES-256-GCM under a key every process derives from the
 * shared master key, so that whichever process receives the callback can open it, and the browser can neither read
 * nor alter it. It expires on its own: a sealed value names its deadline.
 */
export class SealedState<T> {
  private readonly associatedData: Buffer;

  constructor(
    private readonly key: Buffer,
    /** What the value is for: a value sealed for another purpose does not open here. */
    purpose: string,
    private readonly now: () => number = Date.now,
  ) {
    this.associatedData = Buffer.from(`eas sealed state: ${purpose}`);
  }

  seal(value: T, lifetimeSeconds: number): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(this.associatedData);
    const plain = JSON.stringify({ until: this.now() + lifetimeSeconds * 1000, value });
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The value, or undefined when the token was altered, sealed under another key or purpose, or has expired. */
  open(token: string | undefined): T | undefined {
    if (token === undefined || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
    let plain: string;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(this.associatedData);
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      return undefined;
    }
    const sealed = JSON.parse(plain) as { until: number; value: T };
    return sealed.until > this.now() ? sealed.value : undefined;
  }
}
