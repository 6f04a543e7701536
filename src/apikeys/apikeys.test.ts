import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import type { Database } from '../db/schema.js';

const MASTER_KEY = 'apikeys-test-master-key-0123456789abcdef';
const ASSETS = '/maximo/oslc/os/mxapiasset?oslc.select=assetnum&oslc.pageSize=1&lean=1';
const KEYS = '/maximo/oslc/os/mxapiapikey';
const GET_PROPERTY = '/maximo/oslc/service/system?action=wsmethod:getProperty&propName=mxe.oslc.maxpagesize';
/** A strong externally generated value (letters, digits, 40 characters). */
const EXTERNAL_KEY = 'Ext3rnal-Key-abcdefghijklmnopqrstuvwxyz0123';

function assertError(response: LightMyRequestResponse, status: number, reasonCode: string): Json {
  assert.equal(response.statusCode, status, response.body);
  const error = json(response).Error;
  assert.equal(error?.reasonCode, reasonCode, response.body);
  assert.equal(error?.statusCode, String(status));
  return json(response);
}

describe('API keys', () => {
  let t: TestApp;
  let db: Kysely<Database>;

  const call = (options: InjectOptions) => t.app.inject(options);
  const admin = maxauth('MAXADMIN');

  async function setProperty(propName: string, propValue: string | null): Promise<void> {
    const response = await call({
      method: 'POST',
      url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
      headers: admin,
      payload: { propName, serverName: 'COMMON', propValue },
    });
    assert.equal(response.statusCode, 200, response.body);
  }

  async function createOwn(
    user: 'MAXADMIN' | 'WILSON' | 'SMITH',
    payload: unknown = { expiration: -1 },
  ): Promise<string> {
    const response = await call({
      method: 'POST',
      url: '/maximo/oslc/apitoken/create',
      headers: { ...maxauth(user), 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], 'application/json');
    const apikey = json(response).apikey;
    assert.equal(typeof apikey, 'string');
    return apikey as string;
  }

  const withKey = (apikey: string, url = ASSETS) => call({ url, headers: { apikey } });

  async function adminKeys(where?: string): Promise<Json[]> {
    const query = new URLSearchParams({ lean: '1', 'oslc.select': '*' });
    if (where !== undefined) query.set('oslc.where', where);
    const response = await call({ url: `${KEYS}?${query.toString()}`, headers: admin });
    assert.equal(response.statusCode, 200, response.body);
    return json(response).member ?? [];
  }

  before(async () => {
    t = await startTestApp({ EAS_MASTER_KEY: MASTER_KEY, EAS_API_KEY_ONLY: '1' });
    db = t.storage.db;
  });
  after(() => t.close());
  beforeEach(async () => {
    await db.deleteFrom('apikeytoken').execute();
    t.services.apiKeys.invalidate();
    await setProperty('mxe.apikeysysusers', null);
    await setProperty('mxe.apikeyforloggedinuser', '0');
    await setProperty('mxe.allowexternalapikey', '0');
  });

  describe('self service: /apitoken/create and /apitoken/revoke', () => {
    test('create answers {"apikey"}; the key authenticates as its owner with the owner\'s rights', async () => {
      const apikey = await createOwn('SMITH');
      const read = await withKey(apikey);
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(json(read).member?.length, 1);
      // SMITH may read assets but not write them: the key carries his rights, not more.
      const write = await call({
        method: 'POST',
        url: '/maximo/oslc/os/mxapiasset',
        headers: { apikey },
        payload: { assetnum: 'KEYWRITE', siteid: 'BEDFORD' },
      });
      assertError(write, 400, 'BMXAA9301E');
      const whoami = await call({ url: '/maximo/oslc/whoami', headers: { apikey } });
      assert.equal(whoami.statusCode, 200, whoami.body);
      assert.equal(json(whoami).userid, 'SMITH');
    });

    test('calling create again regenerates the key: the old value stops working at once', async () => {
      const first = await createOwn('WILSON');
      assert.equal((await withKey(first)).statusCode, 200);
      const second = await createOwn('WILSON');
      assert.notEqual(second, first);
      assertError(await withKey(first), 400, 'BMXAA9549E');
      assert.equal((await withKey(second)).statusCode, 200);
      assert.equal((await adminKeys('userid="WILSON"')).length, 1, 'still one key per user');
    });

    test('a body that is a JSON string holding the object is accepted, as are bodies with other types', async () => {
      const wrapped = await createOwn('WILSON', JSON.stringify({ expiration: 30 }));
      assert.equal((await withKey(wrapped)).statusCode, 200);
      const [member] = await adminKeys('userid="WILSON"');
      assert.equal(member?.expiration, 30);
      const plain = await call({
        method: 'POST',
        url: '/maximo/oslc/apitoken/create',
        headers: { ...maxauth('WILSON'), 'content-type': 'text/plain' },
        payload: '{"expiration": -1}',
      });
      assert.equal(plain.statusCode, 200, plain.body);
      const [after] = await adminKeys('userid="WILSON"');
      assert.equal(after?.expiration, -1);
    });

    test('create refuses an expiration that is not minutes or -1, and malformed bodies', async () => {
      for (const expiration of [0, -5, 1.5, 'soon']) {
        assertError(
          await call({
            method: 'POST',
            url: '/maximo/oslc/apitoken/create',
            headers: maxauth('WILSON'),
            payload: { expiration },
          }),
          400,
          'EAS0074E',
        );
      }
      assertError(
        await call({
          method: 'POST',
          url: '/maximo/oslc/apitoken/create',
          headers: { ...maxauth('WILSON'), 'content-type': 'application/json' },
          payload: '{"expiration": ',
        }),
        400,
        'EAS0003E',
      );
      assert.equal((await adminKeys()).length, 0);
    });

    test("revoke deletes the caller's key, with any body or none; create and revoke work with an API key", async () => {
      const apikey = await createOwn('WILSON');
      // Authenticated by the key itself, the caller regenerates it.
      const regenerated = await call({
        method: 'POST',
        url: '/maximo/oslc/apitoken/create',
        headers: { apikey, 'content-type': 'application/json' },
        payload: '{"expiration": -1}',
      });
      assert.equal(regenerated.statusCode, 200, regenerated.body);
      const current = String(json(regenerated).apikey);
      assertError(await withKey(apikey), 400, 'BMXAA9549E');
      const revoked = await call({
        method: 'POST',
        url: '/maximo/oslc/apitoken/revoke',
        headers: { apikey: current, 'content-type': 'application/octet-stream' },
        payload: Buffer.from([1, 2, 3]),
      });
      assert.equal(revoked.statusCode, 200, revoked.body);
      assert.deepEqual(json(revoked), { revoked: true });
      assertError(await withKey(current), 400, 'BMXAA9549E');
      const again = await call({
        method: 'POST',
        url: '/maximo/oslc/apitoken/revoke',
        headers: maxauth('WILSON'),
      });
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual(json(again), { revoked: false });
    });

    test('create and revoke need a logged-in caller', async () => {
      assertError(
        await call({ method: 'POST', url: '/maximo/oslc/apitoken/create', payload: {} }),
        401,
        'BMXAA7901E',
      );
      assertError(await call({ method: 'POST', url: '/maximo/oslc/apitoken/revoke' }), 401, 'BMXAA7901E');
    });
  });

  describe('using a key', () => {
    test('header apikey or query parameter apikey; unknown keys are refused with BMXAA9549E', async () => {
      const apikey = await createOwn('WILSON');
      assert.equal((await withKey(apikey)).statusCode, 200);
      const byQuery = await call({ url: `${ASSETS}&apikey=${apikey}` });
      assert.equal(byQuery.statusCode, 200, byQuery.body);
      assert.ok(!byQuery.body.includes(apikey), 'the key is not echoed into hrefs');
      assertError(await withKey('0'.repeat(48)), 400, 'BMXAA9549E');
      assertError(await call({ url: `${ASSETS}&apikey=nosuchkey` }), 400, 'BMXAA9549E');
    });

    test('no session is created unless enablesession=1, which issues a JSESSIONID', async () => {
      const apikey = await createOwn('WILSON');
      const silent = await withKey(apikey);
      assert.equal(silent.headers['set-cookie'], undefined);
      const withSession = await withKey(apikey, `${ASSETS}&enablesession=1`);
      assert.equal(withSession.statusCode, 200, withSession.body);
      const cookies = [withSession.headers['set-cookie'] ?? []].flat();
      const session = cookies.find((cookie) => cookie.startsWith('JSESSIONID='));
      assert.ok(session, `a JSESSIONID cookie: ${cookies.join(' | ')}`);
      const byCookie = await call({ url: ASSETS, headers: { cookie: session.split(';')[0]! } });
      assert.equal(byCookie.statusCode, 200, byCookie.body);
    });

    test('a key expires its expiration minutes after creation; -1 never expires', async () => {
      const apikey = await createOwn('WILSON', { expiration: 5 });
      assert.equal((await withKey(apikey)).statusCode, 200);
      // Backdate the creation past the 5 minutes, as time would; the change reaches the cache through the bus.
      await db
        .updateTable('apikeytoken')
        .set({ creationdate: new Date(Date.now() - 6 * 60_000) })
        .where('userid', '=', 'WILSON')
        .execute();
      t.services.apiKeys.invalidate();
      assertError(await withKey(apikey), 400, 'BMXAA9549E');

      const forever = await createOwn('SMITH', { expiration: -1 });
      await db
        .updateTable('apikeytoken')
        .set({ creationdate: new Date('2001-01-01T00:00:00Z') })
        .where('userid', '=', 'SMITH')
        .execute();
      t.services.apiKeys.invalidate();
      assert.equal((await withKey(forever)).statusCode, 200);
    });

    test('a cached key expires without any write: expiry is checked on every use', async () => {
      const apikey = await createOwn('WILSON', { expiration: 1 });
      assert.equal((await withKey(apikey)).statusCode, 200, 'verified once, now cached');
      const realNow = Date.now;
      Date.now = () => realNow() + 2 * 60_000;
      try {
        assertError(await withKey(apikey), 400, 'BMXAA9549E');
      } finally {
        Date.now = realNow;
      }
    });

    test('a key sent in a URL is marked exposedinurl with the time; a header leaves it unmarked', async () => {
      const apikey = await createOwn('WILSON');
      await withKey(apikey);
      let [member] = await adminKeys('userid="WILSON"');
      assert.equal(member?.exposedinurl, false);
      const before = Date.now();
      assert.equal((await call({ url: `${ASSETS}&apikey=${apikey}` })).statusCode, 200);
      [member] = await adminKeys('userid="WILSON"');
      assert.equal(member?.exposedinurl, true);
      assert.ok(Date.parse(String(member?.exposeddate)) >= before - 1000, String(member?.exposeddate));
      // Regenerating gives a value that was never in a URL.
      await createOwn('WILSON');
      [member] = await adminKeys('userid="WILSON"');
      assert.equal(member?.exposedinurl, false);
    });

    test('the system-properties call answers with a key in the header', async () => {
      const apikey = await createOwn('SMITH');
      const response = await withKey(apikey, GET_PROPERTY);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(typeof json(response).return, 'string');
    });
  });

  describe('the /api route', () => {
    test('refuses every call without a valid key, before any other work', async () => {
      const apikey = await createOwn('WILSON');
      // maxauth and unknown paths alike: no key, no answer.
      assertError(await call({ url: '/maximo/api/os/mxapiasset', headers: admin }), 401, 'BMXAA7901E');
      assertError(await call({ url: '/maximo/api/no/such/route' }), 401, 'BMXAA7901E');
      assertError(await call({ url: '/maximo/api/error/messages/BMXAA7901E' }), 401, 'BMXAA7901E');
      assertError(
        await call({ url: '/maximo/api/os/mxapiasset', headers: { apikey: 'wrong' } }),
        400,
        'BMXAA9549E',
      );
      const ok = await call({ url: '/maximo/api/os/mxapiasset?oslc.pageSize=1', headers: { apikey } });
      assert.equal(ok.statusCode, 200, ok.body);
      // Unknown URLs with a valid key reach the not-found handler.
      assertError(await call({ url: '/maximo/api/no/such/route', headers: { apikey } }), 404, 'EAS0001E');
    });

    test('serves the same handlers; hrefs follow /api, or x-public-uri', async () => {
      const apikey = await createOwn('WILSON');
      const viaApi = json(
        await call({ url: '/maximo/api/os/mxapiasset?oslc.pageSize=1&lean=1', headers: { apikey } }),
      );
      const viaOslc = json(
        await call({ url: '/maximo/oslc/os/mxapiasset?oslc.pageSize=1&lean=1', headers: { apikey } }),
      );
      assert.deepEqual(
        viaApi.member?.map((member) => String(member.href).replace('/api/', '/oslc/')),
        viaOslc.member?.map((member) => String(member.href)),
      );
      assert.match(String(viaApi.member?.[0]?.href), /\/maximo\/api\/os\/mxapiasset\//);
      const rewritten = json(
        await call({
          url: '/maximo/api/os/mxapiasset?oslc.pageSize=1&lean=1',
          headers: { apikey, 'x-public-uri': 'https://public.example.com/maximo/api' },
        }),
      );
      assert.match(
        String(rewritten.member?.[0]?.href),
        /^https:\/\/public\.example\.com\/maximo\/api\/os\/mxapiasset\//,
      );
      const property = await call({ url: GET_PROPERTY.replace('/oslc/', '/api/'), headers: { apikey } });
      assert.equal(property.statusCode, 200, property.body);
    });
  });

  describe('MXAPIAPIKEY for administrators', () => {
    test('POST creates a key for a user (201); a second key for the same user is BMXAA10051E', async () => {
      const created = await call({
        method: 'POST',
        url: KEYS,
        headers: admin,
        payload: { expiration: -1, userid: 'wilson' },
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.match(String(created.headers.location), /\/maximo\/oslc\/os\/mxapiapikey\/_/);
      const second = await call({
        method: 'POST',
        url: KEYS,
        headers: admin,
        payload: { expiration: 60, userid: 'WILSON' },
      });
      const error = assertError(second, 400, 'BMXAA10051E');
      assert.equal(error.Error?.message, 'BMXAA10051E - Only one API key allowed per user.');
      // Also when the user made the key himself.
      await createOwn('SMITH');
      assertError(
        await call({
          method: 'POST',
          url: KEYS,
          headers: admin,
          payload: { expiration: -1, userid: 'SMITH' },
        }),
        400,
        'BMXAA10051E',
      );
    });

    test('the collection: members carry the documented fields, the key value usable as the apikey header', async () => {
      await call({
        method: 'POST',
        url: KEYS,
        headers: admin,
        payload: { expiration: -1, userid: 'WILSON' },
      });
      await createOwn('SMITH', { expiration: 90 });
      const members = await adminKeys('userid="WILSON"');
      assert.equal(members.length, 1);
      const member = members[0]!;
      for (const field of [
        'apikeytokenid',
        'userid',
        'apikey',
        'expiration',
        'creationdate',
        'clientcert',
        '_rowstamp',
        'href',
      ]) {
        assert.ok(field in member, `member has ${field}: ${JSON.stringify(member)}`);
      }
      assert.equal(member.userid, 'WILSON');
      assert.equal(member.expiration, -1);
      assert.equal(member.clientcert, false);
      assert.equal(typeof member.apikeytokenid, 'number');
      const read = await withKey(String(member.apikey));
      assert.equal(read.statusCode, 200, 'the listed value is the key itself');

      // The whole query language: ordering, counting, a condition on another attribute, one member by href.
      const ordered = json(
        await call({
          url: `${KEYS}?lean=1&oslc.select=userid,expiration&oslc.orderBy=-userid&collectioncount=1`,
          headers: admin,
        }),
      );
      assert.deepEqual(
        ordered.member?.map((entry) => entry.userid),
        ['WILSON', 'SMITH'],
      );
      assert.equal((ordered.responseInfo as Json).totalCount, 2);
      const count = json(
        await call({
          url: `${KEYS}?count=1&oslc.where=${encodeURIComponent('expiration>0')}`,
          headers: admin,
        }),
      );
      assert.deepEqual(count, { totalCount: 1 });
      const one = await call({ url: `${String(member.href)}?lean=1`, headers: admin });
      assert.equal(one.statusCode, 200, one.body);
      assert.equal(json(one).apikey, member.apikey);
      const byNumber = await call({ url: `${KEYS}/${String(member.apikeytokenid)}?lean=1`, headers: admin });
      assert.equal(json(byNumber).userid, 'WILSON');
    });

    test('the stored value is sealed: the column holds no key value, and only administrators read it', async () => {
      const apikey = await createOwn('WILSON');
      const row = await db
        .selectFrom('apikeytoken')
        .selectAll()
        .where('userid', '=', 'WILSON')
        .executeTakeFirstOrThrow();
      assert.notEqual(row.apikey, apikey);
      assert.ok(!row.apikey.includes(apikey));
      assert.match(String(row.apikeydigest), /^[0-9a-f]{64}$/);
      assert.notEqual(row.apikeydigest, apikey);
      const members = await adminKeys();
      assert.equal(members[0]?.apikey, apikey);
      assertError(await call({ url: `${KEYS}?distinct=apikey`, headers: admin }), 400, 'EAS0020E');
    });

    test('DELETE removes the key (204) and the key stops working; an unknown id is 404 BMXAA8727E', async () => {
      const apikey = await createOwn('WILSON');
      assert.equal((await withKey(apikey)).statusCode, 200);
      const [member] = await adminKeys('userid="WILSON"');
      const removed = await call({ method: 'DELETE', url: String(member?.href), headers: admin });
      assert.equal(removed.statusCode, 204, removed.body);
      assertError(await withKey(apikey), 400, 'BMXAA9549E');
      assertError(
        await call({ method: 'DELETE', url: String(member?.href), headers: admin }),
        404,
        'BMXAA8727E',
      );
      assertError(await call({ method: 'DELETE', url: `${KEYS}/987654`, headers: admin }), 404, 'BMXAA8727E');
    });

    test("the same structure is served on /api, with an administrator's key", async () => {
      const apikey = await createOwn('MAXADMIN');
      const created = await call({
        method: 'POST',
        url: '/maximo/api/os/mxapiapikey',
        headers: { apikey },
        payload: { expiration: 10, userid: 'WILSON' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const list = json(
        await call({
          url: '/maximo/api/os/mxapiapikey?oslc.select=*&oslc.where=userid="WILSON"',
          headers: { apikey },
        }),
      );
      assert.equal(list.member?.length, 1);
      const removed = await call({
        method: 'DELETE',
        url: String(list.member?.[0]?.href),
        headers: { apikey },
      });
      assert.equal(removed.statusCode, 204);
    });

    test('users who are not administrators cannot manage keys', async () => {
      assertError(await call({ url: KEYS, headers: maxauth('SMITH') }), 400, 'BMXAA9301E');
      assertError(
        await call({
          method: 'POST',
          url: KEYS,
          headers: maxauth('WILSON'),
          payload: { expiration: -1, userid: 'WILSON' },
        }),
        400,
        'BMXAA9301E',
      );
    });

    test('the key value cannot be changed afterwards; the expiration can, and takes effect', async () => {
      const apikey = await createOwn('WILSON');
      const [member] = await adminKeys('userid="WILSON"');
      const href = String(member?.href);
      assertError(
        await call({
          method: 'POST',
          url: href,
          headers: { ...admin, 'x-method-override': 'PATCH' },
          payload: { apikey: EXTERNAL_KEY },
        }),
        400,
        'EAS0012E',
      );
      assertError(
        await call({
          method: 'POST',
          url: href,
          headers: { ...admin, 'x-method-override': 'PATCH' },
          payload: { expiration: 0 },
        }),
        400,
        'EAS0074E',
      );
      assert.equal((await withKey(apikey)).statusCode, 200);
      await db
        .updateTable('apikeytoken')
        .set({ creationdate: new Date(Date.now() - 10 * 60_000) })
        .where('userid', '=', 'WILSON')
        .execute();
      t.services.apiKeys.invalidate();
      assert.equal((await withKey(apikey)).statusCode, 200, 'never expires yet');
      const patched = await call({
        method: 'POST',
        url: href,
        headers: { ...admin, 'x-method-override': 'PATCH' },
        payload: { expiration: 5 },
      });
      assert.equal(patched.statusCode, 204, patched.body);
      assertError(await withKey(apikey), 400, 'BMXAA9549E');
    });
  });

  describe('properties, switched at run time', () => {
    test('mxe.apikeysysusers: listed users get no key through MXAPIAPIKEY, but can through /apitoken/create', async () => {
      await setProperty('mxe.apikeysysusers', 'maxadmin, WILSON');
      assertError(
        await call({
          method: 'POST',
          url: KEYS,
          headers: admin,
          payload: { expiration: -1, userid: 'WILSON' },
        }),
        400,
        'EAS0070E',
      );
      const own = await createOwn('WILSON');
      assert.equal((await withKey(own)).statusCode, 200);
      const smith = await call({
        method: 'POST',
        url: KEYS,
        headers: admin,
        payload: { expiration: -1, userid: 'SMITH' },
      });
      assert.equal(smith.statusCode, 201, 'SMITH is not listed');
      await setProperty('mxe.apikeysysusers', null);
      await call({ method: 'POST', url: '/maximo/oslc/apitoken/revoke', headers: maxauth('WILSON') });
      const wilson = await call({
        method: 'POST',
        url: KEYS,
        headers: admin,
        payload: { expiration: -1, userid: 'WILSON' },
      });
      assert.equal(wilson.statusCode, 201, wilson.body);
    });

    test('mxe.apikeyforloggedinuser=1: administrators cannot create keys for others, only for themselves', async () => {
      await setProperty('mxe.apikeyforloggedinuser', '1');
      assertError(
        await call({
          method: 'POST',
          url: KEYS,
          headers: admin,
          payload: { expiration: -1, userid: 'WILSON' },
        }),
        400,
        'EAS0071E',
      );
      const self = await call({
        method: 'POST',
        url: KEYS,
        headers: admin,
        payload: { expiration: -1, userid: 'MAXADMIN' },
      });
      assert.equal(self.statusCode, 201, self.body);
      const own = await createOwn('WILSON');
      assert.equal((await withKey(own)).statusCode, 200, 'users still create their own');
      await setProperty('mxe.apikeyforloggedinuser', '0');
      const forSmith = await call({
        method: 'POST',
        url: KEYS,
        headers: admin,
        payload: { expiration: -1, userid: 'SMITH' },
      });
      assert.equal(forSmith.statusCode, 201, forSmith.body);
    });

    test('mxe.allowexternalapikey: 0 refuses a supplied value, otherwise a strong one is accepted', async () => {
      assertError(
        await call({
          method: 'POST',
          url: KEYS,
          headers: admin,
          payload: { expiration: -1, userid: 'WILSON', apikey: EXTERNAL_KEY },
        }),
        400,
        'EAS0072E',
      );
      assertError(
        await call({
          method: 'POST',
          url: '/maximo/oslc/apitoken/create',
          headers: maxauth('WILSON'),
          payload: { expiration: -1, apikey: EXTERNAL_KEY },
        }),
        400,
        'EAS0072E',
      );
      await setProperty('mxe.allowexternalapikey', '1');
      for (const weak of ['short-key', 'a'.repeat(40), `${'ab'.repeat(20)}`, `${EXTERNAL_KEY} with spaces`]) {
        assertError(
          await call({
            method: 'POST',
            url: KEYS,
            headers: admin,
            payload: { expiration: -1, userid: 'WILSON', apikey: weak },
          }),
          400,
          'EAS0073E',
        );
      }
      const accepted = await call({
        method: 'POST',
        url: KEYS,
        headers: admin,
        payload: { expiration: -1, userid: 'WILSON', apikey: EXTERNAL_KEY },
      });
      assert.equal(accepted.statusCode, 201, accepted.body);
      assert.equal((await withKey(EXTERNAL_KEY)).statusCode, 200);
      const own = await createOwn('SMITH', { expiration: -1, apikey: `${EXTERNAL_KEY}-smith` });
      assert.equal(own, `${EXTERNAL_KEY}-smith`);
      await setProperty('mxe.allowexternalapikey', '0');
      assert.equal((await withKey(EXTERNAL_KEY)).statusCode, 200, 'keys already made keep working');
      const generated = await createOwn('SMITH');
      assert.match(generated, /^[0-9a-f]{48}$/);
    });
  });
});
