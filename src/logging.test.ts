import assert from 'node:assert/strict';
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
      assert.match(String(failures[0]!.reqId), /^req-/);
      // At info every request is logged (through a child logger naming it); at warn none is.
      const completed = lines.filter((line) => line.msg === 'request completed');
      assert.equal(completed.length, level === 'info' ? 1 : 0);
      if (level === 'info') assert.equal(completed[0]!.reqId, failures[0]!.reqId);
    });
  }
});
