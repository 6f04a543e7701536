import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppServices } from '../../src/app.js';
import { loadConfig, type AppConfig } from '../../src/config.js';
import type { Storage } from '../../src/db/database.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD, openTestStorage, type FixtureOptions } from './storage.js';

export interface TestApp {
  app: FastifyInstance;
  storage: Storage;
  services: AppServices;
  config: AppConfig;
  close(): Promise<void>;
}

export function testConfig(overrides: Record<string, string> = {}): AppConfig {
  return loadConfig({ EAS_LOG_LEVEL: 'silent', EAS_SERVER_NAME: 'TESTSERVER', ...overrides });
}

/** The app in-process on a fresh database (see openTestStorage), for `inject()` tests. */
export async function startTestApp(
  overrides: Record<string, string> = {},
  fixtures: FixtureOptions = {},
): Promise<TestApp> {
  const config = testConfig(overrides);
  const opened = await openTestStorage(fixtures);
  // As the server opens its storage: with the attachment folder the configuration names (src/server.ts).
  const storage = config.attachmentsDir ? { ...opened, attachmentsDir: config.attachmentsDir } : opened;
  let built: Awaited<ReturnType<typeof buildApp>>;
  try {
    built = await buildApp(config, storage);
    await built.app.ready();
  } catch (error) {
    // An open pool would keep the test process alive instead of letting the failure show.
    await storage.close();
    throw error;
  }
  const { app, services } = built;
  return {
    app,
    storage,
    services,
    config,
    async close() {
      await app.close();
      await storage.close();
    },
  };
}

const passwords: Record<string, string> = {
  MAXADMIN: ADMIN_PASSWORD,
  WILSON: DEMO_PASSWORD,
  SMITH: DEMO_PASSWORD,
};

/** The `maxauth` header of a fixture user. */
export function maxauth(
  userid: 'MAXADMIN' | 'WILSON' | 'SMITH',
  password = passwords[userid]!,
): Record<string, string> {
  return { maxauth: Buffer.from(`${userid}:${password}`).toString('base64') };
}

export type Json = Record<string, unknown> & {
  member?: Array<Record<string, unknown>>;
  Error?: Record<string, unknown>;
  responseInfo?: Record<string, unknown>;
};

/** The JSON body of a response (an empty object for an empty body). */
export function json(response: LightMyRequestResponse): Json {
  return response.body === '' ? {} : (JSON.parse(response.body) as Json);
}

/** Changes a fixture user's login record (`maxuser` of its person) through MXAPIPERUSER, as an administrator. */
export async function patchUser(
  app: FastifyInstance,
  personid: string,
  fields: Record<string, unknown>,
): Promise<void> {
  const found = json(
    await app.inject({
      url: `/maximo/oslc/os/mxapiperuser?lean=1&oslc.select=personid&oslc.where=personid="${personid}"`,
      headers: maxauth('MAXADMIN'),
    }),
  ).member![0]!;
  const response = await app.inject({
    method: 'POST',
    url: new URL(String(found.href)).pathname,
    headers: { ...maxauth('MAXADMIN'), 'x-method-override': 'PATCH', patchtype: 'MERGE' },
    payload: { maxuser: [{ userid: personid, ...fields }] },
  });
  if (response.statusCode !== 204)
    throw new Error(`patching ${personid}: ${response.statusCode} ${response.body}`);
}
