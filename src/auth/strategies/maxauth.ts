import type { FastifyRequest } from 'fastify';
import { decodeCredentials, type LoginService } from '../login.js';
import type { AuthStrategy } from '../types.js';

/** Native login: header `maxauth: base64(userid:password)` on any request (docs/compatibility.md). */
export function maxauthStrategy(logins: LoginService): AuthStrategy {
  return {
    name: 'maxauth',
    kind: 'login',
    applies: (request: FastifyRequest) => typeof request.headers.maxauth === 'string',
    authenticate: (request: FastifyRequest) =>
      logins.login({
        ...decodeCredentials(String(request.headers.maxauth)),
        scheme: 'MAXAUTH',
        address: request.ip,
      }),
  };
}
