import { BENCH_ADMIN_PASSWORD, sessionCookieHeader } from '../lib/settings.js';
import type { Section } from '../lib/types.js';
import { PROPERTY_PATH, propertyCallPair } from './property-call.js';

/**
 * Issue 4: a GET with the session cookie of one login against the same route unauthenticated in a bare Fastify
 * app. Measures the session lookup (cookie parse, token digest, in-memory session cache kept coherent across
 * processes) plus the access hook and dispatch.
 */
export const sessionSection: Section = {
  name: 'session',
  issue: 4,
  summary: `GET ${PROPERTY_PATH} (session cookie) against an unauthenticated bare route with the same body`,
  async prepare(context) {
    return [
      await propertyCallPair(context, {
        name: 'session cookie',
        description:
          'wsmethod:getProperty with the session cookie of one maxauth login (cached session lookup, access hook, ' +
          'method dispatch) against an unauthenticated bare Fastify route returning the same JSON.',
        target: 0.8,
        headers: (baseUrl) => sessionCookieHeader(baseUrl, PROPERTY_PATH, 'MAXADMIN', BENCH_ADMIN_PASSWORD),
      }),
    ];
  },
};
