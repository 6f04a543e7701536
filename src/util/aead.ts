import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM over text, as every sealed value of the service is kept (API keys, target passwords, sign-in state):
 * `iv | tag | ciphertext` in one buffer. The associated data binds a sealed value to its use, so that one sealed
 * for one purpose does not open as another; each caller encodes the buffer its own way (docs/security.md).
 */
export function sealText(key: Buffer, associatedData: Buffer, clear: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associatedData);
  const body = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The clear text of `sealText`'s buffer; undefined when it does not open (another key or use, altered, cut). */
export function openText(key: Buffer, associatedData: Buffer, sealed: Buffer): string | undefined {
  if (sealed.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(associatedData);
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return undefined;
  }
}
