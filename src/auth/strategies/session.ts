import type { FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import { hasSessionCookie, sessionOfRequest } from '../cookies.js';
import type { SessionService } from '../sessions.js';
import type { AuthStrategy } from '../types.js';

/**
 * A session cookie (`JSESSIONID`) or the token cookie (`LtpaToken2`) of a login. A cookie that names no live session
 * (expired, logged out, unknown) is BMXAA0021E, on which clients log in again (maximo-notes §10.4).
 */
export function sessionStrategy(sessions: SessionService): AuthStrategy {
  return {
    name: 'session',
    kind: 'session',
    applies: hasSessionCookie,
    async authenticate(request: FastifyRequest): Promise<string> {
      const session = await sessionOfRequest(request, sessions);
      if (!session) throw errors.sessionNotValid();
      request.session = session;
      return session.userid;
    },
  };
}
