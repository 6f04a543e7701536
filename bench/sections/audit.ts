import { withServiceFixture } from '../fixtures/service.js';
import { BENCH_ADMIN_PASSWORD, BENCH_SCHEMA, CONTEXT_ROOT, sessionCookieHeader } from '../lib/settings.js';
import type { Pair, Scenario, Section } from '../lib/types.js';
import { PROPERTY_PATH, checkPropertyAnswer } from './property-call.js';

/** Its own schema, rebuilt every run: the writes pile up keys' history, assets and audit records. */
const SCHEMA = `${BENCH_SCHEMA}_audit`;
const ASSETS = `${CONTEXT_ROOT}/oslc/os/mxapiasset?lean=1`;
const ASSET_PAGE = `${ASSETS}&oslc.select=assetnum,siteid,description&oslc.pageSize=20&oslc.orderBy=%2Bassetnum`;
const KEY_CREATE = `${CONTEXT_ROOT}/oslc/apitoken/create`;
const PROPERTY_SET = `${CONTEXT_ROOT}/oslc/service/system?action=wsmethod:setProperty`;

function expectStatus(expected: number) {
  return (status: number, body: string): boolean => {
    if (status !== expected)
      throw new Error(`expected HTTP ${expected}, got ${status}: ${body.slice(0, 200)}`);
    return true;
  };
}

/** A new asset per request, from a counter shared by both sides. */
function assetBodies(): () => string {
  const prefix = `A${Date.now().toString(36).toUpperCase().slice(-5)}`;
  let next = 0;
  return () =>
    JSON.stringify({ assetnum: `${prefix}${(next++).toString(36).toUpperCase()}`, siteid: 'BEDFORD' });
}

/** A property set that always changes the value (two values in turn), so every request writes and is recorded. */
function propertyBodies(): () => string {
  let next = 0;
  return () =>
    JSON.stringify({
      propName: 'mxe.oslc.maxpagesize',
      serverName: 'COMMON',
      propValue: String(1000 + (next++ % 2)),
    });
}

/**
 * Issue 41: the same request against the service with its audit trail on (EAS_AUDIT=1: a record in each write's
 * transaction) and off (EAS_AUDIT=0): writes that are recorded, and reads that are not (which should pay nothing:
 * the request's origin is passed to the services that record, src/audit/README.md "Request context").
 */
export const auditSection: Section = {
  name: 'audit',
  issue: 41,
  summary:
    'key creation, property set, asset create, getProperty and an asset page, EAS_AUDIT=1 against EAS_AUDIT=0',
  async prepare(context) {
    await withServiceFixture(
      { url: context.databaseUrl, schema: SCHEMA, reload: true, log: context.log },
      async () => undefined,
    );
    const env = { BENCH_DATABASE_URL: context.databaseUrl, BENCH_SCHEMA: SCHEMA };
    const session = async (baseUrl: string) =>
      sessionCookieHeader(baseUrl, `${CONTEXT_ROOT}/oslc/whoami`, 'MAXADMIN', BENCH_ADMIN_PASSWORD);
    const pair = (name: string, description: string, request: Omit<Scenario, 'label' | 'server'>): Pair => ({
      name,
      description,
      target: 0.9,
      subject: {
        ...request,
        label: 'audit on',
        server: { script: 'eas.ts', env: { ...env, EAS_AUDIT: '1' } },
      },
      baseline: {
        ...request,
        label: 'audit off',
        server: { script: 'eas.ts', env: { ...env, EAS_AUDIT: '0' } },
      },
    });
    const json = async (baseUrl: string) => ({
      'content-type': 'application/json',
      ...(await session(baseUrl)),
    });
    return [
      pair('key create', 'POST /apitoken/create (MAXADMIN regenerating its key), session', {
        path: KEY_CREATE,
        method: 'POST',
        headers: json,
        body: () => '{"expiration": -1}',
        check: expectStatus(200),
      }),
      pair(
        'property set',
        'wsmethod:setProperty of mxe.oslc.maxpagesize, the value changed each time, session',
        {
          path: PROPERTY_SET,
          method: 'POST',
          headers: json,
          body: propertyBodies(),
          check: expectStatus(200),
        },
      ),
      pair('asset create', 'POST mxapiasset, a new asset per request, session', {
        path: ASSETS,
        method: 'POST',
        headers: json,
        body: assetBodies(),
        check: expectStatus(201),
      }),
      pair('getProperty', 'wsmethod:getProperty (not recorded), session', {
        path: PROPERTY_PATH,
        headers: session,
        check: checkPropertyAnswer,
      }),
      pair('asset page', 'GET a page of 20 assets (not recorded), session', {
        path: ASSET_PAGE,
        headers: session,
        check: expectStatus(200),
      }),
    ];
  },
};
