import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ApiKeyService } from '../../apikeys/service.js';
import { sessionOfRequest } from '../cookies.js';
import type { AuthService } from '../service.js';
import type { SessionService } from '../sessions.js';
import { renderSignInPage, type SignInProvider } from './page.js';
import { SIGN_IN_PAGE } from './sign-in.js';

export interface SignInPageOptions {
  contextRoot: string;
  providers: readonly SignInProvider[];
  sessions: SessionService;
  auth: AuthService;
  apiKeys: ApiKeyService;
}

/**
 * The sign-in page (docs/federated-login.md): public, since it is where a browser without a session starts; with a
 * session it shows the user's own API key. Server-rendered, no external assets: its only script and style are
 * inline, admitted by a per-response nonce.
 */
export async function signInPageRoutes(app: FastifyInstance, options: SignInPageOptions): Promise<void> {
  const { contextRoot, providers, sessions, auth, apiKeys } = options;
  app.get(SIGN_IN_PAGE, { config: { access: { kind: 'public' } } }, async (request, reply) => {
    const session = await sessionOfRequest(request, sessions);
    const profile = session ? await auth.profile(session.userid) : undefined;
    const active = session && profile?.status === 'ACTIVE' ? { session, profile } : undefined;
    const nonce = randomBytes(16).toString('base64');
    const html = renderSignInPage({
      contextRoot,
      providers,
      pagePath: `${contextRoot}${SIGN_IN_PAGE}`,
      nonce,
      signedIn: active && {
        userid: active.profile.userid,
        displayname: active.profile.displayname,
        csrfToken: active.session.csrfToken,
        key: await apiKeys.describeOwn(active.profile.userid),
      },
    });
    return reply
      .code(200)
      .header('cache-control', 'no-store')
      .header(
        'content-security-policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; ` +
          "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      )
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(html);
  });
}
