import { BENCH_ADMIN_PASSWORD, maxauthHeader, sessionCookieHeader } from '../lib/settings.js';
import type { Section } from '../lib/types.js';
import { PROPERTY_PATH, propertyCallPair } from './property-call.js';

/**
 * Issue 6: getProperty with a maxauth header against a bare route answering the same body, which measures what the
 * service puts around every request: access hook, authentication (maxauth, verified once and then cached), routing
 * of the service method.
 */
export const getPropertySection: Section = {
  name: 'getProperty',
  issue: 6,
  summary: `GET ${PROPERTY_PATH} (maxauth) against a bare route with the same body`,
  async prepare(context) {
    const perRequest = await propertyCallPair(context, {
      name: 'getProperty',
      description:
        'wsmethod:getProperty with a cached maxauth login (access hook, method dispatch, in-memory read) ' +
        'against a bare Fastify route returning the same JSON.',
      // Issue 6 takes its ratio from the API-key issue (the apikey section, the same call): no target of its own.
      headers: { maxauth: maxauthHeader('MAXADMIN', BENCH_ADMIN_PASSWORD) },
    });
    return [
      perRequest,
      {
        // Per-request credentials are verified once and then found by a keyed digest, storing nothing
        // (docs/compatibility.md, "Sessions"): they must cost about what a session cookie does.
        name: 'maxauth vs cookie',
        description:
          'wsmethod:getProperty with maxauth on every request (per-request credentials, no session) against the ' +
          'same service with the session cookie of one login.',
        target: 0.8,
        subject: perRequest.subject,
        baseline: {
          ...perRequest.subject,
          label: 'eas cookie',
          headers: (baseUrl) => sessionCookieHeader(baseUrl, PROPERTY_PATH, 'MAXADMIN', BENCH_ADMIN_PASSWORD),
        },
        sameAnswer: perRequest.sameAnswer,
      },
    ];
  },
};
