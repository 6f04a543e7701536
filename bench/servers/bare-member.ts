// Baseline of the `member` section: one asset with its meters and specifications by href, answered by a bare
// Fastify route running one indexed query through pg (the child rows aggregated as JSON in the same statement) and
// writing the same lean JSON: no metadata, query language, access check or response shaping of the service.
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

interface MeterRow {
  metername: string;
  linearassetid: number;
  lastreading: string | null;
  lastreadingdate: string | null;
  rowstamp: number;
  id: number;
}

interface SpecRow {
  assetattrid: string;
  numvalue: number | null;
  alnvalue: string | null;
  rowstamp: number;
  id: number;
}

interface AssetRow {
  assetnum: string;
  siteid: string;
  description: string | null;
  status: string;
  rowstamp: string;
  meters: MeterRow[];
  specs: SpecRow[];
}

// The statement the service sends for this request, written by hand: the asset by its key (primary key index), its
// child rows by theirs.
const MEMBER_SQL = `select a.assetnum, a.siteid, a.description, a.status, a.rowstamp,
  (select coalesce(json_agg(json_build_object('metername', m.metername, 'linearassetid', m.linearassetid,
      'lastreading', m.lastreading, 'lastreadingdate', m.lastreadingdate, 'rowstamp', m.rowstamp,
      'id', m.assetmeterid) order by m.assetmeterid), '[]'::json)
    from assetmeter m where m.assetnum = a.assetnum and m.siteid = a.siteid) as meters,
  (select coalesce(json_agg(json_build_object('assetattrid', s.assetattrid, 'numvalue', s.numvalue,
      'alnvalue', s.alnvalue, 'rowstamp', s.rowstamp, 'id', s.assetspecid) order by s.assetspecid), '[]'::json)
    from assetspec s where s.assetnum = a.assetnum and s.siteid = a.siteid) as specs
  from asset a where a.assetnum = $1 and a.siteid = $2`;

const base64 = (text: string): string =>
  Buffer.from(text).toString('base64').replace(/\+/g, '_').replace(/\//g, '.').replace(/=/g, '-');

/** ISO-8601 in UTC with an explicit offset and whole seconds, as the service writes dates. */
const isoDate = (text: string): string => `${new Date(text).toISOString().slice(0, 19)}+00:00`;

const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/maximo/oslc/os/mxapiasset/:id', async (request, reply) => {
  const [assetnum, siteid] = Buffer.from(
    request.params.id.slice(1).replace(/_/g, '+').replace(/\./g, '/').replace(/-/g, '='),
    'base64',
  )
    .toString('utf8')
    .split('/');
  const { rows } = await pool.query<AssetRow>(MEMBER_SQL, [assetnum, siteid]);
  const row = rows[0];
  if (!row) return reply.code(404).send();
  const href = `${request.protocol}://${request.host}/maximo/oslc/os/mxapiasset/${request.params.id}`;
  const json: Record<string, unknown> = { assetnum: row.assetnum, siteid: row.siteid };
  if (row.description !== null) json.description = row.description;
  json.status = row.status;
  const text = statusText.get(row.status);
  if (text) json.status_description = text;
  json._rowstamp = row.rowstamp;
  json.href = href;
  json.assetmeter = row.meters.map((meter, index) => {
    const child: Record<string, unknown> = { metername: meter.metername, linearassetid: meter.linearassetid };
    if (meter.lastreading !== null) child.lastreading = meter.lastreading;
    if (meter.lastreadingdate !== null) child.lastreadingdate = isoDate(meter.lastreadingdate);
    child._rowstamp = String(meter.rowstamp);
    child.href = `http://childkey#${base64(`ASSET/ASSETMETER/${row.assetnum}/${row.siteid}/${meter.metername}/${meter.linearassetid}`)}`;
    child.localref = `${href}/assetmeter/${index}-${meter.id}`;
    return child;
  });
  json.assetspec = row.specs.map((spec, index) => {
    const child: Record<string, unknown> = { assetattrid: spec.assetattrid };
    if (spec.numvalue !== null) child.numvalue = spec.numvalue;
    if (spec.alnvalue !== null) child.alnvalue = spec.alnvalue;
    child._rowstamp = String(spec.rowstamp);
    child.href = `http://childkey#${base64(`ASSET/ASSETSPEC/${row.assetnum}/${row.siteid}/${spec.assetattrid}`)}`;
    child.localref = `${href}/assetspec/${index}-${spec.id}`;
    return child;
  });
  return reply
    .header('content-type', 'application/json')
    .header('etag', `"${row.rowstamp}"`)
    .send(Buffer.from(JSON.stringify(json)));
});

await serveForBenchmark(app, () => pool.end());
