import type { FastifyRequest } from 'fastify';
import { originOf } from '../../audit/context.js';
import type { LoginService } from '../login.js';
import type { AuthStrategy } from '../types.js';

const BASIC = /^basic\s+(\S+)\s*$/i;

/**
 * BASIC: `Authorization: Basic base64(userid:password)` on any request. The security mode decides who checks the
 * password (LoginService): the database in `native` mode, the LDAP directory in `appserver` mode. Per-request
 * credentials, like `maxauth`: verified once, then found in memory.
 */
export function basicStrategy(logins: LoginService): AuthStrategy {
  return {
    name: 'basic',
    kind: 'login',
    applies: (request: FastifyRequest) => BASIC.test(request.headers.authorization ?? ''),
    authenticate: (request: FastifyRequest) =>
      logins.loginWithHeader(
        BASIC.exec(request.headers.authorization ?? '')?.[1] ?? '',
        'BASIC',
        request.ip,
        originOf(request),
      ),
  };
}
