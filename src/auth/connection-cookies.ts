import type { CookieClaims, CookieSeal, SealedCookies } from './cookie-seal.js';

/** How long one connection's answers repeat the cookie it was handed last (docs/security.md, "Session cookies"). */
export const REPEAT_MS = 1000;

/** The connection an answer goes out on, and its client's address: its next answers may repeat the cookie. */
export interface IssuingConnection {
  socket: object;
  address: string;
}

/** What a connection was handed last: for whom, when, and the cookies. */
interface Handed {
  address: string;
  claims: Omit<CookieClaims, 'issuedAt'>;
  issuedAt: number;
  cookies: SealedCookies;
}

/**
 * The sealed cookie each keep-alive connection was handed last. A client that sends `maxauth` (BASIC, a key with
 * `enablesession=1`) on every request of a connection is answered the same cookie for up to `REPEAT_MS`, instead of
 * one sealed per answer: sealing is most of what such an answer costs. Only the same client can be handed it again:
 * the same connection, the same client address (a balancer that pools connections names each client), the same user
 * with the same credential stamp, scheme and flags; any other claim seals a new one (docs/security.md).
 */
export class ConnectionCookies {
  /** Keyed by the connection object: an entry goes with its socket. */
  private handed = new WeakMap<object, Handed>();

  /**
   * The cookies `connection` was handed within `REPEAT_MS` for the same claims, else new ones sealed as issued at
   * `now`, remembered for the connection's next answers.
   */
  cookiesFor(
    connection: object,
    address: string,
    claims: Omit<CookieClaims, 'issuedAt'>,
    now: number,
    seal: Pick<CookieSeal, 'seal'>,
  ): SealedCookies {
    const last = this.handed.get(connection);
    if (
      last !== undefined &&
      now - last.issuedAt < REPEAT_MS &&
      now >= last.issuedAt &&
      last.address === address &&
      sameClaims(last.claims, claims)
    )
      return last.cookies;
    const cookies = seal.seal({ ...claims, issuedAt: now });
    this.handed.set(connection, { address, claims, issuedAt: now, cookies });
    return cookies;
  }

  /**
   * Forgets what every connection was handed: a session ended (a logout, an administrator, admin mode), and the
   * cookie that named it must not be handed out again. Sessions end seldom next to answers.
   */
  forgetAll(): void {
    this.handed = new WeakMap();
  }
}

function sameClaims(a: Omit<CookieClaims, 'issuedAt'>, b: Omit<CookieClaims, 'issuedAt'>): boolean {
  return (
    a.userid === b.userid &&
    a.credentialStamp === b.credentialStamp &&
    a.scheme === b.scheme &&
    a.lean === b.lean &&
    a.csrfRequired === b.csrfRequired &&
    a.withToken === b.withToken
  );
}
