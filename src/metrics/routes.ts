import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './service.js';

export interface MetricsRoutesOptions {
  contextRoot: string;
  metrics: Metrics;
}

/** `GET <context root>/metrics`, administrators only (docs/operations.md, "Metrics"). */
export async function metricsRoutes(app: FastifyInstance, options: MetricsRoutesOptions): Promise<void> {
  const { contextRoot, metrics } = options;
  app.get(
    `${contextRoot}/metrics`,
    { config: { access: { kind: 'admin' }, browserSignIn: true } },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()),
  );
}

export interface MetricsListenerOptions {
  host: string;
  port: number;
  contextRoot: string;
}

/**
 * The metrics on a port of their own (`EAS_METRICS_PORT`), without login: for a scraper on a network the API's
 * clients do not reach. Answers `GET /metrics` and `GET <context root>/metrics`, nothing else.
 */
export async function startMetricsListener(
  metrics: Metrics,
  options: MetricsListenerOptions,
): Promise<Server> {
  const paths = new Set(['/metrics', `${options.contextRoot}/metrics`]);
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0] ?? '';
    if (request.method !== 'GET' || !paths.has(path)) {
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    metrics.render().then(
      (text) => response.writeHead(200, { 'Content-Type': metrics.contentType }).end(text),
      () => response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
