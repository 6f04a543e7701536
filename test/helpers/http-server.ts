import { randomBytes } from 'node:crypto';
import { startTestApp } from './app.js';
import { startServer, stopServersAndDropSchema } from './processes.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD, TEST_DATABASE_URL } from './storage.js';

/** A server listening on a real port, with the administrator and the demo data of the fixtures. */
export interface ListeningServer {
  /** `http://127.0.0.1:<port>/maximo` */
  base: string;
  /** `process` on PostgreSQL (a `src/server.ts` child process), `in-process` on PGlite. */
  kind: 'process' | 'in-process';
  close(): Promise<void>;
}

/**
 * For the tests of clients (SDK, CLI) that must reach a server over HTTP. On PostgreSQL it is a real server
 * process (`processes.ts`) on a schema of its own; PGlite is one process per database by design and its first
 * start costs half a minute, so there the app of a cloned template listens in the test process instead.
 */
export async function startListeningServer(
  name: string,
  env: Record<string, string> = {},
): Promise<ListeningServer> {
  if (TEST_DATABASE_URL) {
    const schema = `eas_test_${name.toLowerCase()}_${process.pid}_${randomBytes(3).toString('hex')}`;
    const server = await startServer({
      name,
      databaseUrl: TEST_DATABASE_URL,
      schema,
      adminPassword: ADMIN_PASSWORD,
      env: { EAS_DEMO: '1', EAS_DEMO_PASSWORD: DEMO_PASSWORD, ...env },
    });
    return {
      base: server.base,
      kind: 'process',
      close: () => stopServersAndDropSchema([server], TEST_DATABASE_URL!, schema),
    };
  }
  const testApp = await startTestApp({ EAS_SERVER_NAME: name, ...env });
  await testApp.app.listen({ port: 0, host: '127.0.0.1' });
  const address = testApp.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { base: `http://127.0.0.1:${port}/maximo`, kind: 'in-process', close: () => testApp.close() };
}
