import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { originOf } from '../../audit/context.js';
import { OIDC_CALLBACK_PATH } from '../../config.js';
import { sameOriginTarget } from '../federated/return-to.js';
import {
  admitSignInStart,
  type FederatedSignIn,
  clearStateCookie,
  readCookie,
  returnToPolicy,
  setStateCookie,
  signIn,
  signOutLocally,
  SIGN_IN_PAGE,
} from '../federated/sign-in.js';
import { providerChannelRoutes } from './backchannel-routes.js';
import { CallbackQuery, LoginQuery } from './schemas.js';
import { SIGN_IN_STATE_SECONDS, type OidcRelyingParty } from './service.js';

/** Routes of the OpenID Connect sign-in, relative to the context root (docs/federated-login.md). */
export const OIDC_LOGIN_PATH = '/oidc/login';
export const OIDC_LOGOUT_PATH = '/oidc/logout';
export { OIDC_BACKCHANNEL_LOGOUT_PATH, OIDC_JWKS_PATH } from './backchannel-routes.js';
/** The cookie that holds the sealed pending sign-in until the callback. */
export const OIDC_STATE_COOKIE = 'EAS_OIDC_STATE';

export interface OidcRoutesOptions {
  relyingParty: OidcRelyingParty;
  signIn: FederatedSignIn;
}

/**
 * The browser's side of OpenID Connect: `login` sends it to the provider, `callback` signs it in and sends it to the
 * page it asked for, `logout` ends the local session and, when the provider offers it, its session there too.
 * Registered under the context root; public, since they are how a browser obtains a session.
 */
export async function oidcRoutes(app: FastifyInstance, options: OidcRoutesOptions): Promise<void> {
  const { relyingParty, signIn: context } = options;
  const { contextRoot, cookies } = context;
  // The sign-in page's sign-out form posts an empty form: bodies are not read here.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 16 * 1024 }, (_request, _body, done) =>
    done(null, undefined),
  );

  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    OIDC_LOGIN_PATH,
    { schema: { querystring: LoginQuery }, config: { access: { kind: 'public' } } },
    async (request, reply) => {
      admitSignInStart(request, reply, context);
      const returnTo = sameOriginTarget(request.query.returnTo, returnToPolicy(request, contextRoot));
      const { authorizationUrl, sealedState } = await relyingParty.begin(returnTo);
      setStateCookie(reply, cookies, {
        name: OIDC_STATE_COOKIE,
        value: sealedState,
        maxAgeSeconds: SIGN_IN_STATE_SECONDS,
      });
      return reply.code(302).header('cache-control', 'no-store').header('location', authorizationUrl).send();
    },
  );

  routes.get(
    OIDC_CALLBACK_PATH,
    { schema: { querystring: CallbackQuery }, config: { access: { kind: 'public' } } },
    async (request, reply) => {
      const rawQuery = request.raw.url?.split('?')[1] ?? '';
      let name: string | undefined;
      let completed: Awaited<ReturnType<typeof relyingParty.complete>>;
      try {
        completed = await relyingParty.complete(rawQuery, readCookie(request, OIDC_STATE_COOKIE));
        name = completed.identity.name;
        const userid = await context.users.userFor(completed.identity);
        // The session cookies first (clients take the first Set-Cookie), then the spent state cookie is cleared.
        await signIn(request, reply, context, {
          userid,
          scheme: 'OIDC',
          name,
          ...(completed.provider && { provider: completed.provider }),
        });
      } catch (error) {
        // A refused sign-in is a failed login in the audit trail (docs/audit.md).
        await context.logins.recordSignInFailure('OIDC', request.ip, name, originOf(request));
        throw error;
      }
      clearStateCookie(reply, cookies, OIDC_STATE_COOKIE);
      // Checked again as it is sent: the sealed state only carries what the start accepted (docs/federated-login.md,
      // "Return address").
      const returnTo = sameOriginTarget(completed.returnTo, returnToPolicy(request, contextRoot));
      return reply.code(302).header('cache-control', 'no-store').header('location', returnTo).send();
    },
  );

  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    await signOutLocally(request, reply, context, 'OIDC');
    const signInPage = `${contextRoot}${SIGN_IN_PAGE}`;
    const here = returnToPolicy(request, contextRoot).origins.at(-1)!;
    const atProvider = await relyingParty.endSessionUrl(`${here}${signInPage}`);
    return reply
      .code(302)
      .header('cache-control', 'no-store')
      .header('location', atProvider ?? signInPage)
      .send();
  };
  // Only from this service's pages (src/auth/browser-origin.ts): an image or another site's page ends nothing.
  const logoutConfig = { access: { kind: 'public' }, changesSession: true } as const;
  app.get(OIDC_LOGOUT_PATH, { config: logoutConfig }, logout);
  app.post(OIDC_LOGOUT_PATH, { config: logoutConfig }, logout);

  await providerChannelRoutes(app, options);
}
