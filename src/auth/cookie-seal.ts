import { openText, sealText } from '../util/aead.js';

/**
 * What a sealed session cookie carries: the answer to a request authenticated by per-request credentials (`maxauth`,
 * BASIC, an API key with `enablesession=1`) hands one out and stores nothing; its first replay makes it a stored
 * session (docs/compatibility.md, "Sessions"; docs/security.md, "Session cookies").
 */
export interface CookieClaims {
  userid: string;
  /** When it was issued (ms since the epoch): the idle timeout counts from here until the first replay. */
  issuedAt: number;
  /** The user's credential stamp at issue (`UserProfile.credentialStamp`): a password change refuses the cookie. */
  credentialStamp: string;
  /** The scheme that authenticated the request (MAXAUTH, BASIC, APIKEY): the stored session's. */
  scheme: string;
  /** `lean` of the request, the session's default; null: none asked for. */
  lean: boolean | null;
  /** `csrf=1` on the request: the session's writes must echo its token. */
  csrfRequired: boolean;
  /** Whether the token cookie was issued with it (application-server security). */
  withToken: boolean;
}

/** Both cookies of one issue. */
export interface SealedCookies {
  sessionCookie: string;
  tokenCookie: string | undefined;
}

/** A cookie value opened: its claims, and both forms of it (either cookie names the same session). */
export interface OpenedCookie {
  claims: CookieClaims;
  sessionCookie: string;
  tokenCookie: string;
}

/**
 * The two cookies share one sealed body and differ by prefix, so either finds the session (the token cookie alone
 * restores it, as a login's does). A `.` never occurs in the random values of stored logins (base64url), so the
 * prefix tells the two kinds apart.
 */
const SESSION_PREFIX = 's.';
const TOKEN_PREFIX = 't.';
const ASSOCIATED_DATA = Buffer.from('eas session cookie v1');
const SEPARATOR = '|';
const BODY = /^[A-Za-z0-9_-]+$/;

function flag(value: boolean | null): string {
  return value === null ? '-' : value ? '1' : '0';
}

/** Whether a cookie value is a sealed one (as opposed to the random value of a stored login's session). */
export function isSealedCookie(value: string): boolean {
  return value.startsWith(SESSION_PREFIX) || value.startsWith(TOKEN_PREFIX);
}

/**
 * Seals and opens session cookies with AES-256-GCM (`../util/aead.ts`) under a key every process derives from the
 * master key: any process opens what another issued, and a client can neither read nor alter nor forge one.
 */
export class CookieSeal {
  constructor(private readonly key: Buffer) {}

  seal(claims: CookieClaims): SealedCookies {
    // The user id last: it is the only field that could hold the separator.
    const clear =
      claims.issuedAt.toString(36) +
      SEPARATOR +
      flag(claims.lean) +
      flag(claims.csrfRequired) +
      flag(claims.withToken) +
      SEPARATOR +
      claims.scheme +
      SEPARATOR +
      claims.credentialStamp +
      SEPARATOR +
      claims.userid;
    const body = sealText(this.key, ASSOCIATED_DATA, clear).toString('base64url');
    return {
      sessionCookie: SESSION_PREFIX + body,
      tokenCookie: claims.withToken ? TOKEN_PREFIX + body : undefined,
    };
  }

  /** The claims of a sealed cookie (either form); undefined when it does not open (forged, altered, another key). */
  open(value: string): OpenedCookie | undefined {
    if (!isSealedCookie(value)) return undefined;
    const body = value.slice(SESSION_PREFIX.length);
    if (!BODY.test(body)) return undefined;
    const clear = openText(this.key, ASSOCIATED_DATA, Buffer.from(body, 'base64url'));
    if (clear === undefined) return undefined;
    const [issued = '', flags = '', scheme = '', credentialStamp = '', ...userid] = clear.split(SEPARATOR);
    const issuedAt = parseInt(issued, 36);
    if (!Number.isSafeInteger(issuedAt) || flags.length !== 3 || userid.length === 0) return undefined;
    const lean = flags[0] === '-' ? null : flags[0] === '1';
    return {
      claims: {
        userid: userid.join(SEPARATOR),
        issuedAt,
        credentialStamp,
        scheme,
        lean,
        csrfRequired: flags[1] === '1',
        withToken: flags[2] === '1',
      },
      sessionCookie: SESSION_PREFIX + body,
      tokenCookie: TOKEN_PREFIX + body,
    };
  }
}
