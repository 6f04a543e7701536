import { sql } from 'kysely';
import { withServiceFixture } from '../fixtures/service.js';
import { BENCH_SCHEMA, CONTEXT_ROOT } from '../lib/settings.js';
import type { Pair, Scenario, SectionContext } from '../lib/types.js';

/**
 * The cheapest authenticated call there is: a property read from the process's in-memory registry. The getProperty,
 * apikey and session sections send it with different credentials, against the same bare route, so that they differ
 * only in how the caller authenticates.
 */
const PROPERTY = 'mxe.oslc.maxpagesize';
export const PROPERTY_ROUTE = `${CONTEXT_ROOT}/oslc/service/system`;
export const PROPERTY_PATH = `${PROPERTY_ROUTE}?action=wsmethod:getProperty&propName=${PROPERTY}`;

/** `{"return": "<value>"}`; returns the value for the cross-check. */
export function checkPropertyAnswer(status: number, body: string): string {
  if (status !== 200) throw new Error(`expected HTTP 200, got ${status}: ${body.slice(0, 200)}`);
  const answer = JSON.parse(body) as { return?: unknown };
  if (typeof answer.return !== 'string') throw new Error('no "return" string in the answer');
  return answer.return;
}

/** The service scenario and baseline of one property-call pair, after preparing the service's schema. */
export async function propertyCallPair(
  context: SectionContext,
  pair: Pick<Pair, 'name' | 'description' | 'target'> & {
    headers: Scenario['headers'];
    env?: Record<string, string>;
  },
): Promise<Pair> {
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
  return {
    name: pair.name,
    description: pair.description,
    ...(pair.target !== undefined && { target: pair.target }),
    subject: {
      label: context.storage === 'pglite' ? 'eas pglite' : 'eas',
      server: {
        script: 'eas.ts',
        env: {
          BENCH_DATABASE_URL: context.databaseUrl,
          BENCH_SCHEMA,
          BENCH_STORAGE: context.storage,
          ...pair.env,
        },
      },
      path: PROPERTY_PATH,
      ...(pair.headers !== undefined && { headers: pair.headers }),
      check: checkPropertyAnswer,
    },
    baseline: {
      label: 'fastify',
      server: {
        script: 'bare-static.ts',
        env: { BENCH_ROUTE: PROPERTY_ROUTE, BENCH_BODY: JSON.stringify({ return: value }) },
      },
      path: PROPERTY_PATH,
      check: checkPropertyAnswer,
    },
    sameAnswer(subject, baseline) {
      if (subject !== baseline)
        throw new Error(`the service answers "${String(subject)}", the baseline "${String(baseline)}"`);
    },
  };
}
