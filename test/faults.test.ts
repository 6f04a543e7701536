import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  databaseOutage,
  killDuringWrites,
  secondProcessRefused,
  Server,
  SMALL,
  type FaultResult,
} from '../bench/faults.js';
import { stopServersAndDropSchema } from './helpers/processes.js';
import { TEST_DATABASE_URL } from './helpers/storage.js';

/**
 * The fault script (`npm run faults`, bench/faults.ts) at its small size, so CI runs every fault on real
 * processes; and graceful shutdown. On the PGlite pass the PGlite faults, on the PostgreSQL pass the others; each
 * pass shuts down a process on its own engine.
 */

const quiet = () => undefined;

const passes = (result: FaultResult) => assert.ok(result.passed, `${result.name}: ${result.detail}`);

describe('faults on real processes', () => {
  if (!TEST_DATABASE_URL) {
    test('a second process on one PGlite directory is refused, naming the directory', async () => {
      passes(await secondProcessRefused());
    });
    test('kill -9 under concurrent writes on PGlite: every acknowledged write present, none partial', async () => {
      passes(await killDuringWrites('pglite', undefined, SMALL, quiet));
    });
  } else {
    test('PostgreSQL backends terminated and the database away under load: 503 only then, 200 after', async () => {
      passes(await databaseOutage(TEST_DATABASE_URL!, SMALL, quiet));
    });
    test('kill -9 under concurrent writes on PostgreSQL: every acknowledged write present, none partial', async () => {
      passes(await killDuringWrites('postgres', TEST_DATABASE_URL, SMALL, quiet));
    });
  }
});

describe('graceful shutdown', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });
  /**
   * A data directory, and on the PostgreSQL pass a new schema beside it (the server makes it): each pass shuts down
   * its own engine's process (a first start on PGlite costs the PostgreSQL pass most of a minute while both passes
   * share the cores).
   */
  async function storage(): Promise<Record<string, string>> {
    const directory = await mkdtemp(join(tmpdir(), 'eas-shutdown-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const url = TEST_DATABASE_URL;
    if (!url) return { EAS_DATA_DIR: directory };
    const schema = `eas_shutdown_${randomBytes(4).toString('hex')}`;
    cleanups.push(() => stopServersAndDropSchema([], url, schema));
    return { EAS_DATA_DIR: directory, DATABASE_URL: url, EAS_DB_SCHEMA: schema };
  }
  async function start(env: Record<string, string> = {}) {
    const server = new Server({ ...(await storage()), ...env });
    const base = await server.listening();
    return { server, port: Number(new URL(base).port) };
  }

  /** A create whose body is sent in two halves; answers the socket and a promise of everything received. */
  async function halfSentCreate(port: number) {
    const body = JSON.stringify({ assetnum: 'SHUTDOWN1', siteid: 'BEDFORD', description: 'in flight' });
    const auth = Buffer.from('MAXADMIN:faults-admin-pw').toString('base64');
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined);
    const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
    socket.write(
      `POST /maximo/oslc/os/mxapiasset?lean=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `maxauth: ${auth}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    return { socket, rest: body.slice(10), closed };
  }

  test('SIGTERM: no new connections, the request in flight is answered, exit 0', async () => {
    const { server, port } = await start();
    const inFlight = await halfSentCreate(port);
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await assert.rejects(
      new Promise((resolve, reject) => {
        const late = connect(port, '127.0.0.1');
        late.once('connect', () => {
          late.destroy();
          resolve(undefined);
        });
        late.once('error', reject);
      }),
      { code: 'ECONNREFUSED' },
    );
    inFlight.socket.write(inFlight.rest);
    const answer = await inFlight.closed;
    assert.match(answer, /^HTTP\/1\.1 201 /, answer);
    assert.equal(await server.exited, 0, server.output);
  });

  test('SIGTERM: a request that never completes is cut at the shutdown timeout, still exit 0', async () => {
    const { server, port } = await start({ EAS_SHUTDOWN_TIMEOUT_SECONDS: '1' });
    const inFlight = await halfSentCreate(port);
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.child.kill('SIGTERM');
    await inFlight.closed;
    assert.equal(await server.exited, 0, server.output);
  });
});

describe('start-up without a database', () => {
  test('an unreachable database stops start-up with a message that names no host or port', async () => {
    const server = new Server({ DATABASE_URL: 'postgres://eas:secret-pw@127.0.0.1:1/nowhere' });
    const code = await server.exited;
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(code, 1);
    assert.match(server.output, /the database cannot be reached/);
    for (const secret of ['127.0.0.1:1', 'secret-pw', 'nowhere']) {
      assert.ok(!server.output.includes(secret), `${secret} in ${server.output}`);
    }
  });
});
