import type { FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import { hasSessionCookie, sessionOfRequest } from '../cookies.js';
import type { SessionService } from '../sessions.js';
import { andThen } from '../../util/maybe-promise.js';
import type { AuthStrategy } from '../types.js';

/**
 * A session cookie (`JSESSIONID`) or the token cookie (`LtpaToken2`) of a login. A cookie that names no live session
 * (expired, logged out, unknown) is BMXAA0021E, on which clients log in again (docs/errors.md).
 */
export function sessionStrategy(sessions: SessionService): AuthStrategy {
  return {
    name: 'session',
    kind: 'session',
    applies: hasSessionCookie,
    authenticate: (request: FastifyRequest) =>
      andThen(sessionOfRequest(request, sessions), (session) => {
        if (!session) throw errors.sessionNotValid();
        request.session = session;
        return session.userid;
      }),
  };
}
