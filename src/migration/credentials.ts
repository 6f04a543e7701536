import { hkdfSync } from 'node:crypto';
import { openText, sealText } from '../util/aead.js';

const SEALED_PREFIX = 'v1:';
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
    return SEALED_PREFIX + sealText(this.key, ASSOCIATED_DATA, value).toString('base64');
  }

  /** The clear value; undefined when it does not open (another master key, altered data, never sealed). */
  open(sealed: string): string | undefined {
    if (!sealed.startsWith(SEALED_PREFIX)) return undefined;
    return openText(this.key, ASSOCIATED_DATA, Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64'));
  }
}
