import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import { countStatements, settleBackgroundWrites } from '../../test/helpers/statements.js';
import { dynamicView } from '../db/schema.js';
import type { ObjectStructure } from '../metadata/registry.js';
import type { MemberRecord } from './query/index.js';
import { parseSelect } from './query/index.js';
import * as repository from './repository.js';
import { encodeRestId } from './rest-id.js';

/**
 * A member and its child collections are read in one statement, the children aggregated as JSON by the database
 * (src/oslc/query/README.md, "execute"). What the database writes as JSON is read back into the values the driver
 * reads from the columns themselves, so that the answer is the one the former statement per child collection gave:
 * checked here against the rows read on their own, and against the child collections at their own address (read
 * as collections of their own, without aggregation).
 */

const admin = maxauth('MAXADMIN');
const jsonHeaders = { ...admin, 'content-type': 'application/json' };

describe('one statement per member read', () => {
  let t: TestApp;
  let structure: ObjectStructure;
  const full = encodeRestId(['OSR-FULL', 'BEDFORD']);
  const bare = encodeRestId(['OSR-BARE', 'BEDFORD']);

  const get = async (url: string): Promise<Json> => {
    const response = await t.app.inject({ method: 'GET', url: `/maximo/oslc/os/${url}`, headers: admin });
    assert.equal(response.statusCode, 200, response.body);
    return json(response);
  };

  before(async () => {
    t = await startTestApp();
    structure = t.services.metadata.findObjectStructure('MXAPIASSET')!;
    await addDateAttribute(t);
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset?lean=1',
      headers: jsonHeaders,
      payload: {
        assetnum: 'OSR-FULL',
        siteid: 'BEDFORD',
        description: 'Pump "north" \\ line\nsecond',
        assetmeter: [
          { metername: 'TEMP-F', active: false, lastreading: '71', lastreadingdate: '2026-03-04T05:06:07Z' },
          { metername: 'PRESSURE', lastreadingdate: '0999-06-01T00:00:00Z' },
          { metername: 'RUNHOURS', linearassetid: 2147483647 },
        ],
        assetspec: [
          { assetattrid: 'WEIGHT', numvalue: 12.5, xchecked: '2026-02-28' },
          { assetattrid: 'TINY', numvalue: 0.25, alnvalue: 'ünïcode ✓ "quoted"' },
          { assetattrid: 'LARGE', numvalue: 123456789.125, xchecked: '0044-03-15' },
          { assetattrid: 'NONE' },
        ],
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const empty = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset?lean=1',
      headers: jsonHeaders,
      payload: { assetnum: 'OSR-BARE', siteid: 'BEDFORD' },
    });
    assert.equal(empty.statusCode, 201, empty.body);
  });
  after(() => t.close());

  test('child values read in the statement are the values the driver reads from their rows', async () => {
    const { member } = await t.services.resources.readAt(structure, full, {
      query: {},
      select: parseSelect('*,assetmeter{*},assetspec{*}'),
    });
    const children = [...member.children.values()].flat();
    assert.equal(children.length, 7);
    for (const child of children) {
      const object = child.node.object;
      const row = await repository.findByUniqueId(
        dynamicView(t.storage.db),
        object,
        Number(child.values[object.uniqueId]),
      );
      assert.ok(row);
      for (const [name, value] of Object.entries(child.values)) {
        if (name.startsWith('__')) continue;
        assert.deepStrictEqual(value, row[name], `${object.name}.${name}`);
      }
      assert.ok(child.values.changedate instanceof Date);
    }
    const spec = member.children.get('assetspec')!.map(valuesOf);
    assert.deepEqual(
      spec.map((values) => [values.assetattrid, values.numvalue]),
      [
        ['WEIGHT', 12.5],
        ['TINY', 0.25],
        ['LARGE', 123456789.125],
        ['NONE', null],
      ],
    );
    assert.equal((spec[0]!.xchecked as Date).toISOString(), '2026-02-28T00:00:00.000Z');
  });

  for (const lean of ['1', '0']) {
    test(`embedded child collections answer as the collections at their own address (lean=${lean})`, async () => {
      const flags = `lean=${lean}&ignorecollectionref=1`;
      const prefix = lean === '1' ? '' : 'spi:';
      const resource = await get(`mxapiasset/${full}?${flags}`);
      for (const child of ['assetmeter', 'assetspec']) {
        const own = await get(`mxapiasset/${full}/${child}?${flags}`);
        const members = lean === '1' ? own.member : (own['rdfs:member'] as Json[]);
        assert.deepStrictEqual(resource[prefix + child], members, child);
      }
      const dates = (resource[`${prefix}assetmeter`] as Json[]).map(
        (meter) => meter[`${prefix}lastreadingdate`],
      );
      assert.deepEqual(dates, ['2026-03-04T05:06:07+00:00', '0999-06-01T00:00:00+00:00', undefined]);
      const flagsOf = (resource[`${prefix}assetmeter`] as Json[]).map((meter) => meter[`${prefix}active`]);
      assert.deepEqual(flagsOf, [false, true, true]);
    });
  }

  test('nested selections, child filters and orders are read in the statement', async () => {
    const resource = await get(
      `mxapiasset/${full}?lean=1&oslc.select=assetnum,assetspec{assetattrid,numvalue},assetmeter{metername}` +
        '&assetspec.where=numvalue>1&assetspec.orderBy=-numvalue',
    );
    assert.deepEqual(
      (resource.assetspec as Json[]).map((spec) => [spec.assetattrid, spec.numvalue]),
      [
        ['LARGE', 123456789.125],
        ['WEIGHT', 12.5],
      ],
    );
    assert.deepEqual(Object.keys((resource.assetspec as Json[])[0]!), [
      'assetattrid',
      'numvalue',
      '_rowstamp',
      'href',
      'localref',
    ]);
    assert.deepEqual(
      (resource.assetmeter as Json[]).map((meter) => meter.metername),
      ['TEMP-F', 'PRESSURE', 'RUNHOURS'],
    );
  });

  test('a member without child rows has its child collections, empty', async () => {
    const resource = await get(`mxapiasset/${bare}?lean=1`);
    assert.deepEqual(resource.assetmeter, []);
    assert.deepEqual(resource.assetspec, []);
    const namespaced = await get(`mxapiasset/${bare}?lean=0&oslc.select=assetnum,assetspec{*}`);
    assert.deepEqual(namespaced['spi:assetspec'], []);
  });

  test('a kept read binds each request its own address', async () => {
    const select = 'oslc.select=assetnum,description,assetspec{assetattrid}';
    const first = await get(`mxapiasset/${full}?lean=1&${select}`);
    const second = await get(`mxapiasset/${bare}?lean=1&${select}`);
    const again = await get(`mxapiasset/${full}?lean=1&${select}`);
    assert.equal(first.assetnum, 'OSR-FULL');
    assert.equal(second.assetnum, 'OSR-BARE');
    assert.deepEqual(again, first);
    assert.equal((first.assetspec as Json[]).length, 4);
    assert.deepEqual(second.assetspec, []);
    const uniqueId = (await repository.findByKeys(dynamicView(t.storage.db), structure.root.object, [
      'OSR-BARE',
      'BEDFORD',
    ]))!.assetuid;
    assert.equal((await get(`mxapiasset/${String(uniqueId)}?lean=1&${select}`)).assetnum, 'OSR-BARE');
    const missing = await t.app.inject({
      method: 'GET',
      url: `/maximo/oslc/os/mxapiasset/${encodeRestId(['OSR-NONE', 'BEDFORD'])}?lean=1&${select}`,
      headers: admin,
    });
    assert.equal(missing.statusCode, 404, missing.body);
  });

  test('a member by href and a page of members, each with its child collections, are one statement each', async () => {
    const member = `/maximo/oslc/os/mxapiasset/${full}?lean=1`;
    const page =
      '/maximo/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,assetmeter{*},assetspec{*}&oslc.pageSize=5';
    for (const url of [member, page]) {
      // The first request fills what is kept in memory (credentials, rights, domains, plans).
      await t.app.inject({ method: 'GET', url, headers: admin });
      // The login's bookkeeping and the audit seal are written shortly after; written now, they are not counted below.
      await settleBackgroundWrites(t.services);
      const { result, statements } = await countStatements(() =>
        t.app.inject({ method: 'GET', url, headers: admin }),
      );
      assert.equal(result.statusCode, 200, result.body);
      assert.equal(statements.length, 1, statements.join('\n'));
    }
  });
});

const valuesOf = (record: MemberRecord) => record.values;

/** A DATE attribute on asset specifications (no object of the base metadata has one), through the dbconfig service. */
async function addDateAttribute(t: TestApp): Promise<void> {
  const mode = (on: boolean) =>
    t.app.inject({
      method: 'POST',
      url: `/maximo/oslc/adminmode/${on ? 'on' : 'off'}`,
      headers: jsonHeaders,
      payload: {},
    });
  assert.equal((await mode(true)).statusCode, 200);
  const { dbconfig } = t.services;
  await t.storage.db.transaction().execute(async (transaction) => {
    await dbconfig.stageChanges(
      [{ objectname: 'ASSETSPEC', attributename: 'XCHECKED', changetype: 'ADD', maxtype: 'DATE' }],
      'MAXADMIN',
      { transaction },
    );
    await dbconfig.applyPending('MAXADMIN', { transaction });
  });
  await dbconfig.refresh();
  assert.equal((await mode(false)).statusCode, 200);
}
