import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errors, isReasonCode } from '../errors.js';
import { sendJson } from './reply.js';

/**
 * `moreInfo.href` of every error object points here: `GET <root>/error/messages/<code>` answers the code and the
 * documentation page that explains it, so the link a client follows is never dead; a code the service does not
 * send answers 404.
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
      // Only the codes this service sends have a page: any other is a link no error object carries.
      if (!isReasonCode(code)) throw errors.routeNotFound('GET', request.url);
      return sendJson(reply, 200, {
        reasonCode: code,
        documentation: `docs/errors.md#${code.toLowerCase()}`,
      });
    },
  );
}
