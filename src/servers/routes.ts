import type { FastifyInstance } from 'fastify';
import { sendJson } from '../http/reply.js';
import type { ServerProcessService } from './service.js';

export interface ServerRoutesOptions {
  servers: ServerProcessService;
}

/**
 * `GET <root>/servers`: the server processes sharing the database and their acknowledgements of property values
 * (docs/console.md, "Overview"). Administrators only, as the registry reads it summarizes.
 */
export async function serverRoutes(app: FastifyInstance, options: ServerRoutesOptions): Promise<void> {
  app.get('/servers', { config: { access: { kind: 'admin' } } }, async (_request, reply) =>
    sendJson(reply, 200, { member: await options.servers.list() }),
  );
}
