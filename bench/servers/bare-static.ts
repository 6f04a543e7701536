// Baseline for sections that compare a cheap authenticated endpoint (session, apikey, getProperty) with the same
// answer served by a bare Fastify route: BENCH_ROUTE answers BENCH_BODY as application/json, nothing else.
import Fastify from 'fastify';
import { requiredEnv, serveForBenchmark } from './serve.js';

const route = requiredEnv('BENCH_ROUTE');
const body = requiredEnv('BENCH_BODY');
JSON.parse(body);
// Encoded once: the baseline carries nothing a hand-written route would not.
const payload = Buffer.from(body);

const app = Fastify({ logger: false });
app.get(route, async (_request, reply) => reply.header('content-type', 'application/json').send(payload));

await serveForBenchmark(app, async () => {});
