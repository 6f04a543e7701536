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

/** The same page with its total (`collectioncount=1`: `responseInfo.totalCount` and `totalPages`). */
const COUNT_PATH = `${PATH}&collectioncount=1`;

interface PageJson {
  member?: Array<Record<string, unknown>>;
  responseInfo?: { totalCount?: unknown; totalPages?: unknown };
}

/** A full page of OPERATING assets; returns the parsed page and its member keys, in order. */
function pageOf(status: number, body: string): { page: PageJson; keys: string[] } {
  if (status !== 200) throw new Error(`expected HTTP 200, got ${status}`);
  const page = JSON.parse(body) as PageJson;
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
  return { page, keys };
}

/** The page without a count (a count switched on by configuration would make the pair measure more than it says). */
export function checkPage(status: number, body: string): string[] {
  const { page, keys } = pageOf(status, body);
  if (page.responseInfo?.totalCount !== undefined)
    throw new Error('the page without a count answered a totalCount');
  return keys;
}

/** The page with its total: a whole number of at least a page, and the pages it makes; both go to the cross-check. */
export function checkCountedPage(status: number, body: string): { totalCount: number; keys: string[] } {
  const { page, keys } = pageOf(status, body);
  const { totalCount, totalPages } = page.responseInfo ?? {};
  if (typeof totalCount !== 'number' || !Number.isInteger(totalCount) || totalCount < PAGE_SIZE)
    throw new Error(`expected a totalCount of at least ${PAGE_SIZE}, got ${String(totalCount)}`);
  if (totalPages !== Math.ceil(totalCount / PAGE_SIZE))
    throw new Error(`totalPages ${String(totalPages)} does not fit totalCount ${totalCount}`);
  return { totalCount, keys };
}

/** Both sides did the same work: the same members in the same order, and (with a count) the same total. */
export function sameAnswer(subject: unknown, expected: unknown): void {
  if (JSON.stringify(subject) !== JSON.stringify(expected))
    throw new Error(
      `the service and the baseline answer differently: ${JSON.stringify(subject)} against ${JSON.stringify(expected)}`,
    );
}

/** Issue 3: an object-structure query on a million assets against the same query written by hand. */
export const querySection: Section = {
  name: 'query',
  issue: 3,
  summary: `GET mxapiasset where status="OPERATING" order by assetnum, page of ${PAGE_SIZE} with and without its count, over ${QUERY_ASSETS.toLocaleString('en-US')} assets (PostgreSQL)`,
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
    countPair(env, baseline),
  ];
}

/** The page with its total against the route running the same page and count(*) (the acceptance's page with count). */
function countPair(env: Record<string, string>, baseline: Scenario): Pair {
  return {
    name: 'status list with count, session',
    description:
      'The same page with its total (collectioncount=1: responseInfo.totalCount and totalPages) and the session ' +
      'cookie, against the bare route running the same page and the same count(*) side by side on two pool ' +
      'connections: the page with count of the acceptance (bench/README.md, "Summary").',
    // 0.8 at both 4 and 32 connections (bench/README.md, "Summary").
    target: 0.8,
    subject: {
      label: 'eas',
      server: { script: 'eas.ts', env },
      path: COUNT_PATH,
      headers: (baseUrl) => sessionCookieHeader(baseUrl, COUNT_PATH, 'MAXADMIN', BENCH_ADMIN_PASSWORD),
      check: checkCountedPage,
    },
    baseline: { ...baseline, path: COUNT_PATH, check: checkCountedPage },
    sameAnswer,
  };
}
