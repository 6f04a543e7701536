import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import { startSession, type CookiePolicy } from '../cookies.js';
import { LANDING_PAGE } from '../routes.js';
import type { AuthService } from '../service.js';
import type { SessionService } from '../sessions.js';

/** What the SAML routes need of federated sign-in: where a browser may be sent back to, and opening its session. */
export interface FederatedSignIn {
  /** The same-origin address to return to after sign-in: the one asked for when it is safe, else the default. */
  returnTarget(request: FastifyRequest, requested: string | undefined): string;
  /** Signs the user in (the FORM login's session cookies) and sends the browser to `returnTo`. */
  signIn(
    request: FastifyRequest,
    reply: FastifyReply,
    identity: string,
    returnTo: string,
  ): Promise<FastifyReply>;
}

export interface SessionSignInOptions {
  contextRoot: string;
  auth: AuthService;
  sessions: SessionService;
  cookies: CookiePolicy;
  scheme: string;
}

/**
 * A path on this server, not under another origin: one leading slash (`//host` and `/\host` are other hosts to
 * browsers), no control characters. Absolute addresses are refused rather than compared: the browser is on this
 * origin already, so a path is all a return address needs.
 */
export function isSameOriginPath(target: string): boolean {
  return (
    /^\/(?![/\\])/.test(target) &&
    !target.includes('\\') &&
    ![...target].some((character) => character.charCodeAt(0) < 0x20 || character.charCodeAt(0) === 0x7f) &&
    target.length <= 2048
  );
}

/**
 * Federated sign-in with the sessions of the FORM login: the identity is the user id (upper case, as user ids are
 * stored); a user that does not exist or is not active is refused.
 */
export function sessionSignIn(options: SessionSignInOptions): FederatedSignIn {
  const landing = `${options.contextRoot}${LANDING_PAGE}`;
  return {
    returnTarget: (_request, requested) =>
      requested !== undefined && isSameOriginPath(requested) ? requested : landing,
    async signIn(request, reply, identity, returnTo) {
      const userid = identity.toUpperCase();
      const profile = await options.auth.profile(userid);
      if (!profile || profile.status !== 'ACTIVE') throw errors.federatedUserUnknown(userid);
      await startSession(request, reply, options.sessions, options.cookies, {
        userid: profile.userid,
        scheme: options.scheme,
        csrfRequired: false,
        withToken: true,
      });
      return reply.code(302).header('location', returnTo).send();
    },
  };
}
