import { ensureAssetFixture } from '../fixtures/assets.js';
import {
  BENCH_ADMIN_PASSWORD,
  BENCH_SCHEMA,
  CONTEXT_ROOT,
  maxauthHeader,
  sessionCookieHeader,
} from '../lib/settings.js';
import type { Pair, Scenario, Section } from '../lib/types.js';

/** Assets in the benchmark schema: enough that a missing index or a sort of the whole table shows. */
export const QUERY_ASSETS = 1_000_000;
const PAGE_SIZE = 10;

const PATH =
  `${CONTEXT_ROOT}/oslc/os/mxapiasset?lean=1&oslc.where=status=%22OPERATING%22&oslc.orderBy=%2Bassetnum` +
  `&oslc.select=assetnum,description,status,location,siteid&oslc.pageSize=${PAGE_SIZE}`;

/** A full page of OPERATING assets; returns its member keys, in order, for the cross-check. */
function checkPage(status: number, body: string): string[] {
  if (status !== 200) throw new Error(`expected HTTP 200, got ${status}`);
  const page = JSON.parse(body) as { member?: Array<Record<string, unknown>>; responseInfo?: unknown };
  const members = page.member ?? [];
  if (members.length !== PAGE_SIZE) throw new Error(`expected ${PAGE_SIZE} members, got ${members.length}`);
  const keys = members.map((member) => {
    if (member.status !== 'OPERATING') throw new Error(`member with status ${String(member.status)}`);
    for (const name of ['assetnum', 'siteid', 'description', 'href', '_rowstamp']) {
      if (typeof member[name] !== 'string') throw new Error(`member without ${name}`);
    }
    return `${String(member.assetnum)}/${String(member.siteid)}`;
  });
  // Order is checked against the baseline (sameAnswer): the database's collation decides it, not JavaScript's.
  return keys;
}

/** Issue 3: an object-structure query on a million assets against the same query written by hand. */
export const querySection: Section = {
  name: 'query',
  issue: 3,
  summary: `GET mxapiasset where status="OPERATING" order by assetnum, page of ${PAGE_SIZE}, over ${QUERY_ASSETS.toLocaleString('en-US')} assets (PostgreSQL)`,
  async prepare(context) {
    const fixture = await ensureAssetFixture({
      url: context.databaseUrl,
      schema: BENCH_SCHEMA,
      assets: QUERY_ASSETS,
      reload: context.reload,
      log: context.log,
    });
    context.log(
      fixture.loaded
        ? `loaded ${fixture.assets.toLocaleString('en-US')} assets in ${fixture.seconds.toFixed(1)} s`
        : `reusing ${fixture.assets.toLocaleString('en-US')} assets in schema ${BENCH_SCHEMA}`,
    );
    return queryPairs({ BENCH_DATABASE_URL: context.databaseUrl, BENCH_SCHEMA });
  },
};

/** The section's pairs, on the schema the fixture loaded. */
function queryPairs(env: Record<string, string>): Pair[] {
  const baseline: Scenario = {
    label: 'fastify+pg',
    server: { script: 'bare-query.ts', env },
    path: PATH,
    check: checkPage,
  };
  const sameAnswer = (subject: unknown, expected: unknown) => {
    if (JSON.stringify(subject) !== JSON.stringify(expected))
      throw new Error('the service and the baseline list different assets');
  };
  const shared =
    'OSLC where/orderBy/select parsing, plan, Kysely, response shaping; against a bare Fastify route running ' +
    'the same SQL through a pg Pool.';
  const maxauthScenario: Scenario = {
    label: 'eas',
    server: { script: 'eas.ts', env },
    path: PATH,
    headers: { maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD) },
    check: checkPage,
  };
  return [
    {
      name: 'status list, maxauth vs cookie',
      // Per-request credentials store nothing and are verified once (docs/compatibility.md, "Sessions").
      description:
        'The page request with maxauth on every request against the same service with the session cookie of ' +
        'one login: what per-request credentials cost on top of a session.',
      target: 0.8,
      subject: maxauthScenario,
      baseline: {
        ...maxauthScenario,
        label: 'eas cookie',
        headers: (baseUrl) => sessionCookieHeader(baseUrl, PATH, 'MAXADMIN', BENCH_ADMIN_PASSWORD),
      },
      sameAnswer,
    },
    {
      name: 'status list, maxauth',
      // Issue 3 sets its target on the query path; this pair shows what credentials on every call add to it.
      description: `The service with a maxauth header on every request (the access hook's login path), ${shared}`,
      subject: {
        label: 'eas',
        server: { script: 'eas.ts', env },
        path: PATH,
        headers: { maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD) },
        check: checkPage,
      },
      baseline,
      sameAnswer,
    },
    {
      name: 'status list, session',
      description:
        'The service with the session cookie of one maxauth login (what a client keeping its cookies sends), ' +
        `which isolates the query path from authentication: ${shared}`,
      // 0.8 at both 4 and 32 connections (bench/README.md, "Summary").
      target: 0.8,
      subject: {
        label: 'eas',
        server: { script: 'eas.ts', env },
        path: PATH,
        headers: (baseUrl) => sessionCookieHeader(baseUrl, PATH, 'MAXADMIN', BENCH_ADMIN_PASSWORD),
        check: checkPage,
      },
      baseline,
      sameAnswer,
    },
  ];
}
