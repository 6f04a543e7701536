// Baseline of the `query` section: what a hand-written endpoint for the same list costs on the same stack
// (Fastify + pg + the same PostgreSQL rows), with no metadata, query language, access checks or response shaping.
import Fastify from 'fastify';
import pg from 'pg';
import { requiredEnv, serveForBenchmark } from './serve.js';

const schema = requiredEnv('BENCH_SCHEMA');
// Same pool size as the service's default, so both can keep as many queries in flight.
const pool = new pg.Pool({
  connectionString: requiredEnv('BENCH_DATABASE_URL'),
  max: 10,
  options: `-c search_path=${schema}`,
});

const statusText = new Map<string, string>();
const domain = await pool.query<{ value: string; description: string | null }>(
  `select value, description from synonymdomain
   where domainid = 'LOCASSETSTATUS' and siteid is null and orgid is null`,
);
for (const row of domain.rows) if (row.description) statusText.set(row.value, row.description);

interface AssetRow {
  assetnum: string;
  siteid: string;
  description: string | null;
  status: string;
  location: string | null;
  rowstamp: string;
}

const restId = (assetnum: string, siteid: string): string =>
  `_${Buffer.from(`${assetnum}/${siteid}`).toString('base64').replace(/\+/g, '_').replace(/\//g, '.').replace(/=/g, '-')}`;

const app = Fastify({ logger: false });
app.get('/maximo/oslc/os/mxapiasset', async (request, reply) => {
  const pageSize = 10;
  const withCount = (request.query as Record<string, string | undefined>).collectioncount === '1';
  // The statement the service compiles for this request (one more row than the page tells whether there is a next).
  const page = pool.query<AssetRow>(
    `select assetnum, siteid, assetuid, description, status, location, rowstamp
     from asset where status = $1 order by assetnum asc, assetuid asc limit $2 offset $3`,
    ['OPERATING', pageSize + 1, 0],
  );
  // The total, when asked for, is sent at once on a second connection of the pool rather than after the page: the
  // two statements do not depend on each other, so a hand-written route overlaps them and the answer waits for the
  // slower one instead of both round trips one after the other (the service does the same, src/oslc/query/README.md,
  // "Compiled statements"). One statement for both (`count(*) over ()`) would read every matching row for each page.
  const count = withCount
    ? pool.query<{ count: string }>('select count(*) as count from asset where status = $1', ['OPERATING'])
    : undefined;
  const [{ rows }, counted] = await Promise.all([page, count]);
  const totalCount = counted === undefined ? undefined : Number(counted.rows[0]?.count ?? 0);
  const base = `${request.protocol}://${request.host}/maximo/oslc/os/mxapiasset`;
  const query = request.url.slice(request.url.indexOf('?') + 1);
  const member = rows.slice(0, pageSize).map((row) => {
    const json: Record<string, string> = { assetnum: row.assetnum };
    if (row.description !== null) json.description = row.description;
    json.status = row.status;
    const text = statusText.get(row.status);
    if (text) json.status_description = text;
    if (row.location !== null) json.location = row.location;
    json.siteid = row.siteid;
    json._rowstamp = row.rowstamp;
    json.href = `${base}/${restId(row.assetnum, row.siteid)}`;
    return json;
  });
  const body = {
    member,
    href: base,
    responseInfo: {
      ...(rows.length > pageSize && { nextPage: { href: `${base}?pageno=2&${query}` } }),
      ...(totalCount !== undefined && { totalCount, totalPages: Math.ceil(totalCount / pageSize) }),
      href: `${base}?${query}`,
      pagenum: 1,
    },
  };
  return reply.header('content-type', 'application/json').send(Buffer.from(JSON.stringify(body)));
});

await serveForBenchmark(app, () => pool.end());
