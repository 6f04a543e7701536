import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { json, startTestApp, type TestApp } from '../test/helpers/app.js';
import { toMaximoError } from './app.js';
import { errors, isMaximoError, REASONS, type ReasonCode } from './errors.js';

/** The reason table, the page that documents it, and the route the error objects link to. */

const docsUrl = new URL('../docs/errors.md', import.meta.url);

describe('the reason table', () => {
  test('docs/errors.md lists every code of the table, with its status, and no other', async () => {
    const page = await readFile(docsUrl, 'utf8');
    const rows = new Map<string, number>();
    for (const match of page.matchAll(/^\| \[([A-Z]+[0-9]+[EIW])\]\(#([a-z0-9]+)\) *\| (\d{3}) /gm)) {
      const [, code, anchor, status] = match;
      assert.equal(anchor, code!.toLowerCase(), `anchor of ${code}`);
      assert.ok(!rows.has(code!), `${code} is listed twice`);
      rows.set(code!, Number(status));
    }
    const sections = new Set([...page.matchAll(/^### ([A-Z]+[0-9]+[EIW])$/gm)].map((match) => match[1]!));
    const codes = Object.keys(REASONS).sort();
    assert.deepEqual([...rows.keys()].sort(), codes, 'the table of docs/errors.md');
    assert.deepEqual([...sections].sort(), codes, 'the sections of docs/errors.md');
    for (const code of codes) {
      assert.equal(rows.get(code), REASONS[code as ReasonCode].status, `status of ${code}`);
    }
  });

  test('every factory takes its status from the table; only If-Match answers its code with 412', () => {
    const made = new Map<string, number>();
    for (const [name, factory] of Object.entries(errors)) {
      // Every argument a factory reads is a string, a number or a pair of numbers; none changes the code.
      const args = Array.from({ length: factory.length }, () => 'X');
      if (name === 'outOfRange') args[2] = [0, 1] as unknown as string;
      if (name === 'propertyScope') args[2] = 'global';
      const error = (factory as (...values: unknown[]) => unknown)(...args);
      assert.ok(isMaximoError(error), name);
      made.set(name, error.status);
      if (name === 'preconditionFailed') {
        assert.equal(error.status, 412);
        assert.equal(error.reasonCode, 'BMXAA8229W');
      } else {
        assert.equal(error.status, REASONS[error.reasonCode].status, name);
      }
      assert.equal(error.message, `${error.reasonCode} - ${error.text}`);
    }
    assert.ok(made.size > 60, `${made.size} factories`);
  });

  test('a body over the limit names the limit it was held to', () => {
    const refused = Object.assign(new Error('Request body is too large'), {
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
      statusCode: 413,
    });
    const error = toMaximoError(refused, 2048);
    assert.equal(error.status, 413);
    assert.equal(error.reasonCode, 'EAS0005E');
    assert.equal(error.text, 'The request body is larger than the limit of 2048 bytes.');
  });
});

describe('GET <root>/error/messages/<code>', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t.close();
  });

  test('answers every code of the table with its section of docs/errors.md', async () => {
    for (const code of Object.keys(REASONS)) {
      const response = await t.app.inject({ url: `/maximo/oslc/error/messages/${code}` });
      assert.equal(response.statusCode, 200, code);
      assert.deepEqual(json(response), {
        reasonCode: code,
        documentation: `docs/errors.md#${code.toLowerCase()}`,
      });
    }
  });

  test('answers 404 EAS0001E for a code the service does not send', async () => {
    for (const code of ['BMXAA0000E', 'EAS9999E', 'BMXAA7901W', 'ABC1234E']) {
      const response = await t.app.inject({ url: `/maximo/oslc/error/messages/${code}` });
      assert.equal(response.statusCode, 404, code);
      assert.equal(json(response).Error?.reasonCode, 'EAS0001E', code);
    }
  });
});
