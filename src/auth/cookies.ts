import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../config.js';
import type { OpenedSession, SessionEntry, SessionService } from './sessions.js';

/** The session cookie, named as the deployed systems' application server names it (clients look for it). */
export const SESSION_COOKIE = 'JSESSIONID';
/** The token cookie of application-server logins (WebSphere's LTPA name); alone, it restores its session. */
export const TOKEN_COOKIE = 'LtpaToken2';

const NO_SESSION: Promise<undefined> = Promise.resolve(undefined);

export interface CookiePolicy {
  /** The context root: the cookies go to every API root (/oslc, /api) and the login form, and nowhere else. */
  path: string;
  /** `Secure` when the public address is https; without one, when the request itself came over https. */
  secure: boolean | 'auto';
}

export function cookiePolicy(config: Pick<AppConfig, 'contextRoot' | 'publicUrl'>): CookiePolicy {
  return {
    path: config.contextRoot,
    secure: config.publicUrl === undefined ? 'auto' : config.publicUrl.startsWith('https://'),
  };
}

function attributes(policy: CookiePolicy) {
  return { path: policy.path, httpOnly: true, sameSite: 'lax', secure: policy.secure } as const;
}

/** Sets the session cookie first (clients take the first `Set-Cookie`), then the token cookie if there is one. */
export function setSessionCookies(reply: FastifyReply, opened: OpenedSession, policy: CookiePolicy): void {
  reply.setCookie(SESSION_COOKIE, opened.sessionCookie, attributes(policy));
  if (opened.tokenCookie !== undefined) reply.setCookie(TOKEN_COOKIE, opened.tokenCookie, attributes(policy));
}

export function clearSessionCookies(reply: FastifyReply, policy: CookiePolicy): void {
  reply.clearCookie(SESSION_COOKIE, attributes(policy));
  reply.clearCookie(TOKEN_COOKIE, attributes(policy));
}

/** Whether the request carries a session or token cookie at all (a cheap test before parsing). */
export function hasSessionCookie(request: FastifyRequest): boolean {
  const header = request.headers.cookie;
  return (
    typeof header === 'string' &&
    (header.includes(`${SESSION_COOKIE}=`) || header.includes(`${TOKEN_COOKIE}=`))
  );
}

/**
 * The live session the request's cookies name: the session cookie's, else the token cookie's. A client that echoes a
 * whole `Set-Cookie` value (`JSESSIONID=x; Path=/maximo; HttpOnly`) sends attribute names as cookies: they are
 * ignored, only the two names count.
 */
export function sessionOfRequest(
  request: FastifyRequest,
  sessions: SessionService,
): Promise<SessionEntry | undefined> {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return NO_SESSION;
  const cookies = request.server.parseCookie(header);
  const sessionValue = cookies[SESSION_COOKIE];
  const tokenValue = cookies[TOKEN_COOKIE];
  if (sessionValue === undefined)
    return tokenValue === undefined ? NO_SESSION : sessions.resolve('token', tokenValue);
  const bySession = sessions.resolve('session', sessionValue);
  return tokenValue === undefined
    ? bySession
    : bySession.then((session) => session ?? sessions.resolve('token', tokenValue));
}

export interface LoginSessionRequest {
  userid: string;
  scheme: string;
  csrfRequired: boolean;
  withToken: boolean;
  reuseKey?: string;
}

/**
 * Opens the session of a login and sets its cookies. The session the request's cookie named, if any, ends
 * everywhere first: a login never continues a session it did not open (session fixation), so the id rotates.
 */
export async function startSession(
  request: FastifyRequest,
  reply: FastifyReply,
  sessions: SessionService,
  policy: CookiePolicy,
  login: LoginSessionRequest,
): Promise<SessionEntry> {
  const current = await sessionOfRequest(request, sessions);
  if (current) await sessions.end(current);
  const opened = await sessions.open({ ...login, address: request.ip });
  setSessionCookies(reply, opened, policy);
  return opened.entry;
}
