import { sql } from 'kysely';
import { withServiceFixture } from '../fixtures/service.js';
import { BENCH_ADMIN_PASSWORD, BENCH_SCHEMA, CONTEXT_ROOT, sessionCookieHeader } from '../lib/settings.js';
import type { Scenario, Section } from '../lib/types.js';

/** What the member read selects: the asset's own attributes and two child collections, as a client's form would. */
const SELECT =
  'assetnum,siteid,description,status,assetmeter{metername,linearassetid,lastreading,lastreadingdate},' +
  'assetspec{assetattrid,numvalue,alnvalue}';

/** The rest id of an asset (`_` + base64 of `assetnum/siteid`, docs/compatibility.md). */
const restId = (assetnum: string, siteid: string): string =>
  `_${Buffer.from(`${assetnum}/${siteid}`).toString('base64').replace(/\+/g, '_').replace(/\//g, '.').replace(/=/g, '-')}`;

/**
 * The member with both child collections; returns the answer without the server's own address (each side listens on
 * a port of its own), which must then be the same on both sides, to the byte.
 */
function checkMember(status: number, body: string): string {
  if (status !== 200) throw new Error(`expected HTTP 200, got ${status}: ${body.slice(0, 200)}`);
  const member = JSON.parse(body) as Record<string, unknown>;
  for (const child of ['assetmeter', 'assetspec']) {
    const rows = member[child];
    if (!Array.isArray(rows) || rows.length === 0) throw new Error(`member without ${child} rows`);
  }
  return body.replace(/http:\/\/127\.0\.0\.1:\d+/g, '');
}

/** The asset of the demo data with the most child rows (meters and specifications both). */
async function memberWithChildren(url: string, log: (message: string) => void) {
  return withServiceFixture({ url, schema: BENCH_SCHEMA, reload: false, log }, async (db) => {
    const found = await sql<{ assetnum: string; siteid: string }>`select a.assetnum, a.siteid from asset a
      where exists (select 1 from assetmeter m where m.assetnum = a.assetnum and m.siteid = a.siteid)
        and exists (select 1 from assetspec s where s.assetnum = a.assetnum and s.siteid = a.siteid)
      order by (select count(*) from assetmeter m where m.assetnum = a.assetnum and m.siteid = a.siteid)
        + (select count(*) from assetspec s where s.assetnum = a.assetnum and s.siteid = a.siteid) desc,
        a.assetnum limit 1`.execute(db);
    const asset = found.rows[0];
    if (!asset) throw new Error('no asset of the demo data has both meters and specifications');
    return asset;
  });
}

/** Issue 27: a lean member read by href (an asset with its child collections) against one indexed pg query. */
export const memberSection: Section = {
  name: 'member',
  issue: 27,
  summary:
    'GET mxapiasset/<rest id> with its meters and specifications, lean, against one indexed query through pg',
  async prepare(context) {
    const asset = await memberWithChildren(context.databaseUrl, context.log);
    const path =
      `${CONTEXT_ROOT}/oslc/os/mxapiasset/${restId(asset.assetnum, asset.siteid)}` +
      `?lean=1&ignorecollectionref=1&oslc.select=${encodeURIComponent(SELECT)}`;
    const env = { BENCH_DATABASE_URL: context.databaseUrl, BENCH_SCHEMA };
    const baseline: Scenario = {
      label: 'fastify+pg',
      server: { script: 'bare-member.ts', env },
      path,
      check: checkMember,
    };
    return [
      {
        name: 'asset with children, session',
        description:
          'A member by href with two child collections and the session cookie of one login: access hook, rest id, ' +
          'plan (kept), one statement with the child rows aggregated as JSON, response shaping; against a bare ' +
          'Fastify route running one hand-written query of the same rows through a pg Pool.',
        target: 0.6,
        subject: {
          label: 'eas',
          server: { script: 'eas.ts', env },
          path,
          headers: (baseUrl) => sessionCookieHeader(baseUrl, path, 'MAXADMIN', BENCH_ADMIN_PASSWORD),
          check: checkMember,
        },
        baseline,
        sameAnswer(subject, expected) {
          if (subject !== expected)
            throw new Error(
              `the service and the baseline answer differently:\n${String(subject)}\n${String(expected)}`,
            );
        },
      },
    ];
  },
};
