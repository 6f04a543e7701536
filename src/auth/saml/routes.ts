import { createHash } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { originOf } from '../../audit/context.js';
import { sameOriginTarget } from '../federated/return-to.js';
import {
  admitSignInStart,
  clearStateCookie,
  readCookie,
  returnToPolicy,
  setStateCookie,
  signIn,
  type FederatedSignIn,
} from '../federated/sign-in.js';
import { samlLogoutRoutes } from './logout-routes.js';
import { AcsBody, LoginQuery } from './schemas.js';
import { REQUEST_VALIDITY_MS, type LoginStart, type SamlService } from './service.js';

/** Routes of the SAML sign-in, relative to the context root (docs/federated-login.md, "SAML"). */
export const SAML_LOGIN_PATH = '/saml/login';
export const SAML_ACS_PATH = '/saml/acs';
export const SAML_METADATA_PATH = '/saml/metadata';
export { SAML_LOGOUT_PATH, SAML_SLO_PATH } from './logout-routes.js';

/** The cookie naming the sign-in requests this browser started (the latest few: several tabs may sign in at once). */
export const SAML_REQUESTS_COOKIE = 'EAS_SAML_REQUESTS';
const REMEMBERED_REQUESTS = 4;
const REQUEST_ID = /^[A-Za-z_][\w.-]{0,127}$/;

/** The request ids the cookie names, in the order they were started. */
function requestsStarted(cookie: string | undefined): string[] {
  return (cookie ?? '').split('~').filter((id) => REQUEST_ID.test(id));
}

/** Largest ACS form: a signed response with attributes is a few kilobytes; some providers add certificates. */
export const ACS_BODY_LIMIT = 256 * 1024;

export interface SamlRoutesOptions {
  saml: SamlService;
  signIn: FederatedSignIn;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

const SUBMIT_SCRIPT = 'document.forms[0].submit()';
/**
 * The post form's policy: its one line of script (by hash), no other resource, never framed. The form may post to
 * the provider (form-action is left open: its address is the provider's).
 */
const POST_FORM_CSP =
  `default-src 'none'; script-src 'sha256-${createHash('sha256').update(SUBMIT_SCRIPT).digest('base64')}'; ` +
  "base-uri 'none'; frame-ancestors 'none'";

/**
 * The HTTP-POST binding of the request: a form the browser posts to the provider, submitted by a line of script, or
 * by its button (focused, so Enter sends it) where scripts do not run.
 */
function postForm(start: Extract<LoginStart, { binding: 'post' }>): string {
  const fields = Object.entries(start.fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Signing in</title></head><body>' +
    `<form method="post" action="${escapeHtml(start.action)}">${fields}` +
    '<p>Continue to the identity provider to sign in.</p><button type="submit" autofocus>Continue</button></form>' +
    `<script>${SUBMIT_SCRIPT}</script></body></html>`
  );
}

/**
 * SAML sign-in under the context root (docs/federated-login.md, "SAML"): `saml/login` starts it, `saml/acs` receives
 * the provider's response (HTTP-POST binding), `saml/metadata` describes this service provider. All public: the
 * browser has no session yet, and the response carries the proof.
 */
export async function samlRoutes(app: FastifyInstance, options: SamlRoutesOptions): Promise<void> {
  const { saml, signIn: context } = options;
  const { contextRoot } = context;
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: ACS_BODY_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  routes.get(
    SAML_LOGIN_PATH,
    { schema: { querystring: LoginQuery }, config: { access: { kind: 'public' } } },
    async (request, reply) => {
      // Only a page of this service's own origin; anything else returns to the sign-in page (an open redirect
      // otherwise).
      admitSignInStart(request, reply, context);
      const returnTo = sameOriginTarget(request.query.returnTo, returnToPolicy(request, contextRoot));
      const start = await saml.startLogin(returnTo, request.ip);
      // A request id is issued once: no cache may replay the answer to another browser.
      reply.header('cache-control', 'no-store');
      if (saml.bindsBrowser) {
        // The provider posts its response cross-site: only a SameSite=None cookie comes back with it.
        const started = [...requestsStarted(readCookie(request, SAML_REQUESTS_COOKIE)), start.requestId];
        setStateCookie(reply, context.cookies, {
          name: SAML_REQUESTS_COOKIE,
          value: started.slice(-REMEMBERED_REQUESTS).join('~'),
          maxAgeSeconds: REQUEST_VALIDITY_MS / 1000,
          sameSite: 'none',
        });
      }
      if (start.binding === 'redirect') return reply.code(302).header('location', start.location).send();
      return reply
        .code(200)
        .header('content-security-policy', POST_FORM_CSP)
        .type('text/html; charset=utf-8')
        .send(postForm(start));
    },
  );

  routes.post(
    SAML_ACS_PATH,
    { schema: { body: AcsBody }, config: { access: { kind: 'public' } } },
    async (request, reply) => {
      const started = saml.bindsBrowser
        ? requestsStarted(readCookie(request, SAML_REQUESTS_COOKIE))
        : undefined;
      await acceptAndSignIn(request, reply, { saml, context, started, response: request.body.SAMLResponse });
      if (started !== undefined) clearStateCookie(reply, context.cookies, SAML_REQUESTS_COOKIE);
      // RelayState comes back through the browser unsigned: checked again, and dropped when it is not same-origin.
      const returnTo = sameOriginTarget(request.body.RelayState, returnToPolicy(request, contextRoot));
      return reply.code(302).header('location', returnTo).send();
    },
  );

  routes.get(SAML_METADATA_PATH, { config: { access: { kind: 'public' } } }, async (_request, reply) =>
    reply.code(200).type('application/samlmetadata+xml; charset=utf-8').send(saml.metadata()),
  );

  samlLogoutRoutes(app, options);
}

/**
 * Signs the browser in with the provider's response to a request it started; a response refused (not valid, a user
 * the service does not know) is a failed login in the audit trail (docs/audit.md), then the refusal stands.
 */
async function acceptAndSignIn(
  request: FastifyRequest,
  reply: FastifyReply,
  {
    saml,
    context,
    started,
    response,
  }: { saml: SamlService; context: FederatedSignIn; started: string[] | undefined; response: string },
): Promise<void> {
  let name: string | undefined;
  try {
    const accepted = await saml.acceptResponse(response, started);
    name = accepted.identity;
    const userid = await context.users.userFor({
      scheme: 'SAML',
      name: accepted.identity,
      displayName: accepted.displayName,
      email: accepted.email,
    });
    // The session cookies first (clients take the first Set-Cookie), then the spent request cookie is cleared.
    await signIn(request, reply, context, {
      userid,
      scheme: 'SAML',
      name: accepted.identity,
      provider: accepted.provider,
    });
  } catch (error) {
    await context.logins.recordSignInFailure('SAML', request.ip, name, originOf(request));
    throw error;
  }
}
