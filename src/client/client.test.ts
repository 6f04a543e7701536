import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startListeningServer, type ListeningServer } from '../../test/helpers/http-server.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD } from '../../test/helpers/storage.js';
import { EasClient, EasClientError, presentableUrl, type Credentials } from './index.js';

/** The SDK against a server listening on a real port (a server process on PostgreSQL). */
describe('client SDK', () => {
  let server: ListeningServer;
  let admin: EasClient;

  const client = (credentials: Credentials) => new EasClient({ baseUrl: server.base, credentials });

  before(async () => {
    server = await startListeningServer('SDKSRV');
    admin = client({ scheme: 'maxauth', user: 'MAXADMIN', password: ADMIN_PASSWORD });
  });
  after(async () => {
    await admin?.logout();
    await server?.close();
  });

  test('a collection query is read page by page through nextPage, every member once', async () => {
    const where = 'siteid="BEDFORD"';
    const total = await admin.count('mxapiasset', where);
    assert.ok(total > 100, `${total} assets`);
    const query = admin.query('mxapiasset', {
      where,
      select: 'assetnum,siteid',
      orderBy: '+assetnum',
      pageSize: 40,
    });
    let pages = 0;
    const seen = new Set<string>();
    for await (const page of query) {
      pages++;
      assert.ok(page.member.length <= 40);
      for (const member of page.member) {
        assert.equal(member.siteid, 'BEDFORD');
        seen.add(String(member.assetnum));
      }
    }
    assert.equal(pages, Math.ceil(total / 40));
    assert.equal(seen.size, total);
    const first = await query.first();
    assert.equal(first.member.length, 40);
    assert.equal(first.responseInfo?.pagenum, 1);
  });

  test('BASIC and FORM logins open a session whose cookie is replayed; logout ends it', async () => {
    for (const scheme of ['basic', 'form'] as const) {
      const wilson = client({ scheme, user: 'WILSON', password: DEMO_PASSWORD });
      const profile = await wilson.whoami();
      assert.equal(profile.loginUserName, 'WILSON', scheme);
      assert.equal((await wilson.query('mxapiasset', { pageSize: 1 }).first()).member.length, 1);
      await wilson.logout();
    }
  });

  test('per-request credentials never call the login route, so nothing is left behind', async () => {
    for (const scheme of ['maxauth', 'basic'] as const) {
      const paths: string[] = [];
      const wilson = new EasClient({
        baseUrl: server.base,
        credentials: { scheme, user: 'WILSON', password: DEMO_PASSWORD },
        perRequestCredentials: true,
        fetch: (input, init) => {
          paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
          return fetch(input, init);
        },
      });
      assert.equal((await wilson.whoami()).loginUserName, 'WILSON', scheme);
      assert.equal((await wilson.query('mxapiasset', { pageSize: 1 }).first()).member.length, 1);
      await wilson.logout();
      assert.ok(!paths.some((path) => /\/(login|logout)$/.test(path)), `${scheme}: ${paths.join(' ')}`);
    }
  });

  test('a refused login is an EasClientError with the reason code, status and request, and no password', async () => {
    const wrong = client({ scheme: 'maxauth', user: 'WILSON', password: 'not-the-password-x' });
    const error = await wrong.whoami().then(
      () => assert.fail('the login was accepted'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof EasClientError);
    assert.equal(error.kind, 'server');
    assert.equal(error.reasonCode, 'BMXAA7901E');
    assert.equal(error.status, 401);
    assert.equal(error.request.method, 'POST');
    assert.match(error.request.url, /\/maximo\/oslc\/login/);
    const everything = JSON.stringify({ ...error, message: error.message, stack: error.stack });
    assert.ok(!everything.includes('not-the-password-x'));
    assert.ok(!everything.includes(Buffer.from('WILSON:not-the-password-x').toString('base64')));
  });

  test('API keys: create, call with it, list, delete as administrator, revoke', async () => {
    const wilson = client({ scheme: 'maxauth', user: 'WILSON', password: DEMO_PASSWORD });
    const value = await wilson.apikeys.create(-1);
    assert.match(value, /^[0-9a-f]{48}$/);
    const keyed = client({ scheme: 'apikey', apikey: value });
    assert.equal((await keyed.whoami()).loginUserName, 'WILSON');
    const [record] = await admin.apikeys.list('WILSON');
    assert.equal(record?.userid, 'WILSON');
    assert.equal(record?.apikey, undefined, 'list does not read key values');
    assert.equal(await wilson.apikeys.revoke(), true);
    const refused = await keyed.whoami().catch((caught: unknown) => caught);
    assert.ok(refused instanceof EasClientError);
    assert.equal(refused.reasonCode, 'BMXAA9549E');
    assert.ok(!JSON.stringify(refused.request).includes(value));

    const created = await admin.apikeys.createFor('smith', 60);
    assert.equal(created.userid, 'SMITH');
    assert.equal(typeof created.apikey, 'string');
    const second = await admin.apikeys.createFor('SMITH').catch((caught: unknown) => caught);
    assert.ok(second instanceof EasClientError);
    assert.equal(second.reasonCode, 'BMXAA10051E');
    const [smith] = await admin.apikeys.list('SMITH');
    await admin.apikeys.delete(String(smith!.href));
    assert.deepEqual(await admin.apikeys.list('SMITH'), []);
    await wilson.logout();
  });

  test('child collections, single resources and lookups with setupdata', async () => {
    const [group] = await admin
      .query('mxapigroup', { where: 'groupname="MAXADMIN"', select: 'groupname' })
      .all();
    const users = await admin
      .children('mxapigroup', String(group!.href), 'groupuser', { select: 'userid' })
      .all();
    assert.ok(users.some((user) => user.userid === 'MAXADMIN'));
    const one = await admin.get('mxapigroup', String(group!.href), 'groupname');
    assert.equal(one.groupname, 'MAXADMIN');

    const locations = await admin
      .lookup('mxapiasset', 'location', {
        setupdata: { siteid: 'NASHUA' },
        select: 'location,siteid',
        pageSize: 20,
      })
      .all();
    assert.ok(locations.length > 0);
    assert.ok(locations.every((location) => location.siteid === 'NASHUA'));
  });

  test('properties: get, get several, set, describe', async () => {
    assert.equal(await admin.properties.get('mxe.oslc.maxpagesize'), '1000');
    const set = await admin.properties.set('mxe.oslc.maxpagesize', '900');
    assert.equal(set.propValue, '900');
    assert.deepEqual(await admin.properties.getMany(['mxe.oslc.maxpagesize', 'mxe.apikeyforloggedinuser']), {
      'mxe.oslc.maxpagesize': '900',
      'mxe.apikeyforloggedinuser': '0',
    });
    const description = await admin.properties.describe('mxe.oslc.maxpagesize');
    assert.equal(description.maxtype, 'INTEGER');
    await admin.properties.set('mxe.oslc.maxpagesize', '1000');
  });

  test('admin mode: on reaches state 1, off answers 0', async () => {
    assert.equal(await admin.adminMode.state(), 0);
    await admin.adminMode.on({ numsessions: 5, logoutmin: 0 });
    const deadline = Date.now() + 10_000;
    let state = await admin.adminMode.state();
    while (state !== 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = await admin.adminMode.state();
    }
    assert.equal(state, 1);
    await admin.adminMode.off();
    assert.equal(await admin.adminMode.state(), 0);
  });

  test('no answer is a connection error naming the request; shown addresses carry no credentials', async () => {
    const nowhere = new EasClient({
      baseUrl: 'http://127.0.0.1:1/maximo',
      credentials: { scheme: 'apikey', apikey: 'k'.repeat(48) },
    });
    const error = await nowhere.properties.get('mxe.oslc.maxpagesize').catch((caught: unknown) => caught);
    assert.ok(error instanceof EasClientError);
    assert.equal(error.kind, 'connection');
    assert.equal(error.status, 0);
    assert.equal(error.request.method, 'GET');
    assert.ok(error.request.url.startsWith('http://127.0.0.1:1/maximo/oslc/service/system?'));
    assert.equal(
      presentableUrl(new URL('http://u:p@host/maximo/oslc/os/x?apikey=secret&lean=1&_lpwd=pw')),
      'http://host/maximo/oslc/os/x?lean=1',
    );
  });

  test('a streamed answer (the backup, through node:http) refused or unanswered is an EasClientError', async () => {
    // This server's database is not an embedded one on disk: the backup is refused with the server's reason.
    const refused = await admin.backup.download().catch((caught: unknown) => caught);
    assert.ok(refused instanceof EasClientError);
    assert.equal(refused.kind, 'server');
    assert.equal(refused.reasonCode, 'EAS0210E');
    assert.ok(refused.status >= 400);
    assert.equal(refused.request.method, 'GET');
    assert.match(refused.request.url, /\/maximo\/oslc\/backup\?lean=1$/);
    const wilson = client({ scheme: 'maxauth', user: 'WILSON', password: DEMO_PASSWORD });
    const forbidden = await wilson.backup.download().catch((caught: unknown) => caught);
    assert.ok(forbidden instanceof EasClientError);
    assert.equal(forbidden.kind, 'server');
    assert.ok(forbidden.status >= 400 && forbidden.reasonCode !== undefined, String(forbidden.status));
    await wilson.logout();
    const nowhere = new EasClient({
      baseUrl: 'http://127.0.0.1:1/maximo',
      credentials: { scheme: 'apikey', apikey: 'k'.repeat(48) },
    });
    const unanswered = await nowhere.backup.download().catch((caught: unknown) => caught);
    assert.ok(unanswered instanceof EasClientError);
    assert.equal(unanswered.kind, 'connection');
    assert.equal(unanswered.status, 0);
  });
});
