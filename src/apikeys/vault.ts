import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openText, sealText } from '../util/aead.js';
import { BoundedCache } from '../util/bounded-cache.js';

/** File of the generated master key in the data directory, when EAS_MASTER_KEY is not set. */
export const MASTER_KEY_FILE = 'apikey-master.key';

const SEALED_PREFIX = 'v1:';
const RECENT_KEYS_KEPT = 10_000;
/** Binds a sealed value to its use: a value sealed for something else does not open as an API key. */
const ASSOCIATED_DATA = Buffer.from('eas apikeytoken.apikey');

/**
 * The keys that protect API keys at rest, both derived from one master key: AES-256-GCM seals the stored values
 * (administrators read them back), HMAC-SHA256 gives the digest by which a presented key is found. A digest
 * cannot be reversed and needs the master key to compute, so a copy of the table yields no usable key.
 */
export class KeyVault {
  private readonly sealKey: Buffer;
  private readonly digestKey: Buffer;
  private readonly recentDigests = new BoundedCache<string, string>(RECENT_KEYS_KEPT);
  private readonly computeDigest = (apikey: string): string =>
    createHmac('sha256', this.digestKey).update(apikey, 'utf8').digest('hex');

  constructor(private readonly master: Buffer) {
    this.sealKey = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'eas apikey seal', 32));
    this.digestKey = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'eas apikey digest', 32));
  }

  /**
   * A key of its own for another use of the master key every process shares (the sealed sign-in state of federated
   * login, docs/federated-login.md): HKDF with that use's name reveals nothing of the other keys.
   */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.master, Buffer.alloc(0), `eas ${purpose}`, 32));
  }

  /**
   * The digest by which a presented key is found. Clients present the same key on every request: the digests of
   * recent keys are kept (in memory only, where the requests carrying the keys already are).
   */
  digest(apikey: string): string {
    return this.recentDigests.getOrCompute(apikey, this.computeDigest);
  }

  seal(apikey: string): string {
    return SEALED_PREFIX + sealText(this.sealKey, ASSOCIATED_DATA, apikey).toString('base64');
  }

  /** The clear value of a sealed one; undefined when it does not open (another master key, altered data). */
  open(sealed: string): string | undefined {
    if (!sealed.startsWith(SEALED_PREFIX)) return undefined;
    return openText(this.sealKey, ASSOCIATED_DATA, Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64'));
  }
}

/**
 * The master key: EAS_MASTER_KEY when set, else the key file of the data directory, created on first use with
 * 32 random bytes, readable by the owner only. Processes that share the data directory may start together: the
 * first link wins, the others read its key.
 */
export async function loadMasterKey(configured: string | undefined, dataDir: string): Promise<Buffer> {
  if (configured !== undefined) return Buffer.from(configured, 'utf8');
  const path = join(dataDir, MASTER_KEY_FILE);
  try {
    return decodeKeyFile(await readFile(path, 'utf8'), path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Written whole under a temporary name, then linked into place: a process never reads a half-written key.
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    // The mode of a new file is filtered by the umask; owner-only is the point.
    await chmod(temporary, 0o600);
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary);
  }
  return decodeKeyFile(await readFile(path, 'utf8'), path);
}

/** The key a key file holds (base64 of 32 random bytes), or an error naming the file. */
export function decodeKeyFile(text: string, path: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length < 32) throw new Error(`The API key master key file ${path} does not hold a 32-byte key.`);
  return key;
}
