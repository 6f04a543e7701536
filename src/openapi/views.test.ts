import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * The OpenAPI document in the forms clients ask for (docs/operations.md, "OpenAPI"): a Postman collection's first
 * call `GET /oslc/oas?includeaction=1`, one structure's document `/oslc/oas/<os>`, `/oslc/oas/api[.json]`, with
 * `lean` and the object-structure filter. Each must be a valid OpenAPI 3 document.
 */

type Json = Record<string, unknown>;
type Operation = Json & { parameters?: Json[]; requestBody?: Json; tags?: string[] };
type Document = Json & { paths: Record<string, Record<string, Operation>>; components: { schemas: Json } };

describe('OpenAPI document forms', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const fetchDocument = async (path: string): Promise<Document> => {
    const response = await t.app.inject({ url: `/maximo${path}`, headers: maxauth('WILSON') });
    assert.equal(response.statusCode, 200, `${path}: ${response.body.slice(0, 300)}`);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    return json(response) as Document;
  };

  const actionParameter = (operation: Operation | undefined) =>
    operation?.parameters?.find((parameter) => parameter.name === 'action' && parameter.in === 'query');

  test('every form is a valid OpenAPI 3 document', async () => {
    const forms = [
      '/oslc/oas?includeaction=1',
      '/oslc/oas',
      '/oslc/oas?lean=1',
      '/oslc/oas/mxapiasset',
      '/oslc/oas/MXAPIWODETAIL?includeaction=1&lean=0',
      '/oslc/oas/api',
      '/oslc/oas/api.json',
      '/oslc/oas/api.json?lean=0&includeactions=1',
      '/oslc/oas?os=MXAPIASSET,mxapiwodetail&lean=1',
      '/oslc/oas?module=ASSET&addinternal=1&primary=1',
      '/api/oas/mxapiasset',
      '/api/oas?includeAction=1',
    ];
    for (const form of forms) {
      const result = await new Validator().validate(await fetchDocument(form));
      assert.deepEqual(result.errors, undefined, `${form}: ${JSON.stringify(result.errors)}`);
      assert.equal(result.valid, true, form);
    }
  });

  test('/oslc/oas/<os>: one structure with its attributes, child objects and actions', async () => {
    const document = await fetchDocument('/oslc/oas/MXAPIASSET?includeaction=1');
    const paths = Object.keys(document.paths);
    assert.ok(paths.includes('/maximo/oslc/os/mxapiasset'));
    assert.ok(paths.includes('/maximo/oslc/os/mxapiasset/{id}'));
    assert.ok(paths.includes('/maximo/api/os/mxapiasset/{id}/{childPath}'));
    assert.ok(
      paths.every((path) => path.includes('/mxapiasset') && !path.includes('{os}')),
      paths.join(' '),
    );
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        assert.ok(
          !operation.parameters?.some((parameter) => parameter.in === 'path' && parameter.name === 'os'),
        );
        assert.deepEqual(operation.tags, ['MXAPIASSET']);
      }
    }
    assert.deepEqual(Object.keys(document.components.schemas).sort(), ['Error', 'RESOURCE_MXAPIASSET']);
    const resource = document.components.schemas.RESOURCE_MXAPIASSET as {
      properties: Record<string, Json & { items?: { properties?: Json } }>;
    };
    assert.ok(resource.properties.assetnum, 'attributes');
    assert.ok(resource.properties.assetmeter?.items?.properties?.metername, 'child objects, inlined');
    const create = document.paths['/maximo/oslc/os/mxapiasset']!.post!;
    assert.match(JSON.stringify(create.requestBody), /#\/components\/schemas\/RESOURCE_MXAPIASSET/);
    // The actions: `new` on the collection, changeStatus on the member.
    assert.deepEqual(
      (actionParameter(document.paths['/maximo/oslc/os/mxapiasset']!.get)?.schema as Json).enum,
      ['new'],
    );
    assert.deepEqual(
      (actionParameter(document.paths['/maximo/oslc/os/mxapiasset/{id}']!.post)?.schema as Json).enum,
      ['wsmethod:changeStatus'],
    );
  });

  test('actions are left out unless includeaction=1; a structure without status offers no changeStatus', async () => {
    const plain = await fetchDocument('/oslc/oas/mxapiasset');
    assert.equal(actionParameter(plain.paths['/maximo/oslc/os/mxapiasset/{id}']!.post), undefined);
    const all = await fetchDocument('/oslc/oas?includeaction=1');
    assert.ok(actionParameter(all.paths['/maximo/oslc/os/{os}/{id}']!.post));
    assert.ok(actionParameter(all.paths['/maximo/oslc/os/{os}']!.get));
    const items = await fetchDocument('/oslc/oas/mxapiitem?includeaction=1');
    assert.equal(actionParameter(items.paths['/maximo/oslc/os/mxapiitem/{id}']!.post), undefined);
    assert.ok(actionParameter(items.paths['/maximo/oslc/os/mxapiitem']!.get));
  });

  test('os= keeps only the structures named; lean=0 writes the namespaced property names', async () => {
    const filtered = await fetchDocument('/oslc/oas?os=mxapiasset,MXAPIWODETAIL&lean=0');
    assert.deepEqual(Object.keys(filtered.components.schemas).sort(), [
      'Error',
      'RESOURCE_MXAPIASSET',
      'RESOURCE_MXAPIWODETAIL',
    ]);
    assert.ok(filtered.paths['/maximo/oslc/os/mxapiwodetail/{id}']);
    assert.equal(filtered.paths['/maximo/oslc/os/mxapiitem'], undefined);
    const resource = filtered.components.schemas.RESOURCE_MXAPIASSET as { properties: Json };
    assert.ok(resource.properties['spi:assetnum']);
    assert.ok(resource.properties['rdf:about']);
    assert.equal(resource.properties.assetnum, undefined);
    const lean = await fetchDocument('/oslc/oas/api.json');
    assert.ok((lean.components.schemas.RESOURCE_MXAPIASSET as { properties: Json }).properties.assetnum);
  });

  test('an unknown structure is 404 EAS0002E; the document needs a login', async () => {
    for (const path of ['/oslc/oas/nosuchstructure', '/oslc/oas?os=mxapiasset,nosuchstructure']) {
      const response = await t.app.inject({ url: `/maximo${path}`, headers: maxauth('WILSON') });
      assert.equal(response.statusCode, 404, path);
      assert.equal((json(response).Error as Json).reasonCode, 'EAS0002E');
    }
    for (const path of ['/oslc/oas', '/oslc/oas/mxapiasset']) {
      assert.equal((await t.app.inject({ url: `/maximo${path}` })).statusCode, 401, path);
    }
  });
});
