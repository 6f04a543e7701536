import { sql } from 'kysely';
import { withServiceFixture } from '../fixtures/service.js';
import { BENCH_ADMIN_PASSWORD, BENCH_SCHEMA, CONTEXT_ROOT, maxauthHeader } from '../lib/settings.js';
import type { Section } from '../lib/types.js';

/** A property every installation has (migration 0004), read from the process's in-memory registry. */
const PROPERTY = 'mxe.oslc.maxpagesize';
const ROUTE = `${CONTEXT_ROOT}/oslc/service/system`;
const PATH = `${ROUTE}?action=wsmethod:getProperty&propName=${PROPERTY}`;

/** `{"return": "<value>"}`; returns the value for the cross-check. */
function checkAnswer(status: number, body: string): string {
  if (status !== 200) throw new Error(`expected HTTP 200, got ${status}`);
  const answer = JSON.parse(body) as { return?: unknown };
  if (typeof answer.return !== 'string') throw new Error('no "return" string in the answer');
  return answer.return;
}

/**
 * Issue 6: the cheapest authenticated call there is (a property read from memory) against a bare route answering
 * the same body, which measures what the service puts around every request: access hook, authentication (maxauth,
 * verified once and then cached), routing of the service method.
 */
export const getPropertySection: Section = {
  name: 'getProperty',
  issue: 6,
  summary: `GET ${ROUTE}?action=wsmethod:getProperty&propName=${PROPERTY} (maxauth) against a bare route with the same body`,
  async prepare(context) {
    const value = await withServiceFixture(
      { url: context.databaseUrl, schema: BENCH_SCHEMA, reload: context.reload, log: context.log },
      async (db) => {
        // The value the service applies when no server-specific one is set; sameAnswer catches any other.
        const { rows } = await sql<{ value: string | null }>`
          select coalesce(
            (select propvalue from maxpropvalue where propname = ${PROPERTY} and servername = 'COMMON'),
            (select maximodefault from maxprop where propname = ${PROPERTY})) as value`.execute(db);
        return rows[0]?.value ?? '';
      },
    );
    const env = { BENCH_DATABASE_URL: context.databaseUrl, BENCH_SCHEMA };
    return [
      {
        name: 'getProperty',
        description:
          'wsmethod:getProperty with a cached maxauth login (access hook, method dispatch, in-memory read) ' +
          'against a bare Fastify route returning the same JSON.',
        target: 0.8,
        subject: {
          label: 'eas',
          server: { script: 'eas.ts', env },
          path: PATH,
          headers: { maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD) },
          check: checkAnswer,
        },
        baseline: {
          label: 'fastify',
          server: {
            script: 'bare-static.ts',
            env: { BENCH_ROUTE: ROUTE, BENCH_BODY: JSON.stringify({ return: value }) },
          },
          path: PATH,
          check: checkAnswer,
        },
        sameAnswer(subject, baseline) {
          if (subject !== baseline)
            throw new Error(`the service answers "${String(subject)}", the baseline "${String(baseline)}"`);
        },
      },
    ];
  },
};
