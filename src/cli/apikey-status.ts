/**
 * Whether a key record (MXAPIAPIKEY: `expiration` minutes after `creationdate`, -1 never) has expired: `eas apikey
 * list` marks it, since an expired key is listed until deleted but refused (docs/apikeys.md).
 */
export function keyStatus(record: Record<string, unknown>, now = Date.now()): 'active' | 'expired' {
  const minutes = Number(record.expiration);
  const created = Date.parse(String(record.creationdate ?? ''));
  if (!Number.isFinite(minutes) || minutes < 0 || Number.isNaN(created)) return 'active';
  return created + minutes * 60_000 <= now ? 'expired' : 'active';
}
