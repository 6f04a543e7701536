import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { originOf } from '../audit/context.js';
import { sendJson } from '../http/reply.js';
import { formatDate } from '../oslc/values.js';
import { SessionParams } from './schemas.js';
import type { ActiveSession, ActiveSessionService } from './service.js';

export interface ActiveSessionRoutesOptions {
  activeSessions: ActiveSessionService;
}

function sessionJson(session: ActiveSession): Record<string, unknown> {
  return {
    sessionid: session.maxsessionid,
    userid: session.userid,
    scheme: session.scheme,
    clientaddr: session.clientaddr,
    logindate: formatDate(session.logindate),
    lastactive: formatDate(session.lastactive),
    expires: formatDate(session.expires),
    current: session.current,
  };
}

/**
 * `GET <root>/sessions` lists the live sessions of every process; `DELETE <root>/sessions/<id>` ends one everywhere
 * (docs/console.md, "Sessions"). Administrators only. This service's own: the deployed systems show sessions in
 * an application, not through the REST API.
 */
export async function activeSessionRoutes(
  app: FastifyInstance,
  options: ActiveSessionRoutesOptions,
): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const { activeSessions } = options;
  const admin = { access: { kind: 'admin' } } as const;

  routes.get('/sessions', { config: admin }, async (request, reply) => {
    const sessions = await activeSessions.list(request.session?.id);
    return sendJson(reply, 200, { member: sessions.map(sessionJson) });
  });

  routes.delete(
    '/sessions/:sessionid',
    { schema: { params: SessionParams }, config: admin },
    async (request, reply) => {
      await activeSessions.end(request.params.sessionid, originOf(request));
      return reply.code(204).send();
    },
  );
}
