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

/** Query parameters of a PostgreSQL URL that carry a secret (node-postgres reads them as connection settings). */
const SECRET_PARAMETERS = ['password', 'sslpassword', 'sslkey'];

/** A DATABASE target's URL with the credentials it carried taken out of it (docs/security.md, "URL credentials"). */
export interface SplitUrl {
  url: string;
  username?: string;
  password?: string;
}

/**
 * Takes the user name and password out of a target's URL (`postgres://user:secret@host/db`, `?password=`), so that
 * the password is sealed like one given on its own and the URL kept and returned holds no secret. A text that does
 * not parse as a URL is returned as it is: `distribute` refuses it by name.
 */
export function splitUrlCredentials(text: string): SplitUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { url: text };
  }
  const split: Omit<SplitUrl, 'url'> = {};
  if (url.username !== '') split.username = decodeURIComponent(url.username);
  if (url.password !== '') split.password = decodeURIComponent(url.password);
  const fromQuery = url.searchParams.get('password');
  if (fromQuery !== null && split.password === undefined) split.password = fromQuery;
  const fromQueryUser = url.searchParams.get('user');
  if (fromQueryUser !== null && split.username === undefined) split.username = fromQueryUser;
  const carried =
    url.username !== '' ||
    url.password !== '' ||
    SECRET_PARAMETERS.some((name) => url.searchParams.has(name));
  if (!carried) return { url: text };
  url.username = '';
  url.password = '';
  for (const name of SECRET_PARAMETERS) url.searchParams.delete(name);
  url.searchParams.delete('user');
  return { url: url.toString(), ...split };
}
