import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { sql, type RawBuilder } from 'kysely';
import { toMaximoError } from '../app.js';
import { databaseInputError } from '../db/constraint-errors.js';
import { isMaximoError, type MaximoError } from '../errors.js';
import type { ObjectMeta, StructureNode } from '../metadata/registry.js';
import { ColumnLimits, numberRange } from './column-limits.js';
import { formatDate, parseIsoDate } from './values.js';

/**
 * Input that would break a database constraint is refused by validation first, with a 400 naming the attribute:
 * NOT NULL columns sent as null, integers and decimals beyond their column, ids beyond the id column, impossible
 * dates and dates outside the years 0001 to 9999. What still reaches the database is answered 400, never 500.
 */

const ASSETS = '/maximo/oslc/os/mxapiasset';
const headers = { ...maxauth('MAXADMIN'), 'content-type': 'application/json' };

function assertRefused(
  response: LightMyRequestResponse,
  status: number,
  reasonCode: string,
  attr?: string,
): void {
  assert.equal(response.statusCode, status, response.body);
  const error = json(response).Error;
  assert.equal(error?.reasonCode, reasonCode, response.body);
  assert.equal(error?.statusCode, String(status));
  if (attr !== undefined) assert.equal(error?.errorattrname, attr, response.body);
}

function refusal(work: () => void): MaximoError {
  try {
    work();
  } catch (error) {
    if (isMaximoError(error)) return error;
    throw error;
  }
  assert.fail('not refused');
}

describe('input limits before the database', () => {
  let t: TestApp;
  let limits: ColumnLimits;
  let counter = 0;
  const call = (options: InjectOptions) => t.app.inject(options);
  const create = (body: Record<string, unknown>) =>
    call({
      method: 'POST',
      url: `${ASSETS}?lean=1`,
      headers: { ...headers, properties: 'assetnum,installdate' },
      payload: JSON.stringify({ assetnum: `LIM${++counter}`, siteid: 'BEDFORD', ...body }),
    });

  before(async () => {
    t = await startTestApp();
    limits = await ColumnLimits.load(t.storage.db);
  });
  after(() => t.close());

  test('null for a NOT NULL attribute on create and on update: 400 BMXAA4195E naming it', async () => {
    assertRefused(await create({ status: null }), 400, 'BMXAA4195E', 'status');
    const created = await create({});
    assert.equal(created.statusCode, 201, created.body);
    const href = String(created.headers.location);
    const update = await call({
      method: 'POST',
      url: `${new URL(href).pathname}?lean=1`,
      headers: { ...headers, 'x-method-override': 'PATCH' },
      payload: JSON.stringify({ status: null }),
    });
    assertRefused(update, 400, 'BMXAA4195E', 'status');
  });

  test('numbers beyond their column: 400 naming the attribute', async () => {
    assertRefused(await create({ priority: 2147483648 }), 400, 'EAS0010E', 'priority');
    assertRefused(await create({ purchaseprice: 1e12 }), 400, 'EAS0018E', 'purchaseprice');
    assertRefused(await create({ purchaseprice: -100000000 }), 400, 'EAS0018E', 'purchaseprice');
    assert.equal((await create({ purchaseprice: 99999999.99 })).statusCode, 201);
  });

  test('an INTEGER attribute takes both ends of its range, and nothing beyond them', async () => {
    for (const priority of [-2147483648, 2147483647]) {
      const created = await call({
        method: 'POST',
        url: `${ASSETS}?lean=1`,
        headers: { ...headers, properties: 'priority' },
        payload: JSON.stringify({ assetnum: `LIM${++counter}`, siteid: 'BEDFORD', priority }),
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(json(created).priority, priority, 'stored exactly');
    }
    assertRefused(await create({ priority: -2147483649 }), 400, 'EAS0010E', 'priority');
  });

  test('text with a lone surrogate is refused with 400 naming the attribute, never stored as U+FFFD', async () => {
    // Written by hand: JSON.stringify would escape the surrogate the same way, the point is the wire text.
    const raw = (fields: string) =>
      call({
        method: 'POST',
        url: `${ASSETS}?lean=1`,
        headers,
        payload: `{"siteid":"BEDFORD",${fields}}`,
      });
    const description = await raw(`"assetnum":"LIM${++counter}","description":"\\ud800X"`);
    assert.equal(description.statusCode, 400, description.body);
    assert.equal(json(description).Error?.errorattrname, 'description', description.body);
    for (const key of ['SUR\\ud800', 'SUR\\udfff']) {
      const response = await raw(`"assetnum":"${key}"`);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(json(response).Error?.errorattrname, 'assetnum', response.body);
    }
    const paired = await raw(`"assetnum":"LIM${++counter}","description":"\\ud83d\\ude00"`);
    assert.equal(paired.statusCode, 201, `a surrogate pair is one character: ${paired.body}`);
  });

  test('a numeric id beyond the id column names no record: 404, not 500', async () => {
    for (const id of ['2147483648', '99999999999999']) {
      assertRefused(await call({ url: `${ASSETS}/${id}?lean=1`, headers }), 404, 'BMXAA8727E');
      const patch = await call({
        method: 'POST',
        url: `${ASSETS}/${id}?lean=1`,
        headers: { ...headers, 'x-method-override': 'PATCH' },
        payload: '{}',
      });
      assertRefused(patch, 404, 'BMXAA8727E');
      assertRefused(
        await call({ method: 'DELETE', url: `${ASSETS}/${id}`, headers: maxauth('MAXADMIN') }),
        404,
        'BMXAA8727E',
      );
    }
  });

  test('every column of every object: null, range and length are checked before the database', () => {
    const objects = new Map<string, ObjectMeta>();
    const walk = (node: StructureNode) => {
      objects.set(node.object.name, node.object);
      node.children.forEach(walk);
    };
    t.services.metadata.objectStructures().forEach((structure) => walk(structure.root));
    let checked = 0;
    for (const object of objects.values()) {
      for (const attribute of object.attributes.values()) {
        const column = limits.column(object, attribute.name);
        if (!column) continue;
        const name = attribute.name;
        if (!column.nullable) {
          const error = refusal(() => limits.check(object, { [name]: null }));
          assert.equal(error.reasonCode, 'BMXAA4195E', `${object.name}.${name}`);
          assert.equal(error.detail.attrName, name);
          checked += 1;
        }
        const range = numberRange(column);
        if (range) {
          for (const value of [range[1] + 1, range[0] - 1]) {
            const error = refusal(() => limits.check(object, { [name]: value }));
            assert.equal(error.reasonCode, 'EAS0018E', `${object.name}.${name} = ${value}`);
            assert.equal(error.detail.attrName, name);
          }
          limits.check(object, { [name]: range[1] });
          checked += 1;
        }
        if (column.maxLength !== null) {
          const error = refusal(() => limits.check(object, { [name]: 'x'.repeat(column.maxLength! + 1) }));
          assert.equal(error.reasonCode, 'EAS0011E', `${object.name}.${name}`);
          assert.equal(error.detail.attrName, name);
          checked += 1;
        }
      }
    }
    assert.ok(checked > 50, `${checked} column limits checked`);
  });

  test('what still reaches a database constraint is answered 400, never 500', async () => {
    // Real errors of the database in use, as the error handler receives them.
    const raised = async (statement: RawBuilder<unknown>) => {
      try {
        await statement.execute(t.storage.db);
      } catch (error) {
        return toMaximoError(error);
      }
      assert.fail('the database accepted it');
    };
    for (const statement of [
      sql`select ${'2147483648'}::integer`,
      sql`select ${'2020-02-30'}::timestamptz`,
      sql`insert into maxgroup (groupname) values (null)`,
    ]) {
      const error = await raised(statement);
      assert.equal(error.status, 400, error.message);
      assert.equal(error.reasonCode, 'EAS0004E');
    }
    assert.equal(databaseInputError({ code: '23502', column: 'status' })?.detail.attrName, 'status');
    assert.equal(databaseInputError({ code: '22003' })?.status, 400);
    assert.equal(databaseInputError({ code: '23514' })?.status, 400);
    assert.equal(databaseInputError({ code: '23505' })?.reasonCode, 'BMXAA4129E');
    assert.equal(databaseInputError({ code: '57P01' }), undefined);
    assert.equal(databaseInputError(new Error('x')), undefined);
  });
});

describe('dates', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('impossible dates are refused, not rolled over; leap years are respected', () => {
    for (const text of [
      '2020-02-30',
      '2021-02-29',
      '1900-02-29',
      '2020-04-31',
      '2020-13-01',
      '2020-00-10',
      '2020-01-01T24:00:00Z',
      '2020-01-01T10:60:00Z',
      '0000-01-01',
      '0001-01-01T00:00:00+01:00',
      '9999-12-31T23:59:59-01:00',
    ]) {
      assert.equal(parseIsoDate(text), undefined, text);
    }
    assert.equal(parseIsoDate('2020-02-29')?.toISOString(), '2020-02-29T00:00:00.000Z');
    assert.equal(parseIsoDate('2000-02-29T12:00:00+02:00')?.toISOString(), '2000-02-29T10:00:00.000Z');
    assert.equal(formatDate(parseIsoDate('0044-03-15T12:00:00Z')!), '0044-03-15T12:00:00+00:00');
  });

  test('2020-02-30 in a body: 400 naming the attribute', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: `${ASSETS}?lean=1`,
      headers,
      payload: JSON.stringify({ assetnum: 'DATEBAD', siteid: 'BEDFORD', installdate: '2020-02-30' }),
    });
    assertRefused(response, 400, 'EAS0010E', 'installdate');
  });

  for (const [index, date] of [
    '0001-01-01T00:00:00+00:00',
    '0099-07-04T08:30:00+00:00',
    '0999-06-01T00:00:00+00:00',
    '1582-10-10T00:00:00+00:00',
    '2024-02-29T23:59:59+00:00',
    '9999-12-31T23:59:59+00:00',
  ].entries()) {
    test(`${date} is stored, read back as written and found by a query`, async () => {
      const assetnum = `DATE${index}`;
      const created = await t.app.inject({
        method: 'POST',
        url: `${ASSETS}?lean=1`,
        headers,
        payload: JSON.stringify({ assetnum, siteid: 'BEDFORD', installdate: date }),
      });
      assert.equal(created.statusCode, 201, created.body);
      const where = encodeURIComponent(`assetnum="${assetnum}" and installdate="${date}"`);
      const found = await t.app.inject({
        url: `${ASSETS}?lean=1&oslc.select=assetnum,installdate&oslc.where=${where}`,
        headers,
      });
      assert.equal(found.statusCode, 200, found.body);
      assert.deepEqual(
        json(found).member?.map((member) => member.installdate),
        [date],
      );
    });
  }
});
