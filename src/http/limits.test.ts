import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import type { Storage } from '../db/database.js';
import { testConfig } from '../../test/helpers/app.js';
import { ADMIN_PASSWORD, openTestStorage } from '../../test/helpers/storage.js';

/**
 * The listener's limits on real sockets (inject() has no socket): slow headers and slow bodies are answered
 * 408 and closed, oversized headers 431, form bodies 413 with their own limit, a connection cap; every refusal
 * is the error object.
 */

interface Exchange {
  /** Everything the server sent before closing. */
  text: string;
  closed: boolean;
}

/** Opens a connection, sends `chunks` with `gapMs` between them, and collects the answer until it closes. */
async function exchange(port: number, chunks: string[], gapMs = 0, giveUpMs = 10_000): Promise<Exchange> {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<boolean>((resolve) => {
    socket.on('close', () => resolve(true));
    setTimeout(() => resolve(false), giveUpMs).unref();
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  void (async () => {
    for (const chunk of chunks) {
      if (socket.destroyed) return;
      socket.write(chunk);
      if (gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  })();
  const wasClosed = await closed;
  socket.destroy();
  return { text, closed: wasClosed };
}

function errorOf(text: string): { status: number; reasonCode: string; message: string } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  const error = (JSON.parse(body) as { Error: { reasonCode: string; message: string; statusCode: string } })
    .Error;
  assert.equal(error.statusCode, String(status));
  return { status, reasonCode: error.reasonCode, message: error.message };
}

const auth = `maxauth: ${Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64')}\r\n`;

describe('listener limits', () => {
  let storage: Storage;
  let app: FastifyInstance;
  let port: number;

  before(async () => {
    storage = await openTestStorage();
    ({ app } = await buildApp(
      testConfig({
        EAS_REQUEST_TIMEOUT_SECONDS: '1.5',
        EAS_HEADERS_TIMEOUT_SECONDS: '1',
        EAS_MAX_CONNECTIONS: '20',
        EAS_MAX_HEADER_BYTES: '4096',
      }),
      storage,
    ));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  after(async () => {
    await app.close();
    await storage.close();
  });

  test('headers that do not arrive in time: 408 EAS0408E naming the limits, connection closed', async () => {
    const result = await exchange(port, ['GET /maximo/oslc/os/mxapiasset HTTP/1.1\r\n', 'Host: x\r\n'], 3000);
    assert.ok(result.closed, 'the server closed the connection');
    const error = errorOf(result.text);
    assert.equal(error.status, 408);
    assert.equal(error.reasonCode, 'EAS0408E');
    assert.match(error.message, /1 seconds for the headers and 1\.5 seconds for the whole request/);
  });

  test('a body trickled byte by byte is cut off at the request timeout', async () => {
    const head =
      'POST /maximo/oslc/os/mxapiasset?lean=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `${auth}Content-Length: 1000\r\n\r\n`;
    const trickle = Array.from({ length: 100 }, () => ' ');
    const result = await exchange(port, [head, ...trickle], 400);
    assert.ok(result.closed, 'the server closed the connection');
    const error = errorOf(result.text);
    assert.equal(error.status, 408);
    assert.equal(error.reasonCode, 'EAS0408E');
  });

  test('a request line and headers beyond the limit: 431 EAS0431E naming the limit', async () => {
    const longUrl = `/maximo/oslc/os/mxapiasset?oslc.where=${'a'.repeat(5000)}`;
    const result = await exchange(port, [`GET ${longUrl} HTTP/1.1\r\nHost: x\r\n\r\n`]);
    const error = errorOf(result.text);
    assert.equal(error.status, 431);
    assert.equal(error.reasonCode, 'EAS0431E');
    assert.match(error.message, /limit of 4096 bytes/);
  });

  test('a malformed request: 400 error object', async () => {
    const result = await exchange(port, ['NOT HTTP AT ALL\r\n\r\n']);
    const error = errorOf(result.text);
    assert.equal(error.status, 400);
    assert.equal(error.reasonCode, 'EAS0004E');
  });

  test('an Expect header other than 100-continue: 417 error object', async () => {
    const result = await exchange(port, [
      'GET /maximo/oslc/os/mxapiasset HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n',
    ]);
    const error = errorOf(result.text);
    assert.equal(error.status, 417);
    assert.equal(error.reasonCode, 'EAS0417E');
  });

  test('a form body beyond its own limit: 413 naming that limit, not the JSON body limit', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/maximo/j_security_check',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `j_username=MAXADMIN&j_password=${'x'.repeat(20_000)}`,
    });
    assert.equal(response.statusCode, 413);
    const error = (JSON.parse(response.body) as { Error: { reasonCode: string; message: string } }).Error;
    assert.equal(error.reasonCode, 'EAS0005E');
    assert.match(error.message, /limit of 16384 bytes/);
  });

  test('connections above the cap are closed as they arrive', async () => {
    const held: Socket[] = [];
    try {
      for (let index = 0; index < 20; index++) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        held.push(socket);
      }
      // Let the server register every held connection before the next one arrives.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const result = await exchange(port, ['GET /maximo/oslc/os/mxapiasset HTTP/1.1\r\nHost: x\r\n\r\n']);
      assert.ok(result.closed);
      assert.equal(result.text, '', 'no answer: the connection was refused');
    } finally {
      for (const socket of held) socket.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await exchange(port, [
      `GET /maximo/oslc/os/mxapiasset?lean=1 HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`,
    ]);
    assert.match(after.text, /^HTTP\/1\.1 200 /, 'served again once below the cap');
  });
});
