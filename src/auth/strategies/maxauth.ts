import type { FastifyRequest } from 'fastify';
import { originOf } from '../../audit/context.js';
import type { LoginService } from '../login.js';
import type { AuthStrategy } from '../types.js';

/**
 * Native login: header `maxauth: base64(userid:password)` on any request (docs/compatibility.md). Per-request
 * credentials: verified once, then found in memory; a session only on the login routes.
 */
export function maxauthStrategy(logins: LoginService): AuthStrategy {
  return {
    name: 'maxauth',
    kind: 'login',
    applies: (request: FastifyRequest) => typeof request.headers.maxauth === 'string',
    authenticate: (request: FastifyRequest) =>
      logins.loginWithHeader(
        String(request.headers.maxauth).trim(),
        'MAXAUTH',
        request.ip,
        originOf(request),
      ),
  };
}
