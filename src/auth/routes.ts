import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { originOf } from '../audit/context.js';
import type { AuthMode } from '../config.js';
import { isMaximoError, REASONS } from '../errors.js';
import { linksFor, type ApiRoot } from '../http/links.js';
import { readFlag } from '../http/query-string.js';
import { sendJson } from '../http/reply.js';
import { forgiveContentType } from '../http/wire.js';
import { clearSessionCookies, sessionOfRequest, startSession, type CookiePolicy } from './cookies.js';
import type { LoginService } from './login.js';
import type { SessionService } from './sessions.js';
import type { UserProfile } from './types.js';
import { MAXUPG } from '../system/release.js';
import { browserBase, CONSOLE_PATH, wantsPage } from '../console/routes.js';

/** Where the login form sends browsers, relative to the context root (clients spot failure by `loginerror.jsp`). */
export const LANDING_PAGE = '/webclient/login/landing.jsp';
export const LOGIN_ERROR_PAGE = '/webclient/login/loginerror.jsp';

export interface AuthSettings {
  mode: AuthMode;
  idleMinutes: number;
  maxMinutes: number;
  serverName: string;
  contextRoot: string;
}

export interface AuthRoutesOptions {
  root: ApiRoot;
  settings: AuthSettings;
  sessions: SessionService;
  logins: LoginService;
  cookies: CookiePolicy;
}

/** The login answer (docs/compatibility.md, "The contract in brief"): timeouts in seconds. */
export function loginInfo(settings: AuthSettings): Record<string, unknown> {
  return {
    appserversecurity: settings.mode !== 'native',
    inactivetimeout: Math.round(settings.idleMinutes * 60),
    maxupg: MAXUPG,
    sessiontimeout: Math.round(settings.maxMinutes * 60),
  };
}

/** The profile fields clients read (docs/compatibility.md); absent values are left out. */
export function whoamiJson(user: UserProfile): Record<string, unknown> {
  const body: Record<string, unknown> = {
    userid: user.userid,
    loginUserName: user.userid,
    // The keys the deployed systems' whoami also carries (docs/compatibility.md, "whoami").
    loginID: user.loginid ?? user.userid,
    userName: user.userid,
    langcode: 'EN',
    personid: user.personid,
  };
  if (user.displayname !== null) {
    body.displayname = user.displayname;
    body.displayName = user.displayname;
  }
  if (user.defaultSite !== null) {
    body.defaultSite = user.defaultSite;
    body.insertSite = user.defaultSite;
  }
  if (user.defaultOrg !== null) {
    body.defaultOrg = user.defaultOrg;
    body.insertOrg = user.defaultOrg;
  }
  body.groups = user.groups;
  return body;
}

/** Login, logout, whoami and the API home, on one API root (/oslc or /api). */
export async function authRoutes(app: FastifyInstance, options: AuthRoutesOptions): Promise<void> {
  const { settings, sessions, logins, cookies } = options;
  // Login and logout read nothing from a body: any content type, and none, is accepted (clients send form, JSON and
  // empty bodies alike; docs/compatibility.md, "Content types").
  app.removeAllContentTypeParsers();
  app.addHook('preParsing', forgiveContentType);
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 16 * 1024 }, (_request, _body, done) =>
    done(null, undefined),
  );

  // Authenticated by the access hook like any call; a login with credentials opens a new session (`session: new`).
  app.post(
    '/login',
    { config: { access: { kind: 'user' }, session: 'new' } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const query = request.query as Record<string, string | undefined>;
      if (readFlag(query.csrf) === true && request.session)
        reply.header('csrftoken', request.session.csrfToken);
      return sendJson(reply, 200, loginInfo(settings));
    },
  );

  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = request.session;
    if (session) {
      await sessions.end(session);
      logins.recordLogout(session.userid, 'SESSION', request.ip);
    }
    clearSessionCookies(reply, cookies);
    return sendJson(reply, 200, { appserversecurity: settings.mode !== 'native' });
  };
  // A browser logs out only from this service's pages: never for an image or a page of another origin.
  const logoutConfig = { access: { kind: 'user' }, session: 'none', changesSession: true } as const;
  app.post('/logout', { config: logoutConfig }, logout);
  app.get('/logout', { config: logoutConfig }, logout);

  app.get('/whoami', { config: { access: { kind: 'user' } } }, async (request, reply) =>
    sendJson(reply, 200, whoamiJson(request.user!)),
  );

  // The API home (docs/compatibility.md): links to what this service serves, and the server's identity.
  // Clients log in here too (the IBM Java client: `GET /oslc?lean=1` with credentials, which needs the cookie: the
  // answer's sealed one, as every answer to credentials carries).
  app.get('/', { config: { access: { kind: 'user' } } }, async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const links = linksFor(request, settings.contextRoot, options.root, readFlag(query.relativeuri) === true);
    return sendJson(reply, 200, {
      href: links.api,
      whoami: { href: `${links.api}/whoami` },
      // The service endpoints (docs/compatibility.md, "Service endpoints").
      systeminfo: { href: `${links.api}/systeminfo` },
      installedProducts: { href: `${links.api}/products` },
      serverMembers: { href: `${links.api}/members` },
      license: { href: `${links.api}/license` },
      apimeta: { href: `${links.api}/apimeta` },
      ping: { href: `${links.api}/ping` },
      thisserver: settings.serverName,
      maxupg: MAXUPG,
      date: new Date().toISOString(),
      language: 'EN',
    });
  });
}

/** Largest FORM login body: two short fields. */
export const FORM_BODY_LIMIT = 16 * 1024;

export interface FormLoginOptions {
  settings: AuthSettings;
  sessions: SessionService;
  logins: LoginService;
  cookies: CookiePolicy;
}

/** First value of each field of an `application/x-www-form-urlencoded` body (`+` and `%xx` decoded). */
function parseForm(body: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(body)) if (!(name in fields)) fields[name] = value;
  return fields;
}

function formField(body: unknown, name: string): string {
  const value =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}

/**
 * FORM login (docs/compatibility.md): `POST j_security_check` with `j_username` and `j_password`. Success answers
 * 302 to the landing page with the session cookie first and the token cookie second; failure answers browsers with a
 * 302 to the error page and other clients with the 401 error object; never a session.
 */
export async function formLoginRoutes(app: FastifyInstance, options: FormLoginOptions): Promise<void> {
  const { settings, sessions, logins, cookies } = options;
  // The fields are read as a form whatever the content type says, and an empty body has none.
  app.removeAllContentTypeParsers();
  app.addHook('preParsing', forgiveContentType);
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) =>
    done(null, parseForm(String(body))),
  );

  // A page of another origin must not sign the browser in as someone else (login forgery), nor end its session.
  const config = { access: { kind: 'public' }, changesSession: true } as const;
  app.post('/j_security_check', { config }, async (request, reply) => {
    const browser = (request.headers.accept ?? '').includes('text/html');
    try {
      const userid = await logins.login({
        login: formField(request.body, 'j_username'),
        password: formField(request.body, 'j_password'),
        scheme: 'FORM',
        address: request.ip,
        origin: originOf(request),
      });
      const session = await startSession(request, reply, sessions, cookies, {
        userid,
        scheme: 'FORM',
        // As for every scheme, the session's writes need the token when the login asked for it (csrf=1); clients
        // that replay the FORM login's cookies and never read the token must be able to write.
        csrfRequired: readFlag((request.query as Record<string, string | undefined>).csrf) === true,
        withToken: true,
      });
      reply.header('csrftoken', session.csrfToken);
      return reply.code(302).header('location', `${settings.contextRoot}${LANDING_PAGE}`).send();
    } catch (error) {
      if (browser && isMaximoError(error) && error.reasonCode === 'BMXAA7901E') {
        return reply.code(302).header('location', `${settings.contextRoot}${LOGIN_ERROR_PAGE}`).send();
      }
      throw error;
    }
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

function page(title: string, text: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
}

/** The pages the login form redirects browsers to; public, as a browser may follow the redirect without cookies. */
export async function loginPageRoutes(
  app: FastifyInstance,
  options: { sessions: SessionService; contextRoot: string },
): Promise<void> {
  app.get(LANDING_PAGE, { config: { access: { kind: 'public' } } }, async (request, reply) => {
    const session = await sessionOfRequest(request, options.sessions);
    const consoleHome = `${browserBase(request, options.contextRoot)}${CONSOLE_PATH}/`;
    // A browser without a session goes to the console's sign-in, which returns it to the console.
    if (!session && wantsPage(request))
      return reply.redirect(`${consoleHome}signin?returnTo=${encodeURIComponent(consoleHome)}`, 302);
    const text = session
      ? `You are logged in as ${escapeHtml(session.userid)}. <a href="${escapeHtml(consoleHome)}">Open the console</a>.`
      : 'You are not logged in.';
    return reply.code(200).type('text/html; charset=utf-8').send(page('Enterprise Asset Service', text));
  });
  app.get(LOGIN_ERROR_PAGE, { config: { access: { kind: 'public' } } }, async (_request, reply) =>
    reply
      .code(200)
      .type('text/html; charset=utf-8')
      .send(page('Login failed', `BMXAA7901E - ${REASONS.BMXAA7901E.text}`)),
  );
}
