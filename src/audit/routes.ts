import type { FastifyInstance } from 'fastify';
import { sendJson } from '../http/reply.js';
import { AuditQuery } from './schemas.js';
import type { AuditTrail } from './service.js';

export interface AuditRoutesOptions {
  audit: AuditTrail;
}

/**
 * The audit trail's verification for the console (docs/audit.md, "Verifying"): `GET <root>/audit/verify` seals what
 * is waiting, walks the chain and answers the report; 200 whether or not the chain holds (`ok` says), administrators
 * only. The records themselves are read through MXAPIAUDIT.
 */
export async function auditRoutes(app: FastifyInstance, options: AuditRoutesOptions): Promise<void> {
  const { audit } = options;
  app.get(
    '/audit/verify',
    { schema: { querystring: AuditQuery }, config: { access: { kind: 'admin' } } },
    async (_request, reply) => sendJson(reply, 200, await audit.verify()),
  );
}
