import type { FastifyInstance } from 'fastify';
import { sendJson } from '../http/reply.js';
import { RETRY_AFTER_SECONDS } from '../http/retry-after.js';
import type { HealthService } from './service.js';

export interface HealthRoutesOptions {
  health: HealthService;
}

/**
 * `<context root>/health/live` and `/health/ready` for load balancers and orchestrators, without credentials
 * (docs/operations.md, "Health checks"): the MicroProfile Health answers of the application servers Maximo runs on.
 */
export async function healthRoutes(app: FastifyInstance, options: HealthRoutesOptions): Promise<void> {
  const { health } = options;
  const access = { access: { kind: 'public' as const } };
  app.get('/health/live', { config: access }, async (_request, reply) =>
    sendJson(reply, 200, { status: 'UP', checks: [] }),
  );
  app.get('/health/ready', { config: access }, async (_request, reply) => {
    const readiness = await health.readiness();
    if (readiness.status === 'UP') return sendJson(reply, 200, readiness);
    reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    return sendJson(reply, 503, readiness);
  });
}
