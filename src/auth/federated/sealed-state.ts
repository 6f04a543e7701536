import { openText, sealText } from '../../util/aead.js';

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
    const plain = JSON.stringify({ until: this.now() + lifetimeSeconds * 1000, value });
    return sealText(this.key, this.associatedData, plain).toString('base64url');
  }

  /** The value, or undefined when the token was altered, sealed under another key or purpose, or has expired. */
  open(token: string | undefined): T | undefined {
    if (token === undefined || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
    const plain = openText(this.key, this.associatedData, Buffer.from(token, 'base64url'));
    if (plain === undefined) return undefined;
    const sealed = JSON.parse(plain) as { until: number; value: T };
    return sealed.until > this.now() ? sealed.value : undefined;
  }
}
