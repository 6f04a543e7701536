import type { FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import { hasSessionCookie, sessionOfRequest } from '../cookies.js';
import type { SessionEntry, SessionService } from '../sessions.js';
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
    // Without `andThen`: a cached session (nearly every request) allocates no continuation.
    authenticate: (request: FastifyRequest) => {
      const found = sessionOfRequest(request, sessions);
      return found instanceof Promise
        ? found.then((session) => sessionUser(request, session))
        : sessionUser(request, found);
    },
  };
}

function sessionUser(request: FastifyRequest, session: SessionEntry | undefined): string {
  if (!session) throw errors.sessionNotValid();
  request.session = session;
  return session.userid;
}
