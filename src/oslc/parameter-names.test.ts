import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * Query parameter names as clients spell them (docs/compatibility.md, "Query parameter names"), sent exactly as
 * those clients send them: a Node-RED node's `addSchema=1`, IBM's Python client's quoted `searchAttributes`.
 */

const admin = maxauth('MAXADMIN');
const ASSETS = '/maximo/oslc/os/mxapiasset';

describe('query parameter names in any case', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const get = async (query: string) => {
    const response = await t.app.inject({ url: `${ASSETS}?${query}`, headers: admin });
    assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
    return json(response);
  };

  test('addSchema=1, ADDSCHEMA=1 and addschema=1 give the same answer, with the schema', async () => {
    const base = 'lean=1&oslc.select=assetnum,description&oslc.pageSize=2&oslc.orderBy=%2Bassetnum';
    const expected = await get(`${base}&addschema=1`);
    const info = expected.responseInfo as { schema?: { properties?: Record<string, unknown> } };
    assert.ok(info.schema?.properties?.assetnum, 'addschema=1 answers the schema');
    for (const spelled of ['addSchema', 'ADDSCHEMA', 'AddSchema']) {
      assert.deepEqual(await get(`${base}&${spelled}=1`), expected, spelled);
    }
  });

  test('the OSLC parameters in other cases are the same parameters', async () => {
    const expected = await get(
      'lean=1&oslc.select=assetnum,status&oslc.where=status%3D%22OPERATING%22&oslc.orderBy=-assetnum&oslc.pageSize=3',
    );
    assert.equal((expected.member as unknown[]).length, 3);
    const spelled = await get(
      'LEAN=1&OSLC.SELECT=assetnum,status&oslc.WHERE=status%3D%22OPERATING%22&oslc.orderby=-assetnum&oslc.pagesize=3',
    );
    assert.deepEqual(spelled, expected);
  });

  test('quoted searchAttributes with a trailing comma give the same rows as the bare names', async () => {
    const bare = await get('lean=1&oslc.select=assetnum&oslc.searchTerms=pump&searchAttributes=description');
    assert.ok((bare.member as unknown[]).length > 0, 'the search finds rows');
    // As IBM's Python client sends it: the names quoted, the list ended with a comma.
    for (const attributes of ['%22description%22,', '"description",', "'description'", 'searchattributes']) {
      const query =
        attributes === 'searchattributes'
          ? 'lean=1&oslc.select=assetnum&OSLC.SEARCHTERMS=pump&SearchAttributes=%22DESCRIPTION%22'
          : `lean=1&oslc.select=assetnum&oslc.searchTerms=pump&searchAttributes=${attributes}`;
      assert.deepEqual((await get(query)).member, bare.member, attributes);
    }
  });

  test('parameters a route schema names are read in any case too', async () => {
    const response = await t.app.inject({
      url: '/maximo/oslc/service/system?ACTION=wsmethod:getProperty&PropName=mxe.oslc.maxpagesize',
      headers: admin,
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json(response), { return: '1000' });
  });

  test('savedQuery stays case-sensitive, as on the deployed systems: savedquery is ignored', async () => {
    const all = await get('lean=1&oslc.select=assetnum&oslc.pageSize=1&collectioncount=1');
    const ignored = await get(
      'lean=1&oslc.select=assetnum&oslc.pageSize=1&collectioncount=1&savedquery=NO_SUCH_QUERY',
    );
    assert.deepEqual(ignored.member, all.member);
    assert.deepEqual(
      (ignored.responseInfo as Record<string, unknown>).totalCount,
      (all.responseInfo as Record<string, unknown>).totalCount,
    );
    const refused = await t.app.inject({ url: `${ASSETS}?savedQuery=NO_SUCH_QUERY`, headers: admin });
    assert.notEqual(refused.statusCode, 200);
  });
});
