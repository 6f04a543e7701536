import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';

/**
 * BULK with the `allornothing: 1` header (docs/compatibility.md, "BULK and SYNC"): one transaction; one failed
 * element and nothing is written, every element answering its own status.
 */

type Item = Record<string, unknown> & {
  _responsemeta?: Record<string, string>;
  _responsedata?: { Error?: Record<string, unknown> };
};

const admin = maxauth('MAXADMIN');
const ASSETS = '/maximo/oslc/os/mxapiasset';

describe('BULK allornothing', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  const bulk = async (
    url: string,
    body: unknown[],
    headers: Record<string, string> = {},
  ): Promise<Item[]> => {
    const response = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...admin, 'x-method-override': 'BULK', allornothing: '1', ...headers },
      payload: body,
    });
    assert.equal(response.statusCode, 200, response.body);
    return JSON.parse(response.body) as Item[];
  };
  const assets = (prefix: string) =>
    db
      .selectFrom('asset')
      .select(['assetnum', 'description'])
      .where('assetnum', 'like', `${prefix}%`)
      .orderBy('assetnum')
      .execute();

  test('one bad element: nothing written, the bad one answers its error, the others EAS0075E', async () => {
    const existing = await t.app.inject({
      method: 'POST',
      url: ASSETS,
      headers: admin,
      payload: { assetnum: 'AON0', siteid: 'BEDFORD', description: 'Before' },
    });
    assert.equal(existing.statusCode, 201, existing.body);
    const href = String(existing.headers.location);
    const answer = await bulk(`${ASSETS}?lean=1`, [
      { assetnum: 'AON1', siteid: 'BEDFORD', description: 'First' },
      { _action: 'Update', href, description: 'Changed' },
      { assetnum: 'AON2', siteid: 'NOSITE', description: 'Bad site' },
      // A database-level failure after the bad element: the key AON1 was just taken by the first element.
      { assetnum: 'AON1', siteid: 'BEDFORD', description: 'Duplicate' },
      { assetnum: 'AON3', siteid: 'NASHUA', description: 'Last' },
    ]);
    assert.equal(answer.length, 5);
    assert.deepEqual(
      answer.map((item) => [item._responsemeta?.status, item._responsedata?.Error?.reasonCode]),
      [
        ['400', 'EAS0075E'],
        ['400', 'EAS0075E'],
        ['400', 'BMXAA4153E'],
        ['400', 'BMXAA4129E'],
        ['400', 'EAS0075E'],
      ],
    );
    assert.match(String(answer[0]!._responsedata?.Error?.message), /element 2, 3 /);
    assert.deepEqual(await assets('AON'), [{ assetnum: 'AON0', description: 'Before' }]);
  });

  test('all elements good: all written in one transaction, answered as one by one', async () => {
    const answer = await bulk(`${ASSETS}?lean=1`, [
      { assetnum: 'AOK1', siteid: 'BEDFORD', description: 'One' },
      { _data: { assetnum: 'AOK2', siteid: 'NASHUA', description: 'Two' } },
      // A later element may use what an earlier one wrote.
      { assetnum: 'AOK3', siteid: 'BEDFORD', description: 'Three', parent: 'AOK1' },
    ]);
    assert.deepEqual(
      answer.map((item) => item._responsemeta?.status),
      ['201', '201', '201'],
    );
    for (const item of answer) assert.match(String(item._responsemeta?.Location), /\/os\/mxapiasset\/_/);
    assert.deepEqual(
      (await assets('AOK')).map((row) => row.assetnum),
      ['AOK1', 'AOK2', 'AOK3'],
    );
    const updated = await bulk(
      `${ASSETS}?lean=1`,
      [
        { _action: 'Update', href: answer[0]!._responsemeta!.Location, description: 'One changed' },
        { _action: 'Delete', href: answer[2]!._responsemeta!.Location },
      ],
      { properties: 'assetnum,description' },
    );
    assert.deepEqual(
      updated.map((item) => item._responsemeta?.status),
      ['200', '204'],
    );
    const { assetnum, description } = updated[0]!._responsedata as Record<string, unknown>;
    assert.deepEqual({ assetnum, description }, { assetnum: 'AOK1', description: 'One changed' });
    assert.deepEqual(
      (await assets('AOK')).map((row) => [row.assetnum, row.description]),
      [
        ['AOK1', 'One changed'],
        ['AOK2', 'Two'],
      ],
    );
  });

  test('an element without the right fails the request; without the header each element stands alone', async () => {
    const wilson = maxauth('WILSON');
    const refused = await bulk(
      '/maximo/oslc/os/mxapiitem?lean=1',
      [{ itemnum: 'AONITEM', itemsetid: 'SET1', description: 'Read-only for MAINT' }],
      wilson,
    );
    assert.equal(refused[0]!._responsedata?.Error?.reasonCode, 'BMXAA9301E');
    const separate = await t.app.inject({
      method: 'POST',
      url: `${ASSETS}?lean=1`,
      headers: { ...admin, 'x-method-override': 'BULK' },
      payload: [
        { assetnum: 'ASEP1', siteid: 'BEDFORD' },
        { assetnum: 'ASEP2', siteid: 'NOSITE' },
      ],
    });
    assert.deepEqual(
      (JSON.parse(separate.body) as Item[]).map((item) => item._responsemeta?.status),
      ['201', '400'],
    );
    assert.deepEqual(
      (await assets('ASEP')).map((row) => row.assetnum),
      ['ASEP1'],
    );
  });
});
