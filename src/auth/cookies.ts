// Cookies through the jshttp `cookie` library (what @fastify/cookie wraps): RFC 6265 parsing of any Cookie header
// clients send (quoted values, attribute names echoed back) and Set-Cookie serialization with every attribute. Not
// the Fastify plugin: its onSend hook would run on every response, when only logins and logouts set cookies.
import { parseCookie, stringifySetCookie, type SetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../config.js';
import { readFlag } from '../http/query-string.js';
import { BoundedCache } from '../util/bounded-cache.js';
import { andThen, type MaybePromise } from '../util/maybe-promise.js';
import type { OpenedSession, SessionEntry, SessionService } from './sessions.js';

/** The session cookie, named as the deployed systems' application server names it (clients look for it). */
export const SESSION_COOKIE = 'JSESSIONID';
/** The token cookie of application-server logins (WebSphere's LTPA name); alone, it restores its session. */
export const TOKEN_COOKIE = 'LtpaToken2';

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

/** A cookie's `Set-Cookie` value with the policy's attributes. */
function setCookieValue(
  reply: FastifyReply,
  policy: CookiePolicy,
  cookie: Pick<SetCookie, 'name' | 'value'>,
  cleared = false,
): string {
  return stringifySetCookie({
    ...cookie,
    path: policy.path,
    // A past date as well as Max-Age=0: older clients know only Expires.
    ...(cleared && { maxAge: 0, expires: new Date(0) }),
    httpOnly: true,
    secure: policy.secure === 'auto' ? reply.request.protocol === 'https' : policy.secure,
    sameSite: 'lax',
  });
}

/**
 * The `Set-Cookie` value of a session cookie: the cookie's attributes serialized once per name and `Secure`, then
 * the value put in front (the answer to every request with per-request credentials sets one). Values are base64url
 * with `.`: nothing to encode.
 */
const attributesOf = new WeakMap<CookiePolicy, { plain: Map<string, string>; secure: Map<string, string> }>();

function sessionCookieValue(reply: FastifyReply, policy: CookiePolicy, name: string, value: string): string {
  let known = attributesOf.get(policy);
  if (known === undefined) {
    known = { plain: new Map(), secure: new Map() };
    attributesOf.set(policy, known);
  }
  const secure = policy.secure === 'auto' ? reply.request.protocol === 'https' : policy.secure;
  const byName = secure ? known.secure : known.plain;
  let attributes = byName.get(name);
  if (attributes === undefined) {
    attributes = setCookieValue(reply, policy, { name, value: '' }).slice(name.length + 1);
    byName.set(name, attributes);
  }
  return `${name}=${value}${attributes}`;
}

/**
 * Sets the session cookie first (clients take the first `Set-Cookie`), then the token cookie if there is one.
 * Fastify appends each `set-cookie` header to those already set, in order.
 */
export function setSessionCookies(
  reply: FastifyReply,
  cookies: Pick<OpenedSession, 'sessionCookie' | 'tokenCookie'>,
  policy: CookiePolicy,
): void {
  reply.header('set-cookie', sessionCookieValue(reply, policy, SESSION_COOKIE, cookies.sessionCookie));
  if (cookies.tokenCookie !== undefined)
    reply.header('set-cookie', sessionCookieValue(reply, policy, TOKEN_COOKIE, cookies.tokenCookie));
}

export function clearSessionCookies(reply: FastifyReply, policy: CookiePolicy): void {
  reply.header('set-cookie', setCookieValue(reply, policy, { name: SESSION_COOKIE, value: '' }, true));
  reply.header('set-cookie', setCookieValue(reply, policy, { name: TOKEN_COOKIE, value: '' }, true));
}

/** Whether the request carries a session or token cookie at all (a cheap test before parsing). */
export function hasSessionCookie(request: FastifyRequest): boolean {
  const header = request.headers.cookie;
  return (
    typeof header === 'string' &&
    (header.includes(`${SESSION_COOKIE}=`) || header.includes(`${TOKEN_COOKIE}=`))
  );
}

/** The two cookies of a `Cookie` header that name a session. */
interface LoginCookies {
  sessionValue: string | undefined;
  tokenValue: string | undefined;
}

/**
 * `Cookie` headers read lately: a client sends the same header on every request of its session, so it is parsed
 * once (a lookup of the header text instead of a parse into an object of every cookie). Bounded: the texts are the
 * clients'.
 */
const recentHeaders = new BoundedCache<string, LoginCookies>(1024);

function loginCookiesOf(header: string): LoginCookies {
  return recentHeaders.getOrCompute(header, parseLoginCookies);
}

function parseLoginCookies(header: string): LoginCookies {
  const cookies = parseCookie(header);
  return { sessionValue: cookies[SESSION_COOKIE], tokenValue: cookies[TOKEN_COOKIE] };
}

/**
 * The live session the request's cookies name: the session cookie's, else the token cookie's. A client that echoes a
 * whole `Set-Cookie` value (`JSESSIONID=x; Path=/maximo; HttpOnly`) sends attribute names as cookies: they are
 * ignored, only the two names count.
 */
export function sessionOfRequest(
  request: FastifyRequest,
  sessions: SessionService,
): MaybePromise<SessionEntry | undefined> {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  const { sessionValue, tokenValue } = loginCookiesOf(header);
  if (sessionValue === undefined)
    return tokenValue === undefined ? undefined : sessions.resolve('token', tokenValue);
  const bySession = sessions.resolve('session', sessionValue);
  return tokenValue === undefined
    ? bySession
    : andThen(bySession, (session) => session ?? sessions.resolve('token', tokenValue));
}

export interface LoginSessionRequest {
  userid: string;
  scheme: string;
  csrfRequired: boolean;
  withToken: boolean;
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
  // The JSON form the login asked for is the session's default (docs/compatibility.md, "Sessions").
  const lean = readFlag((request.query as Record<string, string | undefined> | undefined)?.lean);
  const opened = await sessions.open({ ...login, lean, address: request.ip });
  setSessionCookies(reply, opened, policy);
  return opened.entry;
}

/**
 * A request that opened a session or was given a sealed cookie, but is answered with an error: the session ends and
 * the cookies are not sent, so that no refused request leaves a session or a cookie behind (docs/compatibility.md,
 * "Sessions"). A request that sets cookies runs in no other session than the one it opened.
 */
export function abandonedLogin(
  request: FastifyRequest,
  reply: FastifyReply,
  sessions: SessionService,
): Promise<void> | undefined {
  if (!reply.hasHeader('set-cookie')) return undefined;
  reply.removeHeader('set-cookie');
  reply.removeHeader('csrftoken');
  const session = request.session;
  if (!session) return undefined;
  request.session = null;
  return sessions.end(session);
}
