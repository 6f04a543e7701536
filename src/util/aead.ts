import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Random IVs are taken from a pool filled by the CSPRNG 4 KiB at a time: a call to `randomBytes` for 12 bytes costs
 * about what the whole AES-GCM seal does, and session cookies are sealed on every answer to per-request credentials
 * (docs/security.md, "Session cookies"). Each IV is fresh random bytes, used once.
 */
const IV_POOL_BYTES = 4096 - (4096 % IV_BYTES);
const ivPool = Buffer.alloc(IV_POOL_BYTES);
let ivOffset = IV_POOL_BYTES;

/** The next unused IV of the pool; valid until the next call. */
function freshIv(): Buffer {
  if (ivOffset === IV_POOL_BYTES) {
    randomFillSync(ivPool);
    ivOffset = 0;
  }
  // A view, used at once: the cipher and the sealed buffer copy it before the pool is filled again.
  const iv = ivPool.subarray(ivOffset, ivOffset + IV_BYTES);
  ivOffset += IV_BYTES;
  return iv;
}

/**
 * AES-256-GCM over text, as every sealed value of the service is kept (API keys, target passwords, sign-in state):
 * `iv | tag | ciphertext` in one buffer. The associated data binds a sealed value to its use, so that one sealed
 * for one purpose does not open as another; each caller encodes the buffer its own way (docs/security.md).
 */
export function sealText(key: Buffer, associatedData: Buffer, clear: string): Buffer {
  const iv = freshIv();
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
