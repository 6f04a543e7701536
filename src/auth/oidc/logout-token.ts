// OpenID Connect Back-Channel Logout 1.0 (docs/federated-login.md, "Single logout"): the provider posts a signed
// logout token naming the user (`sub`) and/or its session (`sid`); the sessions it opened for them end on every
// process. The token is checked as the specification asks, with jose against the provider's published keys.
import type { createRemoteJWKSet, JWTPayload } from 'jose';
import { errors } from '../../errors.js';

const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** Tolerance on the token's times (an `iat` later than now by more is refused), as for SAML's default skew. */
export const CLOCK_TOLERANCE_SECONDS = 60;
/** A logout token is sent at once: an older one is not taken (it could only be a replay). */
const MAX_TOKEN_AGE_SECONDS = 600;

export interface LogoutTokenExpectations {
  issuer: string;
  clientId: string;
}

/** Whose sessions a valid logout token ends, and what makes the token itself single-use. */
export interface LogoutSubject {
  subject: string | undefined;
  providerSession: string | undefined;
  /** The token's issuer and `jti`: it is accepted once (src/auth/federated/logout-replay.ts). */
  issuer: string;
  tokenId: string;
  /** When the token stops being accepted by its age: it is remembered until then. */
  acceptedUntil: Date;
}

export type ProviderKeys = ReturnType<typeof createRemoteJWKSet>;

/** The provider's keys: jose caches them and fetches them again for a key id it does not know (a rollover). */
export async function providerKeys(jwksUri: string): Promise<ProviderKeys> {
  const jose = await import('jose');
  return jose.createRemoteJWKSet(new URL(jwksUri));
}

/** Verifies the token: EAS0194E with the failed check, or whose sessions end. */
export async function verifyLogoutToken(
  token: string,
  keys: ProviderKeys,
  expected: LogoutTokenExpectations,
): Promise<LogoutSubject> {
  const jose = await import('jose');
  let payload: JWTPayload;
  try {
    ({ payload } = await jose.jwtVerify(token, keys, {
      issuer: expected.issuer,
      audience: expected.clientId,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      maxTokenAge: MAX_TOKEN_AGE_SECONDS,
      requiredClaims: ['iat', 'jti', 'events'],
    }));
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw errors.logoutTokenRefused(`it is not valid (${detail.slice(0, 200)})`);
  }
  const events = payload.events as Record<string, unknown> | undefined;
  if (typeof events !== 'object' || events === null || !(BACKCHANNEL_EVENT in events)) {
    throw errors.logoutTokenRefused('it carries no back-channel logout event');
  }
  // A nonce would make it an ID token, which must never be taken for a logout token.
  if ('nonce' in payload) throw errors.logoutTokenRefused('it carries a nonce');
  const subject = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : undefined;
  const providerSession = typeof payload.sid === 'string' && payload.sid !== '' ? payload.sid : undefined;
  if (subject === undefined && providerSession === undefined) {
    throw errors.logoutTokenRefused('it names neither a subject nor a session');
  }
  if (typeof payload.jti !== 'string' || payload.jti === '') throw errors.logoutTokenRefused('it has no jti');
  // jwtVerify checked both: the issuer is the expected one, and `iat` is a number within the age allowed.
  const acceptedUntil = new Date((payload.iat! + MAX_TOKEN_AGE_SECONDS + CLOCK_TOLERANCE_SECONDS) * 1000);
  return { subject, providerSession, issuer: expected.issuer, tokenId: payload.jti, acceptedUntil };
}
