import { availableParallelism } from 'node:os';
import { withServiceFixture } from '../fixtures/service.js';
import { BENCH_ADMIN_PASSWORD, BENCH_SCHEMA, CONTEXT_ROOT, sessionCookieHeader } from '../lib/settings.js';
import type { Scenario, Section } from '../lib/types.js';

const PATH =
  `${CONTEXT_ROOT}/oslc/os/mxapiasset?lean=1&oslc.where=status=%22OPERATING%22&oslc.orderBy=%2Bassetnum` +
  `&oslc.select=assetnum,description,status,location,siteid&oslc.pageSize=10`;

/** Two processes can only pay off where each gets cores of its own besides PostgreSQL's and the load's. */
const MIN_CORES = 4;
const TARGET = 1.6;

function checkPage(status: number, body: string): number {
  if (status !== 200) throw new Error(`expected HTTP 200, got ${status}: ${body.slice(0, 200)}`);
  const page = JSON.parse(body) as { member?: unknown[] };
  const count = page.member?.length ?? 0;
  if (count === 0) throw new Error('an empty page');
  return count;
}

/**
 * Issue 18: two service processes on one PostgreSQL schema against one, the load split evenly over the two (as
 * a round-robin balancer does). One login on the first process: its session cookie is accepted by the second,
 * which shows on the first request that sessions are shared.
 */
export const scaleSection: Section = {
  name: 'scale',
  issue: 18,
  summary: `GET mxapiasset page (session cookie): two server processes on one schema against one`,
  async prepare(context) {
    await withServiceFixture(
      { url: context.databaseUrl, schema: BENCH_SCHEMA, reload: context.reload, log: context.log },
      async () => undefined,
    );
    const env = { BENCH_DATABASE_URL: context.databaseUrl, BENCH_SCHEMA };
    const headers = (baseUrl: string) => sessionCookieHeader(baseUrl, PATH, 'MAXADMIN', BENCH_ADMIN_PASSWORD);
    const one: Scenario = {
      label: 'eas x1',
      server: { script: 'eas.ts', env },
      path: PATH,
      headers,
      check: checkPage,
    };
    const enoughCores = availableParallelism() >= MIN_CORES;
    if (!enoughCores)
      context.log(`scale: ${availableParallelism()} cores (< ${MIN_CORES}): the ratio is reported as INFO`);
    return [
      {
        name: 'two processes',
        description:
          'Throughput of two server processes on one PostgreSQL schema (load split evenly) over one process; ' +
          `target ${TARGET} on a machine with ${MIN_CORES} cores or more, INFO below.`,
        ...(enoughCores && { target: TARGET }),
        subject: { ...one, label: 'eas x2', server: { script: 'eas.ts', env, replicas: 2 } },
        baseline: one,
        sameAnswer(subject, baseline) {
          if (subject !== baseline) throw new Error('the two set-ups answer pages of different sizes');
        },
      },
    ];
  },
};
