import { sql } from 'kysely';
import { withServiceFixture } from '../fixtures/service.js';
import { BENCH_ADMIN_PASSWORD, BENCH_SCHEMA, CONTEXT_ROOT, maxauthHeader } from '../lib/settings.js';
import type { Section } from '../lib/types.js';

/** The same call as the getProperty section, so the two differ only in how the caller authenticates. */
const PROPERTY = 'mxe.oslc.maxpagesize';
const ROUTE = `${CONTEXT_ROOT}/oslc/service/system`;
const PATH = `${ROUTE}?action=wsmethod:getProperty&propName=${PROPERTY}`;

function checkAnswer(status: number, body: string): string {
  if (status !== 200) throw new Error(`expected HTTP 200, got ${status}: ${body.slice(0, 200)}`);
  const answer = JSON.parse(body) as { return?: unknown };
  if (typeof answer.return !== 'string') throw new Error('no "return" string in the answer');
  return answer.return;
}

/** Creates (or regenerates) MAXADMIN's key on the running service, once before the load: a client's key. */
async function apiKeyHeader(baseUrl: string): Promise<Record<string, string>> {
  const response = await fetch(`${baseUrl}${CONTEXT_ROOT}/oslc/apitoken/create`, {
    method: 'POST',
    headers: { maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD), 'content-type': 'application/json' },
    body: '{"expiration": -1}',
  });
  const body = (await response.json()) as { apikey?: unknown };
  if (response.status !== 200 || typeof body.apikey !== 'string') {
    throw new Error(`apitoken/create gave HTTP ${response.status}`);
  }
  return { apikey: body.apikey };
}

/**
 * Issue 5: getProperty with an `apikey` header against a bare route answering the same body. Measures key
 * verification (HMAC digest, in-memory lookup; no session, no decryption) plus the access hook and dispatch.
 */
export const apiKeySection: Section = {
  name: 'apikey',
  issue: 5,
  summary: `GET ${PATH} (apikey header) against a bare route with the same body`,
  async prepare(context) {
    const value = await withServiceFixture(
      { url: context.databaseUrl, schema: BENCH_SCHEMA, reload: context.reload, log: context.log },
      async (db) => {
        const { rows } = await sql<{ value: string | null }>`
          select coalesce(
            (select propvalue from maxpropvalue where propname = ${PROPERTY} and servername = 'COMMON'),
            (select maximodefault from maxprop where propname = ${PROPERTY})) as value`.execute(db);
        return rows[0]?.value ?? '';
      },
    );
    // One master key for the service process, so the key it issues and the keys it verifies agree.
    const env = {
      BENCH_DATABASE_URL: context.databaseUrl,
      BENCH_SCHEMA,
      EAS_MASTER_KEY: process.env.EAS_MASTER_KEY ?? 'eas-bench-master-key-0123456789abcdef',
    };
    return [
      {
        name: 'apikey',
        description:
          'wsmethod:getProperty authenticated by an apikey header (digest lookup in the key cache, silent login) ' +
          'against a bare Fastify route returning the same JSON.',
        target: 0.8,
        subject: {
          label: 'eas',
          server: { script: 'eas.ts', env },
          path: PATH,
          headers: apiKeyHeader,
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
