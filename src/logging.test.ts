import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Storage } from './db/database.js';
import { testConfig } from '../test/helpers/app.js';
import { openTestStorage } from '../test/helpers/storage.js';

interface LogLine {
  level: number;
  msg?: string;
  reqId?: string;
  err?: { message?: string };
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

/** An app logging at `level` into memory, with a public route that fails unexpectedly. */
async function appLoggingAt(storage: Storage, level: string) {
  const lines: LogLine[] = [];
  const { app } = await buildApp(testConfig({ EAS_LOG_LEVEL: level }), storage, {
    write: (line) => void lines.push(JSON.parse(line) as LogLine),
  });
  app.get('/boom', { config: { access: { kind: 'public' } } }, () => {
    throw new Error('disk on fire');
  });
  app.get('/talk', { config: { access: { kind: 'public' } } }, async (request) => {
    request.log.warn('something to say');
    request.log.debug('chatter');
    return { said: true };
  });
  await app.ready();
  return { app, lines };
}

describe('request logging', () => {
  let storage: Storage;
  const apps: FastifyInstance[] = [];
  before(async () => {
    storage = await openTestStorage();
  });
  after(async () => {
    for (const app of apps) await app.close();
    await storage.close();
  });

  for (const level of ['warn', 'info']) {
    test(`at ${level}, a failed request is logged with its request id`, async () => {
      const { app, lines } = await appLoggingAt(storage, level);
      apps.push(app);
      const response = await app.inject({ url: '/boom' });
      assert.equal(response.statusCode, 500);
      const failures = lines.filter((line) => line.msg === 'request failed');
      assert.equal(failures.length, 1);
      assert.equal(failures[0]!.err?.message, 'disk on fire');
      assert.match(String(failures[0]!.reqId), /^[0-9a-f-]{36}$/);
      // At info every request is logged (through a child logger naming it); at warn none is.
      const completed = lines.filter((line) => line.msg === 'request completed');
      assert.equal(completed.length, level === 'info' ? 1 : 0);
      if (level === 'info') assert.equal(completed[0]!.reqId, failures[0]!.reqId);
    });
  }

  for (const level of ['warn', 'info']) {
    test(`at ${level}, every log line of a request names the x-request-id it came with, echoed in the answer`, async () => {
      const { app, lines } = await appLoggingAt(storage, level);
      apps.push(app);
      const id = 'trace-4bf92f3577b34da6.a3ce929d0e0e4736:01';
      const response = await app.inject({ url: '/talk', headers: { 'x-request-id': id } });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['x-request-id'], id);
      const said = lines.filter((line) => line.msg === 'something to say');
      assert.equal(said.length, 1);
      assert.equal(said[0]!.reqId, id);
      assert.equal(
        lines.filter((line) => line.msg === 'chatter').length,
        0,
        'levels below the logger are off',
      );
      for (const line of lines.filter((logged) => logged.reqId !== undefined)) assert.equal(line.reqId, id);
      if (level === 'info') assert.equal(lines.filter((line) => line.reqId === id).length, 2);
    });
  }

  test('at info, one line per request: method, redacted URL, status and time, with its request id', async () => {
    const { app, lines } = await appLoggingAt(storage, 'info');
    apps.push(app);
    lines.length = 0;
    const response = await app.inject({
      url: '/maximo/oslc/os/mxapiasset?lean=1&apikey=0123456789abcdef0123456789abcdef0123456789abcdef',
      headers: { 'x-request-id': 'one-line-1' },
    });
    assert.ok(response.statusCode >= 400, 'an unknown key is refused');
    const ofRequest = lines.filter((line) => line.reqId === 'one-line-1');
    assert.deepEqual(
      ofRequest.map((line) => line.msg),
      ['request completed'],
      'no separate incoming-request line',
    );
    const line = ofRequest[0]!;
    assert.equal(line.req?.method, 'GET');
    assert.equal(line.req?.url, '/maximo/oslc/os/mxapiasset?lean=1&apikey=[redacted]');
    assert.equal(line.res?.statusCode, response.statusCode);
    assert.equal(typeof line.responseTime, 'number');
  });

  test('an unsafe or missing x-request-id is replaced by a generated one; refusals carry it too', async () => {
    const { app, lines } = await appLoggingAt(storage, 'warn');
    apps.push(app);
    const seen = new Set<string>();
    for (const sent of [undefined, '', 'a b', 'x'.repeat(129), 'line\u2028break', 'quote"d', '<script>']) {
      const response = await app.inject({
        url: '/talk',
        headers: sent === undefined ? {} : { 'x-request-id': sent },
      });
      const id = String(response.headers['x-request-id']);
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, String(sent));
      assert.equal(lines.at(-1)!.reqId, id);
      seen.add(id);
    }
    assert.equal(seen.size, 7, 'each request gets its own');
    const refused = await app.inject({
      url: '/maximo/oslc/whoami',
      headers: { 'x-request-id': 'refused-1' },
    });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['x-request-id'], 'refused-1');
    const unknown = await app.inject({ url: '/maximo/nowhere', headers: { 'x-request-id': 'lost-1' } });
    assert.equal(unknown.headers['x-request-id'], 'lost-1');
  });

  test('the header is written X-Request-Id on the wire, as the application server spells it', async () => {
    const { app } = await appLoggingAt(storage, 'warn');
    apps.push(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const rawHeaders = await new Promise<string[]>((resolve, reject) => {
      httpRequest(
        { port, host: '127.0.0.1', path: '/talk', headers: { 'x-request-id': 'wire-1' } },
        (response) => {
          response.resume();
          resolve(response.rawHeaders);
        },
      )
        .on('error', reject)
        .end();
    });
    const at = rawHeaders.indexOf('X-Request-Id');
    assert.ok(at >= 0, rawHeaders.join(' '));
    assert.equal(rawHeaders[at + 1], 'wire-1');
  });
});
