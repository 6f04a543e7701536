import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { clearSessionCookies, sessionOfRequest, startSession, type CookiePolicy } from '../cookies.js';
import type { LoginService } from '../login.js';
import type { SessionEntry, SessionService } from '../sessions.js';
import type { ReturnToPolicy } from './return-to.js';
import { rememberProviderSession, type ProviderSession } from './provider-sessions.js';
import type { SignInStarts } from './start-throttle.js';
import type { FederatedScheme, FederatedUsers } from './service.js';

/** The sign-in page, relative to the context root (docs/federated-login.md). */
export const SIGN_IN_PAGE = '/signin';

/** What every federated scheme needs to turn "the provider vouched for X" into a signed-in browser. */
export interface FederatedSignIn {
  contextRoot: string;
  sessions: SessionService;
  cookies: CookiePolicy;
  logins: LoginService;
  users: FederatedUsers;
  /** Where the provider's side of each session is kept, for single logout. */
  db: Kysely<Database>;
  /** Sign-in starts per client address, shared by every scheme of the process. */
  starts: SignInStarts;
}

/**
 * Counts a sign-in start from the request's address: 429 `EAS0195E` with `Retry-After` when the address started too
 * many this minute (docs/federated-login.md, "Bounds on sign-in starts").
 */
export function admitSignInStart(
  request: FastifyRequest,
  reply: FastifyReply,
  context: FederatedSignIn,
): void {
  const wait = context.starts.admit(request.ip);
  if (wait === undefined) return;
  reply.header('retry-after', String(wait));
  throw errors.tooManySignInStarts(wait);
}

/**
 * Signs `userid` in: the same session and cookies as the FORM login (session cookie, then token cookie; any session
 * the browser held ends first, so the id rotates). The session's writes must echo its CSRF token: only a browser
 * holds these cookies, and the sign-in page hands it the token.
 */
export async function signIn(
  request: FastifyRequest,
  reply: FastifyReply,
  context: FederatedSignIn,
  login: { userid: string; scheme: FederatedScheme; name: string; provider?: ProviderSession },
): Promise<SessionEntry> {
  const session = await startSession(request, reply, context.sessions, context.cookies, {
    userid: login.userid,
    scheme: login.scheme,
    csrfRequired: true,
    withToken: true,
  });
  request.session = session;
  if (login.provider) await rememberProviderSession(context.db, session.id, login.scheme, login.provider);
  context.logins.recordSignIn(login.userid, login.scheme, request.ip, login.name);
  return session;
}

/** Ends the browser's session here (every process hears of it) and clears its cookies; the user id, if any. */
export async function signOutLocally(
  request: FastifyRequest,
  reply: FastifyReply,
  context: Pick<FederatedSignIn, 'sessions' | 'cookies' | 'logins'>,
  scheme: FederatedScheme,
): Promise<string | undefined> {
  const session = await sessionOfRequest(request, context.sessions);
  clearSessionCookies(reply, context.cookies);
  if (!session) return undefined;
  await context.sessions.end(session);
  context.logins.recordLogout(session.userid, scheme, request.ip);
  return session.userid;
}

/** The origins a return address may have: the public address's (when configured) and the request's own. */
export function returnToPolicy(request: FastifyRequest, contextRoot: string): ReturnToPolicy {
  const origins = [`${request.protocol}://${request.host}`];
  const base = request.server.publicBase?.();
  if (base !== undefined) origins.push(new URL(base).origin);
  return { origins, fallback: `${contextRoot}${SIGN_IN_PAGE}` };
}

/**
 * A short-lived cookie that carries sealed sign-in state to the callback, on the context root's path. `lax` is
 * enough for callbacks the provider reaches by a top-level GET redirect; a callback reached by a cross-site POST
 * (SAML's HTTP-POST binding) needs `none`, which browsers accept only with `Secure`.
 */
export function setStateCookie(
  reply: FastifyReply,
  policy: CookiePolicy,
  cookie: { name: string; value: string; maxAgeSeconds: number; sameSite?: 'lax' | 'none' },
): void {
  const secure = policy.secure === 'auto' ? reply.request.protocol === 'https' : policy.secure;
  reply.header(
    'set-cookie',
    stringifySetCookie({
      name: cookie.name,
      value: cookie.value,
      path: policy.path,
      maxAge: cookie.maxAgeSeconds,
      httpOnly: true,
      secure: secure || cookie.sameSite === 'none',
      sameSite: cookie.sameSite ?? 'lax',
    }),
  );
}

export function clearStateCookie(reply: FastifyReply, policy: CookiePolicy, name: string): void {
  reply.header(
    'set-cookie',
    stringifySetCookie({
      name,
      value: '',
      path: policy.path,
      maxAge: 0,
      expires: new Date(0),
      httpOnly: true,
    }),
  );
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || !header.includes(`${name}=`)) return undefined;
  return parseCookie(header)[name];
}
