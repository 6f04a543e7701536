import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { maxauth, startTestApp, testConfig, type TestApp } from '../../test/helpers/app.js';
import { listenOnFreePort } from '../../test/helpers/raw-http.js';

/**
 * A flood of slow connections from one address leaves other clients served (docs/operations.md, "Connections
 * per address"), on a real listener with the default limits. Linux routes all of 127.0.0.0/8 to the loopback
 * interface, so 127.0.0.2 is another client address on the same machine.
 */

const FLOOD = 1000;
const FLOODER = '127.0.0.1';
const OTHER = '127.0.0.2';

/** A FORM login that announces a body it trickles: held open until the request timeout. */
const slowLogin =
  'POST /maximo/j_security_check HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
  'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 16000\r\n\r\nj';

const assetRequest =
  'GET /maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
  `maxauth: ${maxauth('MAXADMIN').maxauth}\r\nConnection: close\r\n\r\n`;

async function open(port: number, localAddress: string): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return socket;
}

/** Sends one request on a new connection from `localAddress`; answers the status and the time to the answer. */
async function timedRequest(port: number, localAddress: string, head: string) {
  const started = performance.now();
  const socket = await open(port, localAddress);
  const text = await new Promise<string>((resolve) => {
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.write(head);
  });
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), ms: performance.now() - started };
}

describe('a flood of slow connections from one address', () => {
  let t: TestApp;
  let port: number;
  const flood: Socket[] = [];
  before(async () => {
    t = await startTestApp();
    port = await listenOnFreePort(t.app);
  });
  after(async () => {
    for (const socket of flood) socket.destroy();
    await t.close();
  });

  test(`${FLOOD} slow logins from one address: another address is answered within a second`, async () => {
    // Once before the flood: the first answer of a fresh server also pays for its first login and query.
    assert.equal((await timedRequest(port, OTHER, assetRequest)).status, 200);
    for (let index = 0; index < FLOOD; index++) {
      const socket = await open(port, FLOODER);
      socket.write(slowLogin);
      flood.push(socket);
    }
    // Let the server take in every connection of the flood before the other client arrives.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const held = flood.filter((socket) => !socket.destroyed).length;
    assert.ok(held <= t.config.limits.maxConnectionsPerAddress, `${held} flood connections held open`);

    const answer = await timedRequest(port, OTHER, assetRequest);
    assert.equal(answer.status, 200, 'the other address is served');
    assert.ok(answer.ms < 1000, `answered in ${Math.round(answer.ms)} ms`);
  });

  test('the flooding address itself is refused beyond its cap, and served again once below it', async () => {
    const refused = await timedRequest(port, FLOODER, 'GET /maximo/oslc/os/mxapiasset HTTP/1.1\r\n\r\n');
    assert.equal(refused.status, 0, 'closed without an answer');
    for (const socket of flood.splice(0)) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const served = await timedRequest(port, FLOODER, assetRequest);
    assert.equal(served.status, 200);
  });
});

test('the per-address cap never reaches into the reserve of a tenth of EAS_MAX_CONNECTIONS', () => {
  const cap = (env: Record<string, string>) => testConfig(env).limits.maxConnectionsPerAddress;
  assert.equal(cap({}), 100);
  assert.equal(cap({ EAS_MAX_CONNECTIONS_PER_ADDRESS: '0' }), 900, '0: no cap of its own, the reserve stays');
  assert.equal(cap({ EAS_MAX_CONNECTIONS_PER_ADDRESS: '5000' }), 900);
  assert.equal(cap({ EAS_MAX_CONNECTIONS: '50', EAS_MAX_CONNECTIONS_PER_ADDRESS: '10' }), 10);
  assert.equal(cap({ EAS_MAX_CONNECTIONS: '50' }), 45);
  assert.equal(cap({ EAS_MAX_CONNECTIONS: '1' }), 1);
});
