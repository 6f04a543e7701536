import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const SEALED_PREFIX = 'v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Binds a sealed value to its use: a sealed API key does not open as a target password, nor the reverse. */
const ASSOCIATED_DATA = Buffer.from('eas dmpkgdsttrgt.password');

/**
 * Seals the passwords of DATABASE distribution targets at rest (AES-256-GCM), with a key derived from the master
 * key that seals API keys (docs/apikeys.md, "Master key"): the same master key on every process opens them.
 */
export class CredentialSeal {
  private readonly key: Buffer;

  constructor(master: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'eas dmpkgdsttrgt seal', 32));
  }

  seal(value: string): string {
    if (value.startsWith(SEALED_PREFIX)) return value;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(ASSOCIATED_DATA);
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** The clear value; undefined when it does not open (another master key, altered data, never sealed). */
  open(sealed: string): string | undefined {
    if (!sealed.startsWith(SEALED_PREFIX)) return undefined;
    const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(ASSOCIATED_DATA);
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      return undefined;
    }
  }
}
