/** An API key record as MXAPIAPIKEY lists it (docs/apikeys.md). */
export interface KeyRecord {
  userid: string;
  creationdate?: string;
  expiration?: number;
  href: string;
}

/**
 * When a key expires, `expiration` minutes after its creation (undefined: never, -1), and whether it has: an expired
 * key is still listed (its record stays until deleted) but is refused.
 */
export function keyExpiry(key: KeyRecord, now = Date.now()): { at: Date | undefined; expired: boolean } {
  if (key.expiration === undefined || key.expiration < 0 || !key.creationdate)
    return { at: undefined, expired: false };
  const at = new Date(Date.parse(key.creationdate) + key.expiration * 60_000);
  return { at, expired: at.getTime() <= now };
}
