import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sessionOfRequest } from '../cookies.js';
import { endProviderSessions, providerSessionOf } from '../federated/provider-sessions.js';
import { signOutLocally, SIGN_IN_PAGE, type FederatedSignIn } from '../federated/sign-in.js';
import { acceptLogoutPost, acceptLogoutRedirect, logoutRequestUrl, type LogoutMessage } from './logout.js';
import { SloBody, SloQuery } from './schemas.js';
import type { SamlService } from './service.js';

export const SAML_LOGOUT_PATH = '/saml/logout';
/** The single logout service: the provider's LogoutRequest and LogoutResponse (docs/federated-login.md). */
export const SAML_SLO_PATH = '/saml/slo';

/**
 * Logout under the context root (docs/federated-login.md, "Single logout"): `saml/logout` for the browser, `saml/slo`
 * for the provider's messages. Registered by samlRoutes, in its scope (its form parser reads the POST binding).
 */
export function samlLogoutRoutes(
  app: FastifyInstance,
  options: { saml: SamlService; signIn: FederatedSignIn },
): void {
  const { saml, signIn: context } = options;
  const { contextRoot } = context;
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  // Ends the session here, then at the provider (single logout) when it has a logout service and opened this session.
  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    const signInPage = `${contextRoot}${SIGN_IN_PAGE}`;
    const session = await sessionOfRequest(request, context.sessions);
    // Read before the session ends: its provider record goes with it.
    const provider = session && (await providerSessionOf(context.db, session.id));
    await signOutLocally(request, reply, context, 'SAML');
    const location = (provider && (await logoutRequestUrl(saml, provider, signInPage))) ?? signInPage;
    return reply.code(302).header('cache-control', 'no-store').header('location', location).send();
  };
  // Only from this service's pages (src/auth/browser-origin.ts): an image or another site's page ends nothing.
  const logoutConfig = { access: { kind: 'public' }, changesSession: true } as const;
  app.get(SAML_LOGOUT_PATH, { config: logoutConfig }, logout);
  app.post(SAML_LOGOUT_PATH, { config: logoutConfig }, logout);

  /**
   * The provider's answer to a logout started here lands on the sign-in page; its request ends the sessions it names
   * on every process before the signed answer goes back.
   */
  const answerLogout = async (
    request: FastifyRequest,
    reply: FastifyReply,
    message: LogoutMessage,
    relayState: string | undefined,
  ) => {
    reply.header('cache-control', 'no-store');
    if (message.kind === 'response') {
      return reply.code(302).header('location', `${contextRoot}${SIGN_IN_PAGE}`).send();
    }
    const ended = await endProviderSessions(context.db, context.sessions, 'SAML', {
      subject: message.subject,
      providerSession: message.providerSession,
    });
    for (const userid of ended) context.logins.recordLogout(userid, 'SAML', request.ip);
    return reply
      .code(302)
      .header('location', await message.answer(relayState))
      .send();
  };
  routes.get(
    SAML_SLO_PATH,
    { schema: { querystring: SloQuery }, config: { access: { kind: 'public' } } },
    async (request, reply) => {
      const raw = request.raw.url ?? '';
      const rawQuery = raw.includes('?') ? raw.slice(raw.indexOf('?') + 1) : '';
      const message = await acceptLogoutRedirect(saml, request.query, rawQuery);
      return answerLogout(request, reply, message, request.query.RelayState);
    },
  );
  routes.post(
    SAML_SLO_PATH,
    { schema: { body: SloBody }, config: { access: { kind: 'public' } } },
    async (request, reply) => {
      const message = await acceptLogoutPost(saml, request.body);
      return answerLogout(request, reply, message, request.body.RelayState);
    },
  );
}
