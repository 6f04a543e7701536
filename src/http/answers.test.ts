import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { listenOnFreePort } from '../../test/helpers/raw-http.js';
import { REFUSED_BODY_DRAIN_BYTES } from './limits.js';

/**
 * What a client reads on a real connection (inject() has no socket): answers in request order whatever bytes
 * follow a request, and the 413 of an oversized body read by a client still sending it (docs/compatibility.md,
 * "Answer order", "Refused bodies").
 */

const admin = maxauth('MAXADMIN');
const ASSETS = '/maximo/oslc/os/mxapiasset';
const MIB = 1024 * 1024;

interface Conversation {
  received: string;
  /** Body bytes the server took before the connection ended or the body was sent. */
  sent: number;
  writeError: string | undefined;
}

/**
 * Sends `head`, then `bodyBytes` of body in 64 KiB pieces (pausing after the first MiB, so that the answer comes
 * while the client is still sending), then `after`; reads until the server closes or `quietMs` pass silently.
 */
async function converse(
  port: number,
  head: string,
  bodyBytes: number,
  after = '',
  quietMs = 1500,
): Promise<Conversation> {
  const socket: Socket = connect(port, '127.0.0.1');
  let received = '';
  let sent = 0;
  let writeError: string | undefined;
  let quiet: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    const rearm = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => resolve(), quietMs);
    };
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
      rearm();
    });
    socket.on('close', () => resolve());
    socket.on('error', (error: NodeJS.ErrnoException) => (writeError ??= error.code ?? String(error)));
    rearm();
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(head);
  const piece = Buffer.alloc(64 * 1024, 'a');
  while (sent < bodyBytes && !socket.destroyed) {
    const ok = socket.write(piece);
    sent += piece.length;
    if (sent === MIB) await new Promise((resolve) => setTimeout(resolve, 300));
    if (!ok) await drainedOrClosed(socket);
  }
  if (after && !socket.destroyed) socket.write(after);
  await done;
  clearTimeout(quiet);
  socket.destroy();
  return { received, sent, writeError };
}

async function drainedOrClosed(socket: Socket): Promise<void> {
  await new Promise<void>((resolve) => {
    const settle = () => {
      socket.off('drain', settle).off('close', settle);
      resolve();
    };
    socket.on('drain', settle).on('close', settle);
  });
}

/** The status lines of every answer in `received`, in order. */
function statuses(received: string): number[] {
  return [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
}

describe('answers on a connection', () => {
  let t: TestApp;
  let port: number;
  let site: string;
  before(async () => {
    t = await startTestApp();
    port = await listenOnFreePort(t.app);
    site = (await sql<{ siteid: string }>`select siteid from asset limit 1`.execute(t.storage.db)).rows[0]!
      .siteid;
  });
  after(() => t.close());

  const createAsset = async (assetnum: string): Promise<string> => {
    const response = await t.app.inject({
      method: 'POST',
      url: ASSETS,
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ assetnum, siteid: site }),
    });
    assert.equal(response.statusCode, 201, response.body);
    return new URL(String(response.headers.location)).pathname;
  };

  test('a DELETE followed by the bytes `null` (no Content-Length): its 204 is read first, then the 400', async () => {
    const path = await createAsset('ORDERDEL1');
    const { received } = await converse(
      port,
      `DELETE ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nmaxauth: ${admin.maxauth}\r\n\r\nnull`,
      0,
    );
    assert.deepEqual(statuses(received), [204, 400], received);
    assert.match(received.slice(received.indexOf('HTTP/1.1 400')), /"reasonCode":"EAS0004E"/);
    const gone = await t.app.inject({ method: 'GET', url: `${path}?lean=1`, headers: admin });
    assert.equal(gone.statusCode, 404, 'the delete was applied');
  });

  test('pipelined requests followed by stray bytes: every answer in request order, the refusal last', async () => {
    const first = await createAsset('ORDERDEL2');
    const request = (method: string, path: string) =>
      `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nmaxauth: ${admin.maxauth}\r\n\r\n`;
    const { received } = await converse(
      port,
      request('GET', `${ASSETS}?lean=1&oslc.pageSize=1`) + request('DELETE', first) + 'null',
      0,
    );
    assert.deepEqual(statuses(received), [200, 204, 400], received);
  });

  test('a 12 MB body sent with fetch, 50 times in a row: the client reads the 413 and its error object', async () => {
    const body = Buffer.alloc(12 * 1000 * 1000, ' ');
    for (let attempt = 1; attempt <= 50; attempt++) {
      let status: number;
      let text: string;
      try {
        const response = await fetch(`http://127.0.0.1:${port}${ASSETS}?lean=1`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body,
        });
        status = response.status;
        text = await response.text();
      } catch (error) {
        const cause = (error as Error & { cause?: unknown }).cause;
        assert.fail(`attempt ${attempt}: ${String(error)} (${String(cause)})`);
      }
      assert.equal(status, 413, `attempt ${attempt}: ${text}`);
      const error = (JSON.parse(text) as { Error: { reasonCode: string; statusCode: string } }).Error;
      assert.equal(error.reasonCode, 'EAS0005E', `attempt ${attempt}`);
      assert.equal(error.statusCode, '413');
    }
  });

  test('an oversized body on a raw socket: answered 413 while sent, read to its end, the connection reusable', async () => {
    const size = 12 * MIB;
    const { received, sent, writeError } = await converse(
      port,
      `POST ${ASSETS}?lean=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${`maxauth: ${admin.maxauth}\r\n`}` +
        `Content-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`,
      size,
      `GET ${ASSETS}?lean=1&oslc.pageSize=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nmaxauth: ${admin.maxauth}\r\n` +
        'Connection: close\r\n\r\n',
    );
    assert.equal(writeError, undefined, 'the server read the whole body');
    assert.equal(sent, size);
    assert.deepEqual(statuses(received), [413, 200], received.slice(0, 500));
    assert.match(received, /"reasonCode":"EAS0005E"/);
  });

  test('a refused body beyond the discard bound: the connection is closed once the bound is read', async () => {
    const size = 2 * REFUSED_BODY_DRAIN_BYTES;
    const { received, sent } = await converse(
      port,
      `POST ${ASSETS}?lean=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nmaxauth: ${admin.maxauth}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`,
      size,
    );
    assert.deepEqual(statuses(received), [413]);
    assert.ok(sent < size, `closed before the whole body (${sent} of ${size} bytes taken)`);
    assert.ok(sent >= REFUSED_BODY_DRAIN_BYTES, `not before the bound (${sent} bytes taken)`);
  });
});
