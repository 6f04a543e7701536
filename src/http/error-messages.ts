import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errors } from '../errors.js';
import { sendJson } from './reply.js';

/**
 * `moreInfo.href` of every error object points here: `GET <root>/error/messages/<code>` answers the code and the
 * documentation page that explains it, so the link a client follows is never dead.
 */
export async function errorMessageRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/error/messages/:code',
    {
      schema: { params: Type.Object({ code: Type.String({ pattern: '^[A-Z]{3,5}[0-9]{4,5}[EIW]$' }) }) },
      config: { access: { kind: 'public' } },
    },
    async (request, reply) => {
      const { code } = request.params;
      if (!/^(BMXAA|EAS)/.test(code)) throw errors.routeNotFound('GET', request.url);
      return sendJson(reply, 200, {
        reasonCode: code,
        documentation: `docs/errors.md#${code.toLowerCase()}`,
      });
    },
  );
}
