import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { errors } from '../errors.js';
import { readFlag } from '../http/query-string.js';
import { isUnder, normalisedPath } from '../http/route-path.js';
import type { MetadataRegistry, ObjectStructure } from '../metadata/registry.js';
import { checkBrowserWrite, checkSessionChange } from './browser-origin.js';
import {
  hasSessionCookie,
  sessionOfRequest,
  setSessionCookies,
  startSession,
  type CookiePolicy,
} from './cookies.js';
import type { AuthService } from './service.js';
import { sameToken, type SessionEntry, type SessionService } from './sessions.js';
import type { Access, AuthStrategy, CallerAdmission, Right, UserProfile } from './types.js';
import { andThen, type MaybePromise } from '../util/maybe-promise.js';

/**
 * What a request that carries credentials (`maxauth`, BASIC, an API key with `enablesession=1`) does with sessions
 * (docs/compatibility.md, "Sessions"):
 * - `reuse` (every route but the login and logout routes): the request runs in the session its cookie names when
 *   that is the same user's (the cookie's first replay stores it); otherwise its answer carries a sealed cookie,
 *   which nothing stores until a request replays it (`SessionService.issue`);
 * - `new` (the login route): always opens and stores a new one, ending the one the cookie named (the id rotates on
 *   login);
 * - `none` (logout).
 * An API key without `enablesession=1` is silent: no session, no cookie.
 */
export type SessionPolicy = 'reuse' | 'new' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the route requires; a route without it is refused to everyone (deny by default). */
    access?: Access;
    session?: SessionPolicy;
    /**
     * The route logs in or out (opens, replaces or ends the session of the browser that sends it): browsers reach it
     * only from this service's own pages, whatever the method (`checkSessionChange`, docs/compatibility.md, "CSRF").
     */
    changesSession?: boolean;
  }
  interface FastifyRequest {
    user: UserProfile | null;
    /** The object structure named in the path, once the access hook resolved it. */
    objectStructure: ObjectStructure | null;
    /** The session the request runs in: the one its cookie names, or the one its login opened. */
    session: SessionEntry | null;
  }
}

export interface AccessHookOptions {
  auth: AuthService;
  /** Tried in order; the first whose credentials the request carries decides. */
  strategies: readonly AuthStrategy[];
  metadata: MetadataRegistry;
  sessions: SessionService;
  cookies: CookiePolicy;
  /** Whether logins also get the token cookie (application-server security). */
  tokenCookie: boolean;
  /** Admin mode's rules for every caller (docs/adminmode.md). */
  admission: CallerAdmission;
  /**
   * A route prefix (`/maximo/api`) on which only this strategy is accepted and every request must carry its
   * credentials, public routes and unknown URLs included (the API-key route, docs/apikeys.md).
   */
  keyOnly?: { prefix: string; strategy: AuthStrategy } | undefined;
}

const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the access hook needs to know of the route a request matched, resolved once per route. */
interface RouteAccess {
  access: Access | undefined;
  /** The key-only strategy when the route is under its prefix (decided on the pattern the router matched). */
  keyOnly: AuthStrategy | undefined;
  session: SessionPolicy;
  changesSession: boolean;
}

/**
 * The one place where access is decided, before the body is read: authenticate with the first strategy whose
 * credentials the request carries (a login route answers with a session cookie), check the CSRF token of browser-session
 * writes, then check what the route declared. A callback hook rather than an async one: a request whose session or
 * key this process knows is decided without a promise (see MaybePromise).
 *
 * Each route gets its own hook as it registers, holding what the route declared: no lookup of the route on every
 * request (Fastify's `request.routeOptions` builds a fresh object each time it is read). Routes that packages
 * register declare their access in `onRoute` hooks of their own, which run after this one, so a route's access is
 * read on its first request. `before` runs first on every request, refused ones included (the request id's echo).
 * The returned hook is the not-found handler's: unmatched URLs are judged on their decoded path.
 */
export function registerAccessHook(
  app: FastifyInstance,
  options: AccessHookOptions,
  before: (request: FastifyRequest, reply: FastifyReply) => void,
): onRequestHookHandler {
  app.decorateRequest('user', null);
  app.decorateRequest('objectStructure', null);
  app.decorateRequest('session', null);
  const hookOf =
    (accessOf: (request: FastifyRequest) => RouteAccess | undefined): onRequestHookHandler =>
    (request, reply, done) => {
      before(request, reply);
      let decided: MaybePromise<void>;
      try {
        decided = checkAccess(request, reply, accessOf(request), options);
      } catch (error) {
        done(error as Error);
        return;
      }
      if (decided instanceof Promise) decided.then(() => done(), done);
      else done();
    };
  app.addHook('onRoute', (route) => {
    let resolved: RouteAccess | undefined;
    const hook = hookOf(() => {
      resolved ??= {
        access: route.config?.access,
        keyOnly: keyOnlyStrategy(options, route.url),
        session: route.config?.session ?? 'reuse',
        changesSession: route.config?.changesSession === true,
      };
      return resolved;
    });
    const existing = route.onRequest;
    route.onRequest =
      existing === undefined ? [hook] : [hook, ...(Array.isArray(existing) ? existing : [existing])];
  });
  return hookOf((request) => {
    const keyOnly = keyOnlyStrategy(options, normalisedPath(request.url));
    // Unmatched URLs go to the not-found handler, which answers 404 whoever asks, but on the key-only route.
    return keyOnly === undefined
      ? undefined
      : { access: undefined, keyOnly, session: 'reuse', changesSession: false };
  });
}

/** `route` undefined: the request matched no route and is answered 404 unless the key-only route refuses it first. */
function checkAccess(
  request: FastifyRequest,
  reply: FastifyReply,
  route: RouteAccess | undefined,
  options: AccessHookOptions,
): MaybePromise<void> {
  if (route === undefined) return;
  const { access, keyOnly } = route;
  if (keyOnly) {
    // Before any other work: a request without a key gets no further on the key-only route.
    if (!keyOnly.applies(request)) throw errors.notLoggedIn();
  }
  // Logins and logouts, public ones included, whoever the caller is.
  if (route.changesSession) checkSessionChange(request);
  if (!keyOnly && access?.kind === 'public') return;
  const user = authenticate(request, reply, options, route.session, keyOnly);
  return user instanceof Promise
    ? user.then((known) => admit(request, known, access, options.metadata))
    : admit(request, user, access, options.metadata);
}

/** The request runs as `user`, if the route allows it (a public route on the key-only prefix needs only the key). */
function admit(
  request: FastifyRequest,
  user: UserProfile,
  access: Access | undefined,
  metadata: MetadataRegistry,
): void {
  request.user = user;
  if (access?.kind === 'public' || request.is404) return;
  authorize(request, user, access, metadata);
}

/** What the route declared, for the authenticated user. */
function authorize(
  request: FastifyRequest,
  user: UserProfile,
  access: Access | undefined,
  metadata: MetadataRegistry,
): void {
  if (!access) throw errors.actionNotAllowed(request.method, request.routeOptions.url ?? request.url);
  if (access.kind === 'admin' && !user.isAdmin) throw errors.actionNotAllowed(request.method, 'the service');
  if (access.kind === 'objectStructure') {
    const name = (request.params as Record<string, string | undefined>).os ?? '';
    const structure = metadata.findObjectStructure(name);
    if (!structure) throw errors.unknownObjectStructure(name.toUpperCase());
    const right = typeof access.right === 'function' ? access.right(request) : access.right;
    if (!hasRight(user, structure.name, right) || (structure.adminOnly && !user.isAdmin))
      throw errors.notAuthorized(structure.name);
    request.objectStructure = structure;
  }
}

/**
 * Decided on the path the router matched (the route's pattern, or an unmatched URL's decoded path), not the raw URL:
 * `/maximo/ap%69/...` is the key-only route too (docs/security.md).
 */
function keyOnlyStrategy(options: AccessHookOptions, path: string): AuthStrategy | undefined {
  const keyOnly = options.keyOnly;
  if (!keyOnly) return undefined;
  return isUnder(path, keyOnly.prefix) ? keyOnly.strategy : undefined;
}

/** The first strategy whose credentials the request carries (a loop: no closure per request). */
function strategyOf(strategies: readonly AuthStrategy[], request: FastifyRequest): AuthStrategy | undefined {
  for (const strategy of strategies) if (strategy.applies(request)) return strategy;
  return undefined;
}

/**
 * The caller's profile. Written out instead of chained through `andThen`: on the path of nearly every request each
 * step returns a plain value, and no step allocates a continuation it would not call.
 */
function authenticate(
  request: FastifyRequest,
  reply: FastifyReply,
  options: AccessHookOptions,
  policy: SessionPolicy,
  only?: AuthStrategy,
): MaybePromise<UserProfile> {
  const strategy = only ?? strategyOf(options.strategies, request);
  if (!strategy) throw errors.notLoggedIn();
  const userid = strategy.authenticate(request);
  if (userid instanceof Promise)
    return userid.then((known) => profileOf(request, reply, options, policy, strategy, known));
  return profileOf(request, reply, options, policy, strategy, userid);
}

function profileOf(
  request: FastifyRequest,
  reply: FastifyReply,
  options: AccessHookOptions,
  policy: SessionPolicy,
  strategy: AuthStrategy,
  userid: string,
): MaybePromise<UserProfile> {
  const profile = options.auth.profile(userid);
  if (profile instanceof Promise)
    return profile.then((known) => admitted(request, reply, options, policy, strategy, known));
  return admitted(request, reply, options, policy, strategy, profile);
}

/** An active user, admitted by admin mode, in the session the route's policy gives it. */
function admitted(
  request: FastifyRequest,
  reply: FastifyReply,
  options: AccessHookOptions,
  policy: SessionPolicy,
  strategy: AuthStrategy,
  profile: UserProfile | undefined,
): MaybePromise<UserProfile> {
  if (!profile || profile.status !== 'ACTIVE') throw errors.notLoggedIn();
  if (strategy.kind === 'session') {
    const session = request.session;
    // A sealed cookie's first replay stores its session; its logout only ends it.
    if (session?.unreplayed !== undefined && policy !== 'none')
      return firstReplay(request, options, profile, session).then(() =>
        inSession(request, reply, options, profile),
      );
    return inSession(request, reply, options, profile);
  }
  options.admission.admitCaller(profile);
  // A key is silent unless it asks for a session, which it then gets on any route.
  if (strategy.kind === 'token' && strategy.wantsSession?.(request) !== true) return profile;
  const joined = joinSession(request, reply, options, profile, strategy.name, policy);
  return joined instanceof Promise ? joined.then(() => profile) : profile;
}

/** A request in the session its cookie names. */
function inSession(
  request: FastifyRequest,
  reply: FastifyReply,
  options: AccessHookOptions,
  profile: UserProfile,
): UserProfile {
  checkCsrf(request, request.session);
  const warning = options.admission.sessionWarning(profile);
  if (warning !== undefined) reply.header('warning', warning);
  return profile;
}

/**
 * The first replay of a sealed cookie, by itself: its session is stored (counted, admitted, within the per-user
 * bound) unless the user's credentials changed since it was issued or admin mode refuses it (BMXAA0021E, on which
 * clients log in again).
 */
async function firstReplay(
  request: FastifyRequest,
  options: AccessHookOptions,
  profile: UserProfile,
  session: SessionEntry,
): Promise<void> {
  const stored = await replayed(request, options, profile, session);
  if (!stored) throw errors.sessionNotValid();
  request.session = stored;
}

/** The stored session of a sealed cookie replayed by its user; undefined when it may not be stored. */
function replayed(
  request: FastifyRequest,
  options: AccessHookOptions,
  profile: UserProfile,
  session: SessionEntry,
): Promise<SessionEntry | undefined> | undefined {
  if (session.unreplayed?.credentialStamp !== profile.credentialStamp) return undefined;
  return options.sessions.materialise(session, request.ip);
}

/**
 * Cross-site request forgery: a browser sends its cookies with requests other sites make it send (SameSite=Lax stops
 * most, not all: other ports and subdomains of the same site, old browsers). The writes of sessions whose login asked
 * for a token (`csrf=1`, docs/compatibility.md, "CSRF") must echo it; another site cannot read it. The writes of the
 * other sessions that carry no token are refused when a browser says another origin made them, or sends them as a
 * form (`checkBrowserWrite`). Requests with credentials or keys in headers need none of this: a browser never adds
 * those.
 */
function checkCsrf(request: FastifyRequest, session: SessionEntry | null): void {
  if (!session || !WRITE_METHODS.has(request.method)) return;
  const sent = request.headers.csrftoken;
  if (typeof sent === 'string' && sameToken(sent, session.csrfToken)) return;
  if (session.csrfRequired) throw errors.csrfTokenInvalid();
  checkBrowserWrite(request);
}

/**
 * The session of a request that carries credentials, per the route's session policy. Without a session cookie on an
 * ordinary route (`reuse`), a sealed cookie for the answer and nothing else: no promise, no database (the
 * per-request credentials' fast path).
 */
function joinSession(
  request: FastifyRequest,
  reply: FastifyReply,
  options: AccessHookOptions,
  profile: UserProfile,
  scheme: string,
  policy: SessionPolicy,
): MaybePromise<void> {
  if (policy === 'reuse' && !hasSessionCookie(request)) {
    issueCookie(request, reply, options, profile, scheme, true);
    return;
  }
  return andThen(sessionOfRequest(request, options.sessions), (current) => {
    if (policy === 'none') {
      request.session = current ?? null;
      return;
    }
    if (policy === 'reuse') {
      const own = current?.userid === profile.userid ? current : undefined;
      if (own?.unreplayed === undefined) {
        if (own) request.session = own;
        else issueCookie(request, reply, options, profile, scheme);
        return;
      }
      // The cookie's first replay, with the credentials again: stored as by itself, or else a new cookie.
      const stored = replayed(request, options, profile, own);
      if (stored === undefined) return issueCookie(request, reply, options, profile, scheme);
      return stored.then((session) => {
        if (session) request.session = session;
        else issueCookie(request, reply, options, profile, scheme);
      });
    }
    const query = request.query as Record<string, string | undefined>;
    // A login opens a session of its own: never another client's, even the same user's from the same address
    // (docs/compatibility.md, "Sessions").
    return startSession(request, reply, options.sessions, options.cookies, {
      userid: profile.userid,
      scheme,
      csrfRequired: readFlag(query.csrf) === true,
      withToken: options.tokenCookie,
    }).then((session) => {
      request.session = session;
    });
  });
}

/**
 * The sealed cookies of an answer to per-request credentials, as a login's are sent (docs/compatibility.md,
 * "Sessions"): they carry the user, the issue time, the user's credential stamp, the scheme and the request's `lean`
 * and `csrf`; nothing is stored until a request replays them. `repeatable`: the request carried no session cookie,
 * so its connection's answers may repeat the cookie they were handed (src/auth/connection-cookies.ts).
 */
function issueCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  options: AccessHookOptions,
  profile: UserProfile,
  scheme: string,
  repeatable = false,
): void {
  const query = request.query as Record<string, string | undefined>;
  const issued = options.sessions.issue(
    {
      userid: profile.userid,
      credentialStamp: profile.credentialStamp,
      scheme,
      lean: readFlag(query.lean) ?? null,
      csrfRequired: readFlag(query.csrf) === true,
      withToken: options.tokenCookie,
    },
    repeatable ? { socket: request.raw.socket, address: clientAddress(request) } : undefined,
  );
  setSessionCookies(reply, issued, options.cookies);
}

/**
 * Who a connection's request comes from, to tell clients apart: behind a balancer that pools its connections, the
 * address it forwards (trusted for nothing else: a forged one only costs the sender a cookie of its own).
 */
function clientAddress(request: FastifyRequest): string {
  const forwarded = request.headers['x-forwarded-for'];
  return forwarded === undefined ? request.ip : `${request.ip} ${String(forwarded)}`;
}

export function hasRight(user: UserProfile, objectStructure: string, right: Right): boolean {
  return user.isAdmin || user.rights.get(objectStructure)?.[right] === true;
}
