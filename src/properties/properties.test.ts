import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import type { PropertyTables } from './tables.js';
import { PropertyService } from './service.js';
import type { Database } from '../db/schema.js';

type User = 'MAXADMIN' | 'WILSON' | 'SMITH';

const SYSTEM = '/maximo/oslc/service/system';
const SECRET_KEY = 'properties-test-secret-key';

/** The properties of the contract, each with its default (docs/properties.md, "The registry"). */
const documentedDefaults: Record<string, string> = {
  'mxe.oslc.webappurl': '',
  'mxe.oslc.collectioncount': '0',
  'mxe.oslc.maxpagesize': '1000',
  'mxe.oslc.idleexiry': '300',
  'mxe.apikeysysusers': '',
  'mxe.apikeyforloggedinuser': '0',
  'mxe.allowexternalapikey': '0',
  'mxe.secureapikey': '1',
  'mxe.adminmode.numsessions': '5',
  'mxe.adminmode.logoutmin': '5',
  'mxe.adminmode.stopstartclusters': '1',
  'mxe.dm.autoapprovepkgdef': '0',
  'mxe.useAppServerSecurity': '0',
  'mxe.sec.IPblock': '1',
  'mxe.sec.IPblock.num': '50',
  'mxe.sec.IPblock.sec': '30',
};

describe('system properties service', () => {
  let t: TestApp;
  let db: Kysely<Database>;
  const extraServices: PropertyService[] = [];

  before(async () => {
    t = await startTestApp({ EAS_SECRET_KEY: SECRET_KEY });
    db = t.storage.db;
  });
  after(async () => {
    for (const service of extraServices) await service.close();
    await t.close();
  });

  async function getProperty(name: string, user: User = 'MAXADMIN', root = 'oslc') {
    return t.app.inject({
      url: `/maximo/${root}/service/system?action=wsmethod:getProperty&propName=${encodeURIComponent(name)}`,
      headers: maxauth(user),
    });
  }

  async function valueOf(name: string, user: User = 'MAXADMIN'): Promise<unknown> {
    const response = await getProperty(name, user);
    assert.equal(response.statusCode, 200, response.body);
    return json(response).return;
  }

  async function setProperty(body: unknown, user: User = 'MAXADMIN', root = 'oslc') {
    return t.app.inject({
      method: 'POST',
      url: `/maximo/${root}/service/system?action=wsmethod:setProperty`,
      headers: maxauth(user),
      payload: body as Record<string, unknown>,
    });
  }

  async function set(propName: string, propValue: string | null, serverName = 'COMMON'): Promise<Json> {
    const response = await setProperty({ propName, serverName, propValue });
    assert.equal(response.statusCode, 200, response.body);
    return json(response);
  }

  async function adminRead(query: string): Promise<Json> {
    const response = await t.app.inject({ url: `${SYSTEM}?${query}`, headers: maxauth('MAXADMIN') });
    assert.equal(response.statusCode, 200, response.body);
    return json(response);
  }

  function assertError(
    response: { statusCode: number; body: string },
    status: number,
    reasonCode: string,
  ): Record<string, unknown> {
    assert.equal(response.statusCode, status, response.body);
    const error = json(response as never).Error!;
    assert.equal(error.reasonCode, reasonCode);
    assert.equal(error.statusCode, String(status));
    return error;
  }

  async function historyCount(name: string): Promise<number> {
    const rows = await db
      .selectFrom('maxprophistory')
      .select('propname')
      .where('propname', '=', name)
      .execute();
    return rows.length;
  }

  /** A property added to the registry the way a later migration would, announced as a set announces it. */
  async function register(row: Partial<PropertyTables['maxprop']> & { propname: string; maxtype: string }) {
    await db
      .insertInto('maxprop')
      .values({ userdefined: true, ...row } as never)
      .execute();
    t.storage.bus.deliverLocally('property', row.propname);
    await t.services.properties.settled();
  }

  async function startService(serverName: string, secretKey?: string): Promise<PropertyService> {
    const service = new PropertyService(t.storage, {
      serverName,
      metadata: t.services.metadata,
      domains: t.services.domains,
      secretKey,
    });
    extraServices.push(service);
    await service.start();
    return service;
  }

  test('getProperty answers {"return": value} as application/json, on /oslc and /api', async () => {
    for (const root of ['oslc', 'api']) {
      const response = await getProperty('mxe.oslc.maxpagesize', 'MAXADMIN', root);
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'application/json');
      assert.deepEqual(json(response), { return: '1000' });
    }
    const withClientParameters = await t.app.inject({
      url: `${SYSTEM}?&lean=1&action=WSMETHOD:GETPROPERTY&propName=mxe.oslc.maxpagesize&propName=ignored`,
      headers: maxauth('WILSON'),
    });
    assert.deepEqual(json(withClientParameters), { return: '1000' });
  });

  test('every property the service uses is registered with its documented default', async () => {
    const names = Object.keys(documentedDefaults);
    const response = await t.app.inject({
      url: `${SYSTEM}?action=wsmethod:getProperties&propNames=${names.join(',')}`,
      headers: maxauth('MAXADMIN'),
    });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(json(response), documentedDefaults);
  });

  test('getProperties answers a flat map of strings keyed by the names asked for', async () => {
    const response = await t.app.inject({
      url: `/maximo/api/service/system?action=wsmethod:getProperties&propNames=mxe.oslc.idleexiry, mxe.apikeyforloggedinuser`,
      headers: maxauth('WILSON'),
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json');
    assert.deepEqual(json(response), { 'mxe.oslc.idleexiry': '300', 'mxe.apikeyforloggedinuser': '0' });
  });

  test('setProperty stores the value, answers the documented body and applies a live property at once', async () => {
    const body = await set('mxe.oslc.idleexiry', '600');
    assert.deepEqual(body, {
      propName: 'mxe.oslc.idleexiry',
      serverName: 'COMMON',
      propValue: '600',
      oldValue: '300',
      liveRefresh: true,
      restartRequired: false,
    });
    assert.equal(await valueOf('mxe.oslc.idleexiry'), '600');
    assert.equal(t.services.properties.get('mxe.oslc.idleexiry'), '600');
    assert.equal(t.services.properties.getInteger('mxe.oslc.idleexiry'), 600);
    const second = await set('mxe.oslc.idleexiry', ' 0900 ');
    assert.equal(second.propValue, '900', 'integers are stored in their plain form');
    assert.equal(second.oldValue, '600');
    assert.equal(await valueOf('mxe.oslc.idleexiry'), '900');
  });

  test('oldValue is the value that applied before: the default, then COMMON for a server without its own', async () => {
    const first = await set('mxe.oslc.maxpagesize', '500');
    assert.equal(first.oldValue, '1000', 'the default, as docs/properties.md shows');
    const server = await set('mxe.oslc.maxpagesize', '400', 'SERVER9');
    assert.equal(server.oldValue, '500', "COMMON's value, which the server had");
    assert.equal((await set('mxe.oslc.maxpagesize', '300', 'SERVER9')).oldValue, '400');
    await set('mxe.oslc.maxpagesize', '1000');
  });

  test('setProperty reads a body without a content type as JSON, as apitoken/create does', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: `${SYSTEM}?action=wsmethod:setProperty`,
      headers: maxauth('MAXADMIN'),
      body: JSON.stringify({ propName: 'mxe.oslc.idleexiry', propValue: '450' }),
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).propValue, '450');
    const typed = await t.app.inject({
      method: 'POST',
      url: `${SYSTEM}?action=wsmethod:setProperty`,
      headers: { ...maxauth('MAXADMIN'), 'content-type': 'text/csv' },
      body: 'propName,propValue',
    });
    assertError(typed, 415, 'EAS0006E');
  });

  test('every set leaves a history row: who, when, old, new, server', async () => {
    const started = Date.now() - 1000;
    await set('mxe.adminmode.numsessions', '7');
    await set('mxe.adminmode.numsessions', '9');
    const history = await adminRead('action=wsmethod:getPropertyHistory&propName=mxe.adminmode.numsessions');
    const entries = history.member as Array<Record<string, unknown>>;
    assert.equal(entries.length, 2);
    assert.deepEqual(
      entries.map(({ changedate: _changedate, ...rest }) => rest),
      [
        {
          propname: 'mxe.adminmode.numsessions',
          servername: 'COMMON',
          oldvalue: '7',
          newvalue: '9',
          changeby: 'MAXADMIN',
        },
        {
          propname: 'mxe.adminmode.numsessions',
          servername: 'COMMON',
          oldvalue: null,
          newvalue: '7',
          changeby: 'MAXADMIN',
        },
      ],
    );
    for (const entry of entries) {
      const when = Date.parse(String(entry.changedate));
      assert.ok(when >= started && when <= Date.now() + 1000, `changedate ${String(entry.changedate)}`);
    }
    assert.equal(await historyCount('mxe.adminmode.numsessions'), 2);
  });

  test('mxe.oslc.maxpagesize changes the collection page-size limit without a restart', async () => {
    const collection = (query: string) =>
      t.app.inject({ url: `/maximo/oslc/os/mxapiasset?lean=1&${query}`, headers: maxauth('MAXADMIN') });
    assert.equal((await collection('oslc.pageSize=6')).statusCode, 200);
    await set('mxe.oslc.maxpagesize', '5');
    try {
      assertError(await collection('oslc.pageSize=6'), 400, 'EAS0004E');
      const page = await collection('oslc.pageSize=5');
      assert.equal(page.statusCode, 200);
      const unsized = json(await collection('oslc.select=assetnum'));
      assert.equal(unsized.member?.length, 5, 'without oslc.pageSize a page is as large as the limit');
    } finally {
      await set('mxe.oslc.maxpagesize', '1000');
    }
    assert.equal((await collection('oslc.pageSize=6')).statusCode, 200);
  });

  test('mxe.oslc.<os>.maxpagesize is a property of each object structure, its aliases included', async () => {
    const properties = t.services.properties;
    assert.equal(await valueOf('mxe.oslc.mxapiasset.maxpagesize'), '', 'known family member, no value yet');
    const body = await set('mxe.oslc.MXASSET.maxpagesize', '3');
    assert.equal(body.propName, 'mxe.oslc.mxapiasset.maxpagesize', 'an alias names the structure’s property');
    assert.equal(await valueOf('mxe.oslc.mxapiasset.maxpagesize'), '3');
    assert.equal(properties.maxPageSize('MXAPIASSET'), 3);
    assert.equal(properties.maxPageSize('mxasset'), 3);
    assert.equal(properties.maxPageSize('MXAPIITEM'), 1000);
    const collection = (os: string, pageSize: number) =>
      t.app.inject({
        url: `/maximo/oslc/os/${os}?lean=1&oslc.pageSize=${pageSize}`,
        headers: maxauth('MAXADMIN'),
      });
    assertError(await collection('mxapiasset', 4), 400, 'EAS0004E');
    assertError(await collection('MXASSET', 4), 400, 'EAS0004E');
    assert.equal((await collection('mxapiasset', 3)).statusCode, 200);
    assert.equal((await collection('mxapiitem', 4)).statusCode, 200);
    assertError(await getProperty('mxe.oslc.nosuchstructure.maxpagesize'), 404, 'EAS0060E');
    await set('mxe.oslc.mxapiasset.maxpagesize', null);
    assert.equal(properties.maxPageSize('MXAPIASSET'), 1000, 'without a value the global limit applies');
    assert.equal((await collection('mxapiasset', 4)).statusCode, 200);
  });

  test('a property that does not refresh live is stored, reported pending, and applied at restart', async () => {
    const body = await set('mxe.useAppServerSecurity', '1');
    assert.equal(body.liveRefresh, false);
    assert.equal(body.restartRequired, true);
    assert.equal(await valueOf('mxe.useAppServerSecurity'), '0', 'the running process keeps its value');
    assert.equal(t.services.properties.getFlag('mxe.useAppServerSecurity'), false);

    const before = await adminRead('action=wsmethod:describeProperty&propName=mxe.useAppServerSecurity');
    assert.equal(before.liverefresh, false);
    assert.deepEqual(
      (before.maxpropvalue as Array<Record<string, unknown>>).map((row) => [row.servername, row.propvalue]),
      [['COMMON', '1']],
    );
    const applied = (before.maxpropapplied as Array<Record<string, unknown>>).find(
      (row) => row.servername === 'TESTSERVER',
    );
    assert.equal(applied?.propvalue, '0');
    assert.equal(applied?.storedvalue, '1');
    assert.equal(applied?.pending, true);

    // A restart of this server process: a new service on the same database with the same server name.
    const restarted = await startService('TESTSERVER');
    assert.equal(restarted.get('mxe.useAppServerSecurity'), '1');
    const afterRestart = await adminRead(
      'action=wsmethod:describeProperty&propName=mxe.useAppServerSecurity',
    );
    const reapplied = (afterRestart.maxpropapplied as Array<Record<string, unknown>>).find(
      (row) => row.servername === 'TESTSERVER',
    );
    assert.equal(reapplied?.propvalue, '1');
    assert.equal(reapplied?.pending, false);
    await restarted.close();
  });

  test('a live set reaches another server process through the bus, which acknowledges it', async () => {
    const other = await startService('SECONDSERVER');
    assert.equal(other.get('mxe.sec.IPblock.sec'), '30');
    await set('mxe.sec.IPblock.sec', '45');
    await other.settled();
    assert.equal(other.get('mxe.sec.IPblock.sec'), '45');
    const described = await adminRead('action=wsmethod:describeProperty&propName=mxe.sec.IPblock.sec');
    const applied = new Map(
      (described.maxpropapplied as Array<Record<string, unknown>>).map((row) => [row.servername, row]),
    );
    for (const server of ['TESTSERVER', 'SECONDSERVER']) {
      assert.equal(applied.get(server)?.propvalue, '45', server);
      assert.equal(applied.get(server)?.pending, false, server);
      assert.match(String(applied.get(server)?.appliedat), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    }
    await other.close();
  });

  test('after notifications may have been missed, every property is reloaded', async () => {
    // A change this process did not hear of, as when its listening connection was lost.
    await db
      .insertInto('maxpropvalue')
      .values({
        propname: 'mxe.dm.autoapprovepkgdef',
        servername: 'COMMON',
        propvalue: '1',
        encryptedvalue: null,
      })
      .execute();
    assert.equal(t.services.properties.get('mxe.dm.autoapprovepkgdef'), '0');
    t.storage.bus.deliverLocally('property', '*');
    await t.services.properties.settled();
    assert.equal(t.services.properties.get('mxe.dm.autoapprovepkgdef'), '1');
    assert.equal(t.services.properties.get('mxe.oslc.maxpagesize'), '1000', 'the others keep their values');
    assert.equal(await valueOf('mxe.dm.autoapprovepkgdef'), '1');
  });

  test("a server's own value wins over COMMON; another server's value does not apply here", async () => {
    await set('mxe.oslc.webappurl', 'http://common.example/maximo/oslc');
    await set('mxe.oslc.webappurl', 'http://other.example/maximo/oslc', 'OTHERSERVER');
    assert.equal(await valueOf('mxe.oslc.webappurl'), 'http://common.example/maximo/oslc');
    await set('mxe.oslc.webappurl', 'http://this.example/maximo/oslc', 'TESTSERVER');
    assert.equal(await valueOf('mxe.oslc.webappurl'), 'http://this.example/maximo/oslc');
    const described = await adminRead('action=wsmethod:describeProperty&propName=mxe.oslc.webappurl');
    assert.deepEqual(
      (described.maxpropvalue as Array<Record<string, unknown>>).map((row) => [
        row.servername,
        row.propvalue,
      ]),
      [
        ['COMMON', 'http://common.example/maximo/oslc'],
        ['OTHERSERVER', 'http://other.example/maximo/oslc'],
        ['TESTSERVER', 'http://this.example/maximo/oslc'],
      ],
    );
    await set('mxe.oslc.webappurl', null, 'TESTSERVER');
    assert.equal(await valueOf('mxe.oslc.webappurl'), '', 'a null value stored for this server is no value');
  });

  test('secure values are masked for non-administrators only', async () => {
    assert.equal(await valueOf('mxe.sec.IPblock.num', 'SMITH'), '********');
    assert.equal(await valueOf('mxe.sec.IPblock.num', 'MAXADMIN'), '50');
    const response = await t.app.inject({
      url: `${SYSTEM}?action=wsmethod:getProperties&propNames=mxe.sec.IPblock.num,mxe.sec.IPblock`,
      headers: maxauth('WILSON'),
    });
    assert.deepEqual(json(response), { 'mxe.sec.IPblock.num': '********', 'mxe.sec.IPblock': '1' });
  });

  test('refused: unknown property, on every call', async () => {
    const error = assertError(await getProperty('mxe.no.such.property'), 404, 'EAS0060E');
    assert.equal(error.errattrvalue, 'mxe.no.such.property');
    assertError(
      await t.app.inject({
        url: `${SYSTEM}?action=wsmethod:getProperties&propNames=mxe.oslc.maxpagesize,mxe.no.such.property`,
        headers: maxauth('MAXADMIN'),
      }),
      404,
      'EAS0060E',
    );
    assertError(await setProperty({ propName: 'mxe.no.such.property', propValue: '1' }), 404, 'EAS0060E');
    assertError(
      await t.app.inject({
        url: `${SYSTEM}?action=wsmethod:getPropertyHistory&propName=mxe.no.such.property`,
        headers: maxauth('MAXADMIN'),
      }),
      404,
      'EAS0060E',
    );
  });

  test('refused: a value of the wrong type', async () => {
    for (const [propName, propValue] of [
      ['mxe.oslc.maxpagesize', 'many'],
      ['mxe.oslc.maxpagesize', '12.5'],
      ['mxe.oslc.maxpagesize', '99999999999'],
      ['mxe.apikeyforloggedinuser', 'yes'],
      ['mxe.apikeyforloggedinuser', '2'],
      ['mxe.oslc.webappurl', 'x'.repeat(513)],
    ] as const) {
      const error = assertError(await setProperty({ propName, propValue }), 400, 'EAS0061E');
      assert.equal(error.errorattrname, 'propValue');
    }
    assert.equal(await valueOf('mxe.oslc.maxpagesize'), '1000');
    assert.equal(await valueOf('mxe.apikeyforloggedinuser'), '0');
  });

  test('refused: a value outside the domain', async () => {
    assertError(await setProperty({ propName: 'mxe.oslc.maxpagesize', propValue: '0' }), 400, 'EAS0062E');
    assertError(await setProperty({ propName: 'mxe.oslc.idleexiry', propValue: '-5' }), 400, 'EAS0062E');
    await register({ propname: 'eas.test.worktype', maxtype: 'ALN', domainid: 'WORKTYPE' });
    assertError(await setProperty({ propName: 'eas.test.worktype', propValue: 'XX' }), 400, 'EAS0062E');
    await set('eas.test.worktype', 'PM');
    assert.equal(await valueOf('eas.test.worktype'), 'PM');
    assert.equal(await valueOf('mxe.oslc.maxpagesize'), '1000');
  });

  test('refused: null where nulls are not allowed; accepted where they are', async () => {
    for (const body of [
      { propName: 'mxe.oslc.maxpagesize', propValue: null },
      { propName: 'mxe.oslc.maxpagesize', propValue: '' },
      { propName: 'mxe.oslc.maxpagesize' },
    ]) {
      assertError(await setProperty(body), 400, 'EAS0063E');
    }
    assert.equal(await valueOf('mxe.oslc.maxpagesize'), '1000');
    await set('mxe.apikeysysusers', 'MXINTADM');
    assert.equal(await valueOf('mxe.apikeysysusers'), 'MXINTADM');
    await set('mxe.apikeysysusers', null);
    assert.equal(await valueOf('mxe.apikeysysusers'), '');
  });

  test('refused: a property that cannot be changed online, with nothing stored', async () => {
    assertError(await setProperty({ propName: 'mxe.secureapikey', propValue: '0' }), 400, 'EAS0064E');
    assert.equal(await valueOf('mxe.secureapikey'), '1');
    assert.equal(await historyCount('mxe.secureapikey'), 0);
  });

  test('refused: a global-only property for a named server, an instance-only one for COMMON', async () => {
    const error = assertError(
      await setProperty({ propName: 'mxe.apikeyforloggedinuser', serverName: 'TESTSERVER', propValue: '1' }),
      400,
      'EAS0065E',
    );
    assert.equal(error.errorattrname, 'serverName');
    await register({
      propname: 'eas.test.instance',
      maxtype: 'INTEGER',
      instanceonly: true,
      maximodefault: '4',
    });
    assertError(await setProperty({ propName: 'eas.test.instance', propValue: '5' }), 400, 'EAS0065E');
    await set('eas.test.instance', '6', 'TESTSERVER');
    assert.equal(await valueOf('eas.test.instance'), '6');
  });

  test('refused: callers who are not administrators cannot set or read the registry', async () => {
    for (const user of ['WILSON', 'SMITH'] as const) {
      assertError(
        await setProperty({ propName: 'mxe.oslc.idleexiry', propValue: '42' }, user),
        400,
        'BMXAA0024E',
      );
      for (const action of ['describeProperty', 'getPropertyHistory']) {
        assertError(
          await t.app.inject({
            url: `${SYSTEM}?action=wsmethod:${action}&propName=mxe.oslc.idleexiry`,
            headers: maxauth(user),
          }),
          400,
          'BMXAA0024E',
        );
      }
    }
    assert.notEqual(await valueOf('mxe.oslc.idleexiry'), '42');
    const anonymous = await t.app.inject({
      url: `${SYSTEM}?action=wsmethod:getProperty&propName=mxe.oslc.idleexiry`,
    });
    assertError(anonymous, 401, 'BMXAA7901E');
  });

  test('refused: missing action, unknown action, missing names, wrong method, malformed body', async () => {
    const error = assertError(
      await t.app.inject({ url: `${SYSTEM}?propName=mxe.oslc.maxpagesize`, headers: maxauth('MAXADMIN') }),
      400,
      'EAS0066E',
    );
    assert.equal(error.errorattrname, 'action');
    assertError(
      await t.app.inject({
        method: 'POST',
        url: SYSTEM,
        headers: maxauth('MAXADMIN'),
        payload: { propName: 'mxe.oslc.maxpagesize', propValue: '10' },
      }),
      400,
      'EAS0066E',
    );
    assertError(
      await t.app.inject({ url: `${SYSTEM}?action=wsmethod:getProperty`, headers: maxauth('MAXADMIN') }),
      400,
      'EAS0066E',
    );
    assertError(
      await t.app.inject({
        url: `${SYSTEM}?action=wsmethod:getProperties&propNames=,`,
        headers: maxauth('MAXADMIN'),
      }),
      400,
      'EAS0066E',
    );
    assertError(
      await t.app.inject({
        url: `${SYSTEM}?action=wsmethod:dropProperty&propName=mxe.oslc.maxpagesize`,
        headers: maxauth('MAXADMIN'),
      }),
      400,
      'EAS0067E',
    );
    assertError(
      await t.app.inject({
        url: `${SYSTEM}?action=wsmethod:setProperty&propName=mxe.oslc.maxpagesize`,
        headers: maxauth('MAXADMIN'),
      }),
      405,
      'EAS0007E',
    );
    assertError(await setProperty({ propValue: '10' }), 400, 'EAS0004E');
    assertError(
      await setProperty({ propName: 'mxe.oslc.maxpagesize', propValue: { a: 1 } }),
      400,
      'EAS0004E',
    );
    assert.equal(await valueOf('mxe.oslc.maxpagesize'), '1000');
  });

  test('an encrypted property is stored sealed and read in clear by administrators only', async () => {
    await register({ propname: 'eas.test.secret', maxtype: 'ALN', encrypted: true });
    await set('eas.test.secret', 'open sesame');
    const row = await db
      .selectFrom('maxpropvalue')
      .select(['propvalue', 'encryptedvalue'])
      .where('propname', '=', 'eas.test.secret')
      .executeTakeFirstOrThrow();
    assert.equal(row.propvalue, null);
    assert.ok(row.encryptedvalue && !row.encryptedvalue.includes('open sesame'));
    const history = await db
      .selectFrom('maxprophistory')
      .select('newvalue')
      .where('propname', '=', 'eas.test.secret')
      .executeTakeFirstOrThrow();
    assert.ok(!String(history.newvalue).includes('open sesame'));
    assert.equal(await valueOf('eas.test.secret'), 'open sesame');
    assert.equal(await valueOf('eas.test.secret', 'WILSON'), '********');

    const withoutKey = await startService('NOKEYSERVER');
    assert.equal(withoutKey.get('eas.test.secret'), undefined, 'a value it cannot open is not used');
    const admin = (await t.services.auth.profile('MAXADMIN'))!;
    await assert.rejects(
      withoutKey.set({ propName: 'eas.test.secret', propValue: 'other' }, admin),
      (error: { reasonCode?: string }) => error.reasonCode === 'EAS0068E',
    );
    await withoutKey.close();
  });

  test('the registry read lists every property with its flags', async () => {
    const listing = await adminRead('action=wsmethod:describeProperties');
    const members = listing.member as Array<Record<string, unknown>>;
    const names = members.map((member) => member.propname);
    for (const name of Object.keys(documentedDefaults)) assert.ok(names.includes(name), name);
    const pageSize = members.find((member) => member.propname === 'mxe.oslc.maxpagesize')!;
    assert.equal(pageSize.maxtype, 'INTEGER');
    assert.equal(pageSize.maximodefault, '1000');
    assert.equal(pageSize.liverefresh, true);
    assert.equal(pageSize.onlinechanges, true);
    assert.equal(pageSize.nullsallowed, false);
    const secure = members.find((member) => member.propname === 'mxe.secureapikey')!;
    assert.equal(secure.onlinechanges, false);
    assert.equal(secure.globalonly, true);
  });
});
