import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionOfRequest } from '../auth/cookies.js';
import type { SignInProvider } from '../auth/federated/page.js';
import type { AuthService } from '../auth/service.js';
import type { SessionService } from '../auth/sessions.js';
import { errors } from '../errors.js';
import { publicUriOf } from '../http/links.js';
import { PACKAGE_VERSION } from '../system/release.js';
import { loadConsoleAssets, type ConsoleAsset } from './assets.js';
import { CONSOLE_CSP, renderShell, type ConsoleModel } from './shell.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A page a browser opens by address: a browser (`Accept: text/html`) without a session is sent to the console's
     * sign-in instead of the 401 error object, which API clients still get.
     */
    browserSignIn?: boolean;
  }
}

export interface ConsoleRoutesOptions {
  contextRoot: string;
  /** OIDC or SAML: the sign-in page offers the providers' buttons instead of the FORM login. */
  federated: boolean;
  providers: readonly SignInProvider[];
  sessions: SessionService;
  auth: AuthService;
  /** The built files; by default read from the build (tests pass their own). */
  assets?: ReadonlyMap<string, ConsoleAsset>;
}

/** Below the context root. */
export const CONSOLE_PATH = '/console';
/** The console's page addresses below CONSOLE_PATH (docs/console.md): each answers the same shell. */
export const CONSOLE_PAGES: readonly string[] = [
  'signin',
  'apikeys',
  'properties',
  'definitions',
  'packages',
  'audit',
  'adminmode',
  'sessions',
];

const PageParams = Type.Object({ page: Type.String({ maxLength: 64 }) });
const AssetParams = Type.Object({ file: Type.String({ maxLength: 64 }) });

/** A browser asking for a page, as opposed to an API client asking for JSON (decided by `Accept`). */
export function wantsPage(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.includes('text/html');
}

/**
 * The path of the context root as the browser reaches it: the path of `x-public-uri` (the API root's public
 * address, docs/compatibility.md) without its `/oslc` or `/api`, else of the configured public address, else the
 * context root itself.
 */
export function browserBase(request: FastifyRequest, contextRoot: string): string {
  const address = publicUriOf(request) ?? request.server.publicBase?.();
  if (address === undefined) return contextRoot;
  try {
    return new URL(address).pathname.replace(/\/+$/, '').replace(/\/(oslc|api)$/, '');
  } catch {
    return contextRoot;
  }
}

/** The console's sign-in page, returning to where the browser was (as the browser reaches it). */
export function signInLocation(request: FastifyRequest, contextRoot: string): string {
  const base = browserBase(request, contextRoot);
  const path = request.url.startsWith(contextRoot) ? request.url.slice(contextRoot.length) : request.url;
  return `${base}${CONSOLE_PATH}/signin?returnTo=${encodeURIComponent(`${base}${path}`)}`;
}

/**
 * The console (docs/console.md): the app shell at every page address, its built files, and the addresses that
 * lead a browser to it (the context root, and `/`). All public: they hold no data, and the shell names the
 * signed-in user only to that user's own browser. Every data call the console makes goes to the API, which
 * decides access as for any client.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const { contextRoot } = options;
  const assets = options.assets ?? loadConsoleAssets();
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const open = { config: { access: { kind: 'public' as const } } };
  const consoleRoot = `${contextRoot}${CONSOLE_PATH}`;

  const shell = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!assets.has('app.js')) throw errors.consoleNotBuilt();
    const html = renderShell(await modelOf(request, options));
    return reply
      .code(200)
      .header('cache-control', 'no-store')
      .header('content-security-policy', CONSOLE_CSP)
      .header('referrer-policy', 'same-origin')
      .type('text/html; charset=utf-8')
      .send(html);
  };
  app.get(consoleRoot, open, shell);
  routes.get(`${consoleRoot}/:page`, { ...open, schema: { params: PageParams } }, (request, reply) => {
    if (!CONSOLE_PAGES.includes(request.params.page))
      throw errors.routeNotFound(request.method, request.url.split('?')[0] ?? '');
    return shell(request, reply);
  });

  routes.get(
    `${consoleRoot}/assets/:file`,
    { ...open, schema: { params: AssetParams } },
    async (request, reply) => {
      const asset = assets.get(request.params.file);
      if (!asset) throw errors.routeNotFound(request.method, request.url.split('?')[0] ?? '');
      reply.header('cache-control', 'no-cache').header('etag', asset.etag);
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.code(200).type(asset.contentType).send(asset.body);
    },
  );

  // The address the start banner prints, and the server's root: a browser goes to the console, an API client
  // keeps the 404 it had (nothing is served there).
  const toConsole = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!wantsPage(request)) throw errors.routeNotFound(request.method, request.url.split('?')[0] ?? '');
    return reply.redirect(`${browserBase(request, contextRoot)}${CONSOLE_PATH}/`, 302);
  };
  app.get(contextRoot === '' ? '/' : contextRoot, open, toConsole);
  if (contextRoot !== '') app.get('/', open, toConsole);
}

async function modelOf(request: FastifyRequest, options: ConsoleRoutesOptions): Promise<ConsoleModel> {
  const session = await sessionOfRequest(request, options.sessions);
  const profile = session ? await options.auth.profile(session.userid) : undefined;
  const signedIn = session && profile?.status === 'ACTIVE' ? { session, profile } : undefined;
  return {
    base: browserBase(request, options.contextRoot),
    version: PACKAGE_VERSION,
    signIn: options.federated ? 'federated' : 'form',
    providers: options.providers.map(({ name, loginPath, logoutPath }) => ({ name, loginPath, logoutPath })),
    user: signedIn
      ? {
          userid: signedIn.profile.userid,
          displayname: signedIn.profile.displayname,
          isAdmin: signedIn.profile.isAdmin,
        }
      : null,
    csrfToken: signedIn?.session.csrfToken ?? null,
  };
}
