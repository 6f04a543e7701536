import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';

/** JSON schemas: `GET <root>/jsonschemas/<os>[/<child>...]` and `addschema=1` on collection queries. */

const admin = maxauth('MAXADMIN');
type Schema = Json & { properties: Record<string, Json>; required: string[] };

describe('JSON schemas', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function schema(url: string): Promise<Schema> {
    const answer = await t.app.inject({ method: 'GET', url, headers: admin });
    assert.equal(answer.statusCode, 200, `${url}: ${answer.body}`);
    return json(answer) as Schema;
  }

  test('the work-order schema: object keys, attributes, autokey default, children as links', async () => {
    const wo = await schema('/maximo/oslc/jsonschemas/mxapiwodetail');
    assert.equal(wo.resource, 'MXAPIWODETAIL');
    assert.equal(wo.title, 'WORKORDER');
    assert.equal(wo.type, 'object');
    assert.equal(wo.$ref, 'oslc/jsonschemas/mxapiwodetail');
    assert.deepEqual(wo.pk, ['wonum', 'siteid']);
    assert.deepEqual(wo.properties.wonum, {
      type: 'string',
      subType: 'UPPER',
      title: 'Work Order',
      persistent: true,
      searchType: 'WILDCARD',
      hasList: false,
      maxLength: 25,
      default: '&AUTOKEY&',
    });
    assert.equal(wo.properties.istask!.type, 'boolean');
    assert.equal(wo.properties.istask!.default, false);
    assert.equal(wo.properties.wopriority!.type, 'integer');
    assert.equal(wo.properties.estdur!.type, 'number');
    assert.equal(wo.properties.reportdate!.subType, 'DATETIME');
    assert.equal(wo.properties.status!.hasList, true);
    assert.deepEqual(wo.properties.status_description, { type: 'string' });
    assert.deepEqual(wo.properties.href, { type: 'string' });
    for (const name of ['siteid', 'status', 'woclass', 'istask']) assert.ok(wo.required.includes(name), name);
    assert.ok(!wo.required.includes('wonum'), 'an autokeyed key is not required');
    assert.deepEqual(wo.properties.woactivity, {
      objectName: 'WORKORDER',
      type: 'array',
      cardinality: 'MULTIPLE',
      relation: 'WOACTIVITY',
      items: {
        type: 'object',
        definition: { subSchema: { $ref: 'oslc/jsonschemas/mxapiwodetail/woactivity' } },
      },
    });
    const inlined = await schema('/maximo/api/jsonschemas/MXAPIWODETAIL?oslc.select=*');
    const items = (inlined.properties.woactivity as { items: Schema }).items;
    assert.equal(items.properties.wonum!.type, 'string');
    assert.equal(items.$ref, 'api/jsonschemas/mxapiwodetail/woactivity');
    assert.equal(items.title, 'WORKORDER/WORKORDER');
  });

  test('every child schema link of every structure dereferences', async () => {
    const structures = t.services.metadata.objectStructures();
    let links = 0;
    for (const structure of structures) {
      const pending = [`/maximo/oslc/jsonschemas/${structure.name.toLowerCase()}`];
      while (pending.length > 0) {
        const current = await schema(pending.pop()!);
        assert.equal(current.resource, structure.name);
        for (const property of Object.values(current.properties)) {
          const ref = (property.items as { definition?: { subSchema: { $ref: string } } } | undefined)
            ?.definition?.subSchema.$ref;
          if (ref === undefined) continue;
          links += 1;
          pending.push(`/maximo/${ref}`);
        }
      }
    }
    assert.ok(links >= 8, `${links} child links`);
    const grandchild = await schema('/maximo/api/jsonschemas/mxapiperuser/maxuser/groupuser');
    assert.equal(grandchild.title, 'MAXUSER/GROUPUSER');
    assert.deepEqual(grandchild.pk, ['groupname', 'userid']);
  });

  test('unknown structures and children are 404 error objects', async () => {
    const noChild = await t.app.inject({
      method: 'GET',
      url: '/maximo/oslc/jsonschemas/mxapiasset/nosuch',
      headers: admin,
    });
    assert.equal(noChild.statusCode, 404);
    assert.equal(json(noChild).Error?.reasonCode, 'EAS0001E');
    const noStructure = await t.app.inject({
      method: 'GET',
      url: '/maximo/oslc/jsonschemas/nosuch',
      headers: admin,
    });
    assert.equal(noStructure.statusCode, 404);
    assert.equal(json(noStructure).Error?.reasonCode, 'EAS0002E');
  });

  test('addschema=1 puts the schema of the selection in responseInfo, and not in page links', async () => {
    const answer = await t.app.inject({
      method: 'GET',
      url: '/maximo/api/os/mxapiasset?oslc.select=assetnum,status,location.description,assetmeter{metername}&oslc.pageSize=2&addschema=1',
      headers: admin,
    });
    assert.equal(answer.statusCode, 200, answer.body);
    const info = json(answer).responseInfo!;
    const selected = info.schema as Schema;
    assert.equal(selected.resource, 'MXAPIASSET');
    assert.deepEqual(Object.keys(selected.properties).sort(), [
      '_rowstamp',
      'assetmeter',
      'assetnum',
      'href',
      'location',
      'status',
      'status_description',
    ]);
    assert.equal(((selected.properties.location as Schema).properties.description as Json).type, 'string');
    const meter = (selected.properties.assetmeter as { items: Schema }).items;
    assert.ok('metername' in meter.properties);
    const next = String((info.nextPage as Json).href);
    assert.doesNotMatch(next, /addschema/);
    const without = await t.app.inject({
      method: 'GET',
      url: '/maximo/api/os/mxapiasset?oslc.pageSize=2',
      headers: admin,
    });
    assert.equal(json(without).responseInfo?.schema, undefined);
  });
});
