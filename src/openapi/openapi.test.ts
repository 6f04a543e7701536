import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { openApiPath, resourceSchemaName, SECURITY_SCHEMES } from './document.js';
import { DOCUMENT_PATHS, SWAGGER_UI_PATH } from './routes.js';

type Json = Record<string, unknown>;
type Operation = Json & { security?: Json[]; responses?: Json; parameters?: Json[] };

describe('OpenAPI document and Swagger UI', () => {
  let t: TestApp;
  let document: Json & { paths: Record<string, Record<string, Operation>>; components: Json };
  const ui = `/maximo${SWAGGER_UI_PATH}`;

  before(async () => {
    t = await startTestApp();
    const response = await t.app.inject({ url: '/maximo/oslc/oas/api.json', headers: maxauth('WILSON') });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    document = json(response) as typeof document;
  });
  after(() => t.close());

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.match(String(document.openapi), /^3\.1\./);
    const result = await new Validator().validate(document);
    assert.deepEqual(result.errors, undefined, JSON.stringify(result.errors));
    assert.equal(result.valid, true);
  });

  test('describes every registered route, with its access and the error object', () => {
    const documented = t.services.routes.filter((route) => !route.url.startsWith(ui));
    assert.ok(documented.length > 50, 'the route list is there');
    for (const route of documented) {
      const operation = document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
      assert.ok(operation, `${route.method} ${route.url} is in the document`);
      assert.deepEqual(operation.responses?.['4XX'], operation.responses?.['5XX']);
      assert.match(JSON.stringify(operation.responses?.['4XX']), /#\/components\/schemas\/Error/);
      if (route.access?.kind === 'public') assert.deepEqual(operation.security, [], route.url);
      else assert.ok((operation.security ?? []).length > 0, `${route.url} names its credentials`);
    }
    // Parameters and bodies come from the route schemas.
    const member = document.paths['/maximo/oslc/os/{os}/{id}']!;
    assert.deepEqual(
      member
        .get!.parameters!.filter((parameter) => parameter.in === 'path')
        .map((parameter) => parameter.name),
      ['os', 'id'],
    );
    const create = document.paths['/maximo/oslc/os/{os}']!.post!;
    assert.match(JSON.stringify(create.requestBody), /RESOURCE_MXAPIASSET/, 'a create carries a resource');
    const headers = member.post!.parameters!.filter((parameter) => parameter.in === 'header');
    assert.ok(headers.some((parameter) => parameter.name === 'x-method-override'));
    const query = document.paths['/maximo/oslc/os/{os}']!.get!.parameters!;
    assert.ok(query.some((parameter) => parameter.name === 'oslc.where' && parameter.in === 'query'));
    const error = (document.components.schemas as Json).Error as {
      properties: { Error: { required: string[] } };
    };
    assert.deepEqual(error.properties.Error.required, ['reasonCode', 'message', 'statusCode']);
  });

  test('declares the security schemes: maxauth, BASIC, session cookie, API key in header and query', () => {
    const schemes = document.components.securitySchemes as Record<string, Json>;
    assert.deepEqual(Object.keys(schemes).sort(), Object.keys(SECURITY_SCHEMES).sort());
    assert.deepEqual(schemes.maxauth, { ...SECURITY_SCHEMES.maxauth });
    assert.equal(schemes.basic!.scheme, 'basic');
    assert.equal(schemes.session!.in, 'cookie');
    assert.equal(schemes.session!.name, 'JSESSIONID');
    assert.equal(schemes.apikey!.in, 'header');
    assert.equal(schemes.apikeyQuery!.in, 'query');
  });

  test('carries one schema per object structure, from the metadata', () => {
    const schemas = document.components.schemas as Record<
      string,
      Json & { properties: Record<string, Json> }
    >;
    for (const structure of t.services.metadata.objectStructures()) {
      const schema = schemas[resourceSchemaName(structure)];
      assert.ok(schema, structure.name);
      assert.equal(schema.description, structure.description);
      assert.equal(schema.$ref, undefined, 'no reference an OpenAPI reader would resolve');
      for (const attribute of structure.root.object.attributes.values()) {
        if (!attribute.writeOnly)
          assert.ok(schema.properties[attribute.name], `${structure.name}.${attribute.name}`);
      }
    }
    const asset = schemas.RESOURCE_MXAPIASSET!;
    assert.equal(asset.properties.assetnum!.maxLength, 25);
    assert.equal(asset.properties.assetnum!.subType, 'UPPER');
    const workOrders = t.services.metadata.findObjectStructure('MXAPIWODETAIL')!;
    const child = workOrders.root.children[0]!;
    const inlined = schemas.RESOURCE_MXAPIWODETAIL!.properties[child.name] as {
      items: Json & { properties: Json };
    };
    for (const key of child.object.keys)
      assert.ok(inlined.items.properties[key], `child ${child.name} inlined`);
  });

  test('answers at every address clients fetch, to logged-in users and API keys only', async () => {
    for (const path of DOCUMENT_PATHS) {
      const refused = await t.app.inject({ url: `/maximo${path}` });
      assert.equal(refused.statusCode, 401, path);
      assert.ok(json(refused).Error, 'refused with the error object');
    }
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/apitoken/create',
      headers: maxauth('WILSON'),
      payload: { expiration: -1 },
    });
    assert.equal(created.statusCode, 200, created.body);
    const apikey = String(json(created).apikey);
    for (const path of DOCUMENT_PATHS) {
      const answered = await t.app.inject({ url: `/maximo${path}`, headers: { apikey } });
      assert.equal(answered.statusCode, 200, path);
      assert.deepEqual(json(answered).paths, document.paths);
    }
  });

  test('Swagger UI answers from the package and lists the object structures', async () => {
    assert.equal((await t.app.inject({ url: `${ui}/` })).statusCode, 401);
    const page = await t.app.inject({ url: `${ui}/`, headers: maxauth('WILSON') });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>Swagger UI<\/title>/);
    assert.doesNotMatch(page.body, /(src|href)="https?:/, 'nothing from a CDN');
    const bundle = await t.app.inject({
      url: `${ui}/static/swagger-ui-bundle.js`,
      headers: maxauth('WILSON'),
    });
    assert.equal(bundle.statusCode, 200);
    assert.ok(bundle.body.length > 100_000);
    for (const alias of ['/maximo/oslc/oas/api.html', '/maximo/oas3/api.html']) {
      const redirect = await t.app.inject({ url: alias, headers: maxauth('WILSON') });
      assert.equal(redirect.statusCode, 302, alias);
      assert.equal(redirect.headers.location, `${ui}/`);
    }
    // The document the page loads (`./json`): the object structures as schemas and as values of `os`.
    const loaded = json(
      await t.app.inject({ url: `${ui}/json`, headers: maxauth('WILSON') }),
    ) as typeof document;
    const schemas = loaded.components.schemas as Json;
    const examples = loaded.paths['/maximo/oslc/os/{os}']!.get!.parameters!.find(
      (parameter) => parameter.name === 'os',
    )!.examples as Record<string, { value: string }>;
    for (const structure of t.services.metadata.objectStructures()) {
      assert.ok(schemas[resourceSchemaName(structure)], structure.name);
      assert.equal(examples[structure.name.toLowerCase()]?.value, structure.name.toLowerCase());
    }
  });
});
