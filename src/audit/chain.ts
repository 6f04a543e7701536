import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/*
 * The integrity of the trail (src/audit/README.md, "The chain"): pure functions, no storage.
 * - A record's MAC: HMAC-SHA256 of its content, computed when it is written. Only a holder of the master key can
 *   make one, so a row inserted or edited by SQL does not carry a valid one.
 * - Its digest: HMAC-SHA256 of the previous record's digest, its own chain position and its MAC, given when the
 *   sealing step chains it. A removed record breaks the next one's link; a record moved breaks its own.
 */

/** The columns a MAC covers, in this order. */
export const SEALED_COLUMNS = [
  'eventtime',
  'eventtype',
  'outcome',
  'userid',
  'authscheme',
  'keyid',
  'sessiondigest',
  'clientaddr',
  'requestid',
  'servername',
  'objectname',
  'objectkey',
  'beforevalue',
  'aftervalue',
  'detail',
] as const;

export type SealedContent = {
  [Column in (typeof SEALED_COLUMNS)[number]]: Column extends 'eventtime' ? Date : string | null;
};

/** The digest before the first record of a trail that was never swept. */
export const GENESIS = '0'.repeat(64);

/** The chain's key, derived from the master key (a key of its own: a leak of it exposes no API key). */
export function chainKey(master: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'eas audit chain', 32));
}

/** A record's MAC: the content as a JSON array in column order (no ambiguity between adjacent values). */
export function macOf(key: Buffer, content: SealedContent): string {
  const values = SEALED_COLUMNS.map((column) =>
    column === 'eventtime' ? content.eventtime.toISOString() : content[column],
  );
  return createHmac('sha256', key).update(JSON.stringify(values), 'utf8').digest('hex');
}

/** The digest of the record at `chainseq`, chained to the one before it. */
export function digestOf(key: Buffer, previous: string, chainseq: number, mac: string): string {
  return createHmac('sha256', key).update(`${previous}\n${chainseq}\n${mac}`, 'utf8').digest('hex');
}

export function sameHex(a: string | null, b: string): boolean {
  if (a === null || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** A fingerprint of a secret that names it without revealing it (used when no key service is at hand). */
export function fingerprint(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 16);
}
