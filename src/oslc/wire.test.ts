import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * Writes as existing clients send them (no content type, empty JSON bodies, empty or `null` overrides, a bad
 * `properties` header refused before anything is written) and `spi:` names in the query parameters
 * (docs/compatibility.md, "Content types", "Queries").
 */

const admin = maxauth('MAXADMIN');
const ASSETS = '/maximo/oslc/os/mxapiasset';

describe('forgiving writes', () => {
  let t: TestApp;
  let site: string;
  before(async () => {
    t = await startTestApp();
    site = (await sql<{ siteid: string }>`select siteid from asset limit 1`.execute(t.storage.db)).rows[0]!
      .siteid;
  });
  after(() => t.close());

  const assetCount = async (assetnum: string) =>
    Number(
      (
        await sql<{ n: string }>`select count(*) as n from asset where assetnum = ${assetnum}`.execute(
          t.storage.db,
        )
      ).rows[0]!.n,
    );
  const inject = (options: InjectOptions) => t.app.inject(options);
  /** Creates an asset with a JSON body and answers its address. */
  const create = async (assetnum: string): Promise<string> => {
    const response = await inject({
      method: 'POST',
      url: ASSETS,
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ assetnum, siteid: site }),
    });
    assert.equal(response.statusCode, 201, response.body);
    return new URL(String(response.headers.location)).pathname;
  };

  test('a create whose JSON body has no content type: 201', async () => {
    const response = await inject({
      method: 'POST',
      url: ASSETS,
      headers: admin,
      payload: JSON.stringify({ assetnum: 'WIRENOCT', siteid: site }),
    });
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(await assetCount('WIRENOCT'), 1);
  });

  test('an update without content type, and with an empty or null x-method-override on create', async () => {
    const path = await create('WIREUPD');
    const update = await inject({
      method: 'POST',
      url: path,
      headers: { ...admin, 'x-method-override': 'PATCH' },
      payload: JSON.stringify({ description: 'no content type' }),
    });
    assert.equal(update.statusCode, 204, update.body);
    const nullType = await inject({
      method: 'POST',
      url: ASSETS,
      headers: { ...admin, 'content-type': 'null' },
      payload: JSON.stringify({ assetnum: 'WIRENULLCT', siteid: site }),
    });
    assert.equal(nullType.statusCode, 201, nullType.body);
    for (const [override, assetnum] of [
      ['', 'WIREOV1'],
      ['null', 'WIREOV2'],
    ] as const) {
      const response = await inject({
        method: 'POST',
        url: ASSETS,
        headers: { ...admin, 'content-type': 'application/json', 'x-method-override': override },
        payload: JSON.stringify({ assetnum, siteid: site }),
      });
      assert.equal(response.statusCode, 201, `${override}: ${response.body}`);
    }
  });

  test('DELETE with a JSON content type and no body, or any body: 204', async () => {
    const cases: ReadonlyArray<Omit<InjectOptions, 'url'>> = [
      { method: 'DELETE', headers: { ...admin, 'content-type': 'application/json' }, payload: '' },
      { method: 'DELETE', headers: { ...admin, 'content-type': 'application/json' } },
      { method: 'DELETE', headers: { ...admin, 'content-type': 'application/json' }, payload: '{not json' },
      { method: 'DELETE', headers: { ...admin, 'content-type': 'text/plain' }, payload: 'x' },
      {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json', 'x-method-override': 'DELETE' },
        payload: '',
      },
      { method: 'POST', headers: { ...admin, 'x-method-override': 'delete' }, payload: 'not json' },
    ];
    for (const [index, options] of cases.entries()) {
      const path = await create(`WIREDEL${index}`);
      const response = await inject({ ...options, url: path } as InjectOptions);
      assert.equal(response.statusCode, 204, `case ${index}: ${response.body}`);
      assert.equal(await assetCount(`WIREDEL${index}`), 0);
    }
  });

  test('an explicit content type nothing reads is still 415 on a create', async () => {
    const response = await inject({
      method: 'POST',
      url: ASSETS,
      headers: { ...admin, 'content-type': 'application/xml' },
      payload: '<asset/>',
    });
    assert.equal(response.statusCode, 415);
    assert.equal(json(response).Error?.reasonCode, 'EAS0006E');
  });

  test('a JSON body that is not an object (42, null, a string, true) is refused as such, not as a BULK request', async () => {
    const assets = async () =>
      Number((await sql<{ n: string }>`select count(*) as n from asset`.execute(t.storage.db)).rows[0]!.n);
    const assetsBefore = await assets();
    for (const [index, payload] of ['42', 'null', '"WIRESCALAR"', 'true'].entries())
      for (const headers of [{ 'content-type': 'application/json' }, {}]) {
        const response = await inject({
          method: 'POST',
          url: ASSETS,
          headers: { ...admin, ...headers },
          payload,
        });
        assert.equal(response.statusCode, 400, `case ${index}: ${response.body}`);
        const error = json(response).Error!;
        assert.equal(error.reasonCode, 'EAS0004E');
        assert.match(String(error.message), /must be a JSON object/);
        assert.doesNotMatch(String(error.message), /^EAS0004E - An array body/);
      }
    assert.equal(await assets(), assetsBefore, 'nothing was written');
  });

  test('a text/plain body of JSON is read as JSON on a create and an update; another text type is 415', async () => {
    const body = JSON.stringify({ assetnum: 'WIRETEXT', siteid: site });
    const created = await inject({
      method: 'POST',
      url: ASSETS,
      headers: { ...admin, 'content-type': 'text/plain' },
      payload: body,
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(await assetCount('WIRETEXT'), 1);
    const path = await create('WIRETEXTUPD');
    const updated = await inject({
      method: 'POST',
      url: path,
      headers: { ...admin, 'content-type': 'text/plain; charset=utf-8', 'x-method-override': 'PATCH' },
      payload: JSON.stringify({ description: 'written from text' }),
    });
    assert.equal(updated.statusCode, 204, updated.body);
    const read = await inject({ url: `${path}?lean=1&oslc.select=description`, headers: admin });
    assert.equal(json(read).description, 'written from text');
    const csv = await inject({
      method: 'POST',
      url: ASSETS,
      headers: { ...admin, 'content-type': 'text/csv' },
      payload: 'assetnum,siteid\nWIRECSV,' + site,
    });
    assert.equal(csv.statusCode, 415, csv.body);
    assert.equal(json(csv).Error?.reasonCode, 'EAS0006E');
    assert.match(String(json(csv).Error?.message), /text\/csv/);
    assert.equal(await assetCount('WIRECSV'), 0);
  });

  test('a properties header that does not parse refuses the create before anything is written', async () => {
    const response = await inject({
      method: 'POST',
      url: ASSETS,
      headers: { ...admin, 'content-type': 'application/json', properties: 'assetnum,{' },
      payload: JSON.stringify({ assetnum: 'WIREPROP', siteid: site }),
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.headers.location, undefined);
    assert.equal(await assetCount('WIREPROP'), 0);
  });

  test('a bad properties or patchtype header refuses the update before anything is written', async () => {
    const path = await create('WIREPROPU');
    for (const headers of [{ properties: 'description,{' }, { patchtype: 'REPLACEALL' }]) {
      const response = await inject({
        method: 'POST',
        url: path,
        headers: { ...admin, 'content-type': 'application/json', 'x-method-override': 'PATCH', ...headers },
        payload: JSON.stringify({ description: 'must not be written' }),
      });
      assert.equal(response.statusCode, 400, JSON.stringify(headers));
      const stored = await sql<{
        description: string | null;
      }>`select description from asset where assetnum = 'WIREPROPU'`.execute(t.storage.db);
      assert.notEqual(stored.rows[0]!.description, 'must not be written');
    }
  });

  test('spi: names in the properties header', async () => {
    const response = await inject({
      method: 'POST',
      url: `${ASSETS}?lean=1`,
      headers: { ...admin, 'content-type': 'application/json', properties: 'spi:assetnum,spi:siteid' },
      payload: JSON.stringify({ assetnum: 'WIRESPI', siteid: site }),
    });
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(json(response).assetnum, 'WIRESPI');
    assert.equal(json(response).siteid, site);
  });
});

describe('spi: names in query parameters', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const query = async (params: Record<string, string>) => {
    const response = await t.app.inject({
      url: `${ASSETS}?${new URLSearchParams({ lean: '1', ...params }).toString()}`,
      headers: admin,
    });
    assert.equal(response.statusCode, 200, response.body);
    return json(response);
  };

  test('where, select, orderBy and searchAttributes give the same results as the bare names', async () => {
    const pairs: ReadonlyArray<[Record<string, string>, Record<string, string>]> = [
      [
        { 'oslc.where': 'spi:status in ["OPERATING","NOT READY"]', 'oslc.select': 'spi:assetnum,spi:status' },
        { 'oslc.where': 'status in ["OPERATING","NOT READY"]', 'oslc.select': 'assetnum,status' },
      ],
      [
        { 'oslc.select': 'spi:assetnum,spi:priority', 'oslc.orderBy': '-spi:priority,+spi:assetnum' },
        { 'oslc.select': 'assetnum,priority', 'oslc.orderBy': '-priority,+assetnum' },
      ],
      [
        {
          'oslc.select': 'spi:assetnum,spi:location{spi:description}',
          'oslc.where': 'spi:location.spi:siteid="*"',
        },
        { 'oslc.select': 'assetnum,location{description}', 'oslc.where': 'location.siteid="*"' },
      ],
      [
        { 'oslc.select': 'assetnum', 'oslc.searchTerms': 'pump', searchAttributes: 'spi:description' },
        { 'oslc.select': 'assetnum', 'oslc.searchTerms': 'pump', searchAttributes: 'description' },
      ],
    ];
    for (const [prefixed, bare] of pairs) {
      const expected = await query(bare);
      assert.ok((expected.member ?? []).length > 0, JSON.stringify(bare));
      assert.deepEqual((await query(prefixed)).member, expected.member, JSON.stringify(prefixed));
    }
  });
});
