import { BENCH_ADMIN_PASSWORD, CONTEXT_ROOT, maxauthHeader } from '../lib/settings.js';
import type { Section } from '../lib/types.js';
import { PROPERTY_PATH, propertyCallPair } from './property-call.js';

/** Creates (or regenerates) MAXADMIN's key on the running service, once before the load: a client's key. */
export async function apiKeyHeader(baseUrl: string): Promise<Record<string, string>> {
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
  summary: `GET ${PROPERTY_PATH} (apikey header) against a bare route with the same body`,
  async prepare(context) {
    return [
      await propertyCallPair(context, {
        name: 'apikey',
        description:
          'wsmethod:getProperty authenticated by an apikey header (digest lookup in the key cache, silent login) ' +
          'against a bare Fastify route returning the same JSON.',
        target: 0.8,
        headers: apiKeyHeader,
      }),
    ];
  },
};
