import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../errors.js';
import { spendLogoutMessage } from '../federated/logout-replay.js';
import { endProviderSessions } from '../federated/provider-sessions.js';
import type { FederatedSignIn } from '../federated/sign-in.js';
import { BackChannelLogoutBody } from './schemas.js';
import type { OidcRelyingParty } from './service.js';

/** Where the provider posts logout tokens (register it as the client's `backchannel_logout_uri`). */
export const OIDC_BACKCHANNEL_LOGOUT_PATH = '/oidc/backchannel-logout';
/** The client's public key of `private_key_jwt` (register it as the client's `jwks_uri`). */
export const OIDC_JWKS_PATH = '/oidc/jwks';
/** Largest logout-token form: a signed JWT of a few hundred bytes. */
const LOGOUT_TOKEN_BODY_LIMIT = 16 * 1024;

/**
 * What the provider itself calls (docs/federated-login.md, "Back-channel logout (OIDC)", "Client authentication"):
 * the back-channel logout and this client's public key. Public: the logout token carries the proof.
 */
export async function providerChannelRoutes(
  app: FastifyInstance,
  options: { relyingParty: OidcRelyingParty; signIn: FederatedSignIn },
): Promise<void> {
  const { relyingParty, signIn: context } = options;
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(OIDC_JWKS_PATH, { config: { access: { kind: 'public' } } }, async (_request, reply) => {
    const keys = await relyingParty.publicKeys();
    if (!keys) return reply.callNotFound();
    return reply.code(200).type('application/jwk-set+json').send(keys);
  });

  // Its own scope: the only route here that reads a body (the provider's form with the logout token).
  await app.register(async (backChannel) => {
    backChannel.removeAllContentTypeParsers();
    backChannel.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: LOGOUT_TOKEN_BODY_LIMIT },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    backChannel
      .withTypeProvider<TypeBoxTypeProvider>()
      .post(
        OIDC_BACKCHANNEL_LOGOUT_PATH,
        { schema: { body: BackChannelLogoutBody }, config: { access: { kind: 'public' } } },
        async (request, reply) => {
          const named = await relyingParty.logoutSubject(request.body.logout_token);
          // Each token once, on every process: a replay would end sessions opened since (docs/federated-login.md,
          // "Replay of logout messages").
          const use = await spendLogoutMessage(
            context.db,
            { scheme: 'OIDC', issuer: named.issuer, messageId: named.tokenId, expires: named.acceptedUntil },
            new Date(),
          );
          if (use === 'replayed') throw errors.logoutTokenRefused('it was used already');
          if (use === 'unrememberable') throw errors.logoutTokenRefused('its jti or issuer is too long');
          const ended = await endProviderSessions(context.db, context.sessions, 'OIDC', named);
          for (const userid of ended) context.logins.recordLogout(userid, 'OIDC', request.ip);
          // Back-Channel Logout 1.0, 2.8: 200 once the sessions have ended everywhere, never cached.
          return reply.code(200).header('cache-control', 'no-store').send();
        },
      );
  });
}
