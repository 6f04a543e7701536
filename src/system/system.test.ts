import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import { RELEASE_LEVEL } from './release.js';

/** The service endpoints clients call on connect, and the properties clients rely on (docs/compatibility.md). */

const admin = maxauth('MAXADMIN');
const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('service endpoints', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const get = async (url: string, headers: Record<string, string> = admin) => {
    const response = await t.app.inject({ url, headers });
    return { status: response.statusCode, body: json(response), type: response.headers['content-type'] };
  };

  test('the API home links every service endpoint, and each answers JSON', async () => {
    for (const root of ['oslc', 'api']) {
      const home = await get(`/maximo/${root}?lean=1`);
      assert.equal(home.status, 200);
      for (const link of [
        'systeminfo',
        'whoami',
        'installedProducts',
        'serverMembers',
        'license',
        'apimeta',
        'ping',
      ]) {
        const href = (home.body[link] as { href?: string } | undefined)?.href;
        assert.ok(href, `home has ${link}`);
        const answer = await get(`${new URL(href).pathname}?lean=1`);
        assert.equal(answer.status, 200, `${link}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.type, 'application/json');
      }
    }
  });

  test('maxupg comes from the release level and the package version', async () => {
    const expected = `V${RELEASE_LEVEL}-${version}`;
    assert.equal(
      json(await t.app.inject({ method: 'POST', url: '/maximo/oslc/login', headers: admin })).maxupg,
      expected,
    );
    assert.equal((await get('/maximo/oslc?lean=1')).body.maxupg, expected);
    const products = (await get('/maximo/oslc/products')).body;
    assert.equal((products.member ?? [])[0]?.maxupg, expected);
  });

  test('ping: any logged-in user, with or without a trailing slash; 401 without credentials', async () => {
    for (const url of [
      '/maximo/oslc/ping',
      '/maximo/oslc/ping/',
      '/maximo/api/ping',
      '/maximo/oslc/ping.jsp',
    ]) {
      const answer = await get(url, maxauth('SMITH'));
      assert.equal(answer.status, 200, url);
      assert.equal(answer.body.status, 'OK');
    }
    const refused = await get('/maximo/oslc/ping', {});
    assert.equal(refused.status, 401);
    assert.equal(refused.body.Error?.reasonCode, 'BMXAA7901E');
  });

  test("systeminfo: the documented shape, lean and namespaced, with this service's values", async () => {
    const lean = (await get('/maximo/oslc/systeminfo?lean=1')).body;
    assert.match(String(lean.href), /\/maximo\/oslc\/systeminfo$/);
    assert.equal(typeof lean.appServer, 'string');
    const database = lean.database as Json;
    assert.match(String(database.dbProductName), /PostgreSQL/);
    const server = await sql<{ v: string }>`select current_setting('server_version') as v`.execute(
      t.storage.db,
    );
    assert.equal(database.dbVersion, server.rows[0]!.v);
    assert.equal(typeof database.dbMajorVersion, 'number');
    assert.ok((database.dbMajorVersion as number) >= 14);
    assert.equal(typeof database.dbMinorVersion, 'number');
    const os = lean.os as Json;
    for (const name of ['osName', 'osVersion', 'architecture']) assert.equal(typeof os[name], 'string');
    assert.equal(typeof os.availableProcessors, 'number');
    const versions = (lean.appVersion as { member: Array<{ versionKey: string }> }).member;
    assert.match(
      versions[0]!.versionKey,
      new RegExp(`^Enterprise Asset Service ${version.replace(/\./g, '\\.')} .*DB Build V${RELEASE_LEVEL}-`),
    );

    const namespaced = (await get('/maximo/oslc/systeminfo')).body;
    assert.equal(namespaced['rdf:about'], lean.href);
    const members = (namespaced['spi:appVersion'] as { 'rdfs:member': Array<Record<string, string>> })[
      'rdfs:member'
    ];
    assert.equal(members[0]!['spi:versionKey'], versions[0]!.versionKey);
    assert.equal((namespaced['spi:database'] as Json)['spi:dbVersion'], database.dbVersion);
  });

  test('license, products and apimeta', async () => {
    const license = (await get('/maximo/oslc/license')).body;
    assert.equal((license.member ?? [])[0]?.licensed, true);
    assert.deepEqual((await get('/maximo/oslc/licenseinfo')).body, license);
    const products = (await get('/maximo/oslc/products')).body;
    assert.equal((products.member ?? [])[0]?.version, version);
    const apimeta = (await get('/maximo/oslc/apimeta', maxauth('WILSON'))).body;
    const names = (apimeta.member ?? []).map((member) => member.name);
    assert.ok(names.includes('MXAPIASSET'));
    const asset = (apimeta.member ?? []).find((member) => member.name === 'MXAPIASSET')!;
    assert.equal((await get(new URL(String(asset.href)).pathname)).status, 200);
    const all = (await get('/maximo/oslc/apimeta')).body.member ?? [];
    assert.ok(all.length >= names.length, 'an administrator sees every structure');
  });

  test('members: administrators only; others get BMXAA9051E', async () => {
    const jvm = await get('/maximo/oslc/members/thisserver/jvm');
    assert.equal(jvm.status, 200);
    assert.equal(jvm.body.specVersion, process.versions.node);
    assert.equal(jvm.body.serverName, 'TESTSERVER');
    for (const document of ['opsystem', 'memory', 'dbinfo']) {
      assert.equal((await get(`/maximo/oslc/members/thisserver/${document}`)).status, 200, document);
    }
    assert.equal((await get('/maximo/oslc/members/TESTSERVER')).status, 200);
    const members = (await get('/maximo/oslc/members')).body.member ?? [];
    assert.equal(members.length, 1);
    assert.equal((await get('/maximo/oslc/members/otherserver/jvm')).status, 404);
    assert.equal((await get('/maximo/oslc/members/thisserver/nothing')).status, 404);
    for (const url of [
      '/maximo/oslc/members/thisserver/jvm',
      '/maximo/oslc/members',
      '/maximo/api/members/thisserver',
    ]) {
      const refused = await get(url, maxauth('WILSON'));
      assert.equal(refused.status, 400, url);
      assert.equal(refused.body.Error?.reasonCode, 'BMXAA9051E');
    }
  });
});

describe('properties clients rely on', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const setProperty = async (propName: string, propValue: string) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ propName, serverName: 'COMMON', propValue }),
    });
    assert.equal(response.statusCode, 200, response.body);
    await t.services.properties.settled();
  };
  const collection = async (url: string, headers: Record<string, string> = {}) =>
    json(await t.app.inject({ url, headers: { ...admin, ...headers } }));

  test('mxe.oslc.collectioncount=1 puts totalCount in every collection answer', async () => {
    const url = '/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=2';
    assert.equal((await collection(url)).responseInfo?.totalCount, undefined);
    await setProperty('mxe.oslc.collectioncount', '1');
    const counted = (await collection(url)).responseInfo!;
    assert.equal(typeof counted.totalCount, 'number');
    assert.equal(counted.totalPages, Math.ceil((counted.totalCount as number) / 2));
    const lookup = await collection('/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=2&stablepaging=1');
    assert.equal(lookup.responseInfo?.totalCount, counted.totalCount);
    await setProperty('mxe.oslc.collectioncount', '0');
    assert.equal((await collection(url)).responseInfo?.totalCount, undefined);
  });

  test('mxe.oslc.webappurl decides hrefs and Location; Host is then not trusted; x-public-uri still applies', async () => {
    const url = '/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=1';
    const before = await collection(url, { host: 'evil.example' });
    assert.match(String(before.responseInfo?.href), /^http:\/\/evil\.example\/maximo\/oslc\//);
    await setProperty('mxe.oslc.webappurl', 'https://eam.example.com/maximo/oslc/');
    const after = await collection(url, { host: 'evil.example' });
    assert.match(
      String(after.responseInfo?.href),
      /^https:\/\/eam\.example\.com\/maximo\/oslc\/os\/mxapiasset\?/,
    );
    assert.match(
      String(after.member?.[0]?.href),
      /^https:\/\/eam\.example\.com\/maximo\/oslc\/os\/mxapiasset\/_/,
    );
    const api = await collection('/maximo/api/os/mxapiasset?lean=1&oslc.pageSize=1', {
      host: 'evil.example',
    });
    assert.match(String(api.responseInfo?.href), /^https:\/\/eam\.example\.com\/maximo\/api\//);
    const site = (await sql<{ siteid: string }>`select siteid from asset limit 1`.execute(t.storage.db))
      .rows[0]!.siteid;
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset',
      headers: { ...admin, host: 'evil.example', 'content-type': 'application/json' },
      payload: JSON.stringify({ assetnum: 'WEBAPPURL1', siteid: site }),
    });
    assert.equal(created.statusCode, 201);
    assert.match(
      String(created.headers.location),
      /^https:\/\/eam\.example\.com\/maximo\/oslc\/os\/mxapiasset\/_/,
    );
    const explicit = await collection(url, { 'x-public-uri': 'http://proxy.example/maximo/api' });
    assert.match(String(explicit.responseInfo?.href), /^http:\/\/proxy\.example\/maximo\/api\/os\//);
    await setProperty('mxe.oslc.webappurl', '');
    assert.match(
      String((await collection(url, { host: 'evil.example' })).responseInfo?.href),
      /^http:\/\/evil\.example\//,
    );
  });
});

describe('EAS_PUBLIC_URL', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ EAS_PUBLIC_URL: 'https://public.example:8443/' });
  });
  after(() => t.close());

  test('decides the origin of hrefs whatever the Host header says', async () => {
    const response = await t.app.inject({
      url: '/maximo/api/os/mxapiasset?lean=1&oslc.pageSize=1',
      headers: { ...admin, host: 'evil.example' },
    });
    assert.match(
      String(json(response).responseInfo?.href),
      /^https:\/\/public\.example:8443\/maximo\/api\/os\//,
    );
    const home = json(
      await t.app.inject({ url: '/maximo/oslc?lean=1', headers: { ...admin, host: 'evil.example' } }),
    );
    assert.equal(home.href, 'https://public.example:8443/maximo/oslc');
  });
});
