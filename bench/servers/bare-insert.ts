// Baseline of the `create` section: the same POST answered by a bare Fastify route that inserts the asset row with
// one plain INSERT through a pg Pool: no metadata, validation, defaults, status history, access check or event.
import Fastify from 'fastify';
import pg from 'pg';
import { requiredEnv, serveForBenchmark } from './serve.js';

const schema = requiredEnv('BENCH_SCHEMA');
// Same pool size as the service's default.
const pool = new pg.Pool({
  connectionString: requiredEnv('BENCH_DATABASE_URL'),
  max: 10,
  options: `-c search_path=${schema}`,
});

interface AssetBody {
  assetnum: string;
  siteid: string;
  description?: string;
}

const app = Fastify({ logger: false });
app.post<{ Body: AssetBody }>('/maximo/oslc/os/mxapiasset', async (request, reply) => {
  const { assetnum, siteid, description } = request.body;
  await pool.query(
    `insert into asset (assetnum, siteid, orgid, description, status, statusdate, changedate, changeby)
     values ($1, $2::varchar, (select orgid from site where siteid = $2::varchar), $3, 'NOT READY', now(), now(), 'MAXADMIN')`,
    [assetnum, siteid, description ?? null],
  );
  return reply.code(201).header('location', `/maximo/oslc/os/mxapiasset/${assetnum}`).send();
});

await serveForBenchmark(app, () => pool.end());
