import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';
import { encodeRestId } from './rest-id.js';

/**
 * Service requests (MXAPISR, docs/compatibility.md "Service requests") as a Postman collection and an MCP server
 * use them: create with the per-site `TICKETID` autokey, read with relationships, update, change status, list
 * value lists, delete; rights as granted to the demo groups.
 */

const admin = maxauth('MAXADMIN');
const SR = '/maximo/oslc/os/mxapisr';

describe('service requests (MXAPISR)', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
  });
  after(() => t.close());

  const request = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: Record<string, unknown>,
    headers: Record<string, string> = admin,
  ) => t.app.inject({ method, url, headers, ...(payload && { payload }) });

  async function create(
    body: Record<string, unknown>,
    headers = admin,
  ): Promise<{ location: string; row: Json }> {
    const created = await request('POST', `${SR}?lean=1`, body, { ...headers, properties: '*' });
    assert.equal(created.statusCode, 201, created.body);
    return { location: String(created.headers.location), row: json(created) };
  }

  const history = async (ticketid: string, siteid: string) =>
    (
      await db
        .selectFrom('tkstatus')
        .select(['status', 'memo'])
        .where('ticketid', '=', ticketid)
        .where('siteid', '=', siteid)
        .orderBy('tkstatusid')
        .execute()
    ).map((row) => [row.status, row.memo]);

  test('create, read with relationships, update and delete; ticketid numbered per site', async () => {
    const bedford = await create({
      siteid: 'BEDFORD',
      description: 'Air handler noisy',
      description_longdescription: 'Rattling since Monday.',
      reportedby: 'WILSON',
      affectedperson: 'SMITH',
      location: 'BR200-L1',
    });
    const nashua = await create({ siteid: 'NASHUA', description: 'Dock door stuck', reportedby: 'SMITH' });
    // The demo data holds requests 1000..1014 of each site; each site's own autokey row goes on from there.
    assert.equal(bedford.row.ticketid, '1015');
    assert.equal(nashua.row.ticketid, '1015');
    assert.equal(bedford.row.status, 'NEW');
    assert.equal(bedford.row.class, 'SR');
    assert.equal(bedford.row.orgid, 'EAGLENA');
    assert.ok(bedford.row.reportdate, 'reportdate filled on create');
    assert.deepEqual(await history('1015', 'BEDFORD'), [['NEW', null]]);

    const asset = await db
      .selectFrom('asset')
      .select(['assetnum', 'location', 'description'])
      .where('siteid', '=', 'BEDFORD')
      .where('status', '=', 'OPERATING')
      .orderBy('assetnum')
      .executeTakeFirstOrThrow();
    const patched = await request(
      'POST',
      `${bedford.location}?lean=1`,
      { assetnum: asset.assetnum, location: asset.location, description: 'Air handler noisy (asset found)' },
      { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
    );
    assert.equal(patched.statusCode, 204, patched.body);
    const read = await request(
      'GET',
      `${bedford.location}?lean=1&oslc.select=ticketid,description,description_longdescription,assetnum,asset.description,location.description,reportedbyperson.displayname,affectedpersonrec.displayname`,
    );
    assert.equal(read.statusCode, 200, read.body);
    const member = json(read);
    assert.equal(member.description, 'Air handler noisy (asset found)');
    assert.equal(member.description_longdescription, 'Rattling since Monday.');
    assert.equal(member.assetnum, asset.assetnum);
    assert.deepEqual(member.asset, { description: asset.description });
    assert.deepEqual(member.reportedbyperson, { displayname: 'Mike Wilson' });
    assert.deepEqual(member.affectedpersonrec, { displayname: 'John Smith' });

    const listed = json(
      await request(
        'GET',
        `${SR}?lean=1&oslc.select=ticketid&oslc.where=${encodeURIComponent('siteid="NASHUA" and ticketid="1015"')}`,
      ),
    );
    assert.equal(listed.member?.length, 1);

    const deleted = await request('DELETE', nashua.location);
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal((await request('GET', `${nashua.location}?lean=1`)).statusCode, 404);
    assert.deepEqual(await history('1015', 'NASHUA'), [], 'the history goes with the request');
  });

  test('a request without a site: 201, read, updated, a work log, a status change and deleted through its href', async () => {
    // The Postman collection's shape: no siteid. The request is numbered by the system TICKETID row.
    const created = await request(
      'POST',
      `${SR}?lean=1`,
      { description: 'Printer jammed', reportedby: 'WILSON' },
      {
        ...admin,
        properties: 'ticketid,siteid,orgid,status,href',
      },
    );
    assert.equal(created.statusCode, 201, created.body);
    const body = json(created);
    const ticketid = String(body.ticketid);
    assert.match(ticketid, /^\d+$/);
    assert.equal(body.siteid, undefined, 'no site, dropped as a null');
    assert.equal(body.orgid, undefined);
    assert.equal(body.status, 'NEW');
    const location = String(created.headers.location);
    assert.equal(location.split('/').pop(), encodeRestId([ticketid, null]));
    assert.equal(body.href, location);
    const second = await create({ description: 'Second printer' });
    assert.notEqual(second.row.ticketid, ticketid, 'each request without a site has its own ticketid');
    assert.deepEqual(
      await db
        .selectFrom('ticket')
        .select(['siteid', 'orgid'])
        .where('ticketid', '=', ticketid)
        .where('siteid', 'is', null)
        .execute(),
      [{ siteid: null, orgid: null }],
    );

    const read = await request(
      'GET',
      `${location}?lean=1&oslc.select=ticketid,siteid,description,reportedbyperson.displayname`,
    );
    assert.equal(read.statusCode, 200, read.body);
    const member = json(read);
    assert.deepEqual(
      {
        ticketid: member.ticketid,
        siteid: member.siteid,
        description: member.description,
        person: member.reportedbyperson,
      },
      { ticketid, siteid: undefined, description: 'Printer jammed', person: { displayname: 'Mike Wilson' } },
    );
    assert.equal(member.href, location);

    const patched = await request(
      'POST',
      `${location}?lean=1`,
      {
        description: 'Printer jammed (tray 2)',
        worklog: [{ description: 'Called the user', logtype: 'WORK' }],
      },
      { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
    );
    assert.equal(patched.statusCode, 204, patched.body);
    const logged = await request('POST', `${location}/worklog?lean=1`, { description: 'Tray replaced' });
    assert.equal(logged.statusCode, 201, logged.body);
    const changed = await request(
      'POST',
      `${location}?lean=1&action=wsmethod:changeStatus`,
      { status: 'RESOLVED', memo: 'fixed' },
      { ...admin, 'x-method-override': 'PATCH' },
    );
    assert.equal(changed.statusCode, 204, changed.body);

    const withLogs = json(
      await request(
        'GET',
        `${location}?lean=1&oslc.select=description,status,worklog{description,logtype,siteid}`,
      ),
    );
    assert.equal(withLogs.description, 'Printer jammed (tray 2)');
    assert.equal(withLogs.status, 'RESOLVED');
    assert.deepEqual(
      (withLogs.worklog as Json[]).map(({ description, logtype, siteid }) => ({
        description,
        logtype,
        siteid,
      })),
      [
        { description: 'Called the user', logtype: 'WORK', siteid: undefined },
        { description: 'Tray replaced', logtype: 'CLIENTNOTE', siteid: undefined },
      ],
    );
    const child = json(await request('GET', `${location}/worklog?lean=1&oslc.select=description`));
    assert.deepEqual(
      (child.member as Json[]).map(({ description }) => description),
      ['Called the user', 'Tray replaced'],
    );
    // A request of a site with the same number (the demo's, else made so) is another request, its logs apart.
    const taken = await db
      .selectFrom('ticket')
      .select('ticketid')
      .where('ticketid', '=', ticketid)
      .where('siteid', '=', 'BEDFORD')
      .executeTakeFirst();
    if (!taken) await create({ siteid: 'BEDFORD', ticketid, description: 'Same number' });
    const sitedHref = `${SR}/${encodeRestId([ticketid, 'BEDFORD'])}`;
    const sited = json(await request('GET', `${sitedHref}?lean=1&oslc.select=siteid,worklog{description}`));
    assert.equal(sited.siteid, 'BEDFORD');
    assert.deepEqual(sited.worklog ?? [], []);
    const tkstatus = await db
      .selectFrom('tkstatus')
      .select(['status', 'siteid'])
      .where('ticketid', '=', ticketid)
      .where('siteid', 'is', null)
      .orderBy('tkstatusid')
      .execute();
    assert.deepEqual(tkstatus, [
      { status: 'NEW', siteid: null },
      { status: 'RESOLVED', siteid: null },
    ]);

    const deleted = await request('DELETE', location);
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal((await request('GET', `${location}?lean=1`)).statusCode, 404);
    const left = async (table: 'worklog' | 'tkstatus', column: 'recordkey' | 'ticketid') =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .where(column, '=', ticketid)
            .where('siteid', 'is', null)
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await left('worklog', 'recordkey'), 0, 'the work logs go with the request');
    assert.equal(await left('tkstatus', 'ticketid'), 0, 'the history goes with the request');
    assert.equal((await request('GET', `${second.location}?lean=1`)).statusCode, 200, 'the other one stays');
  });

  test('a person or asset that does not exist is refused, nothing written', async () => {
    for (const body of [
      { siteid: 'BEDFORD', description: 'x', reportedby: 'NOBODY' },
      { siteid: 'BEDFORD', description: 'x', affectedperson: 'NOBODY' },
      { siteid: 'NASHUA', description: 'x', assetnum: 'NOSUCHASSET' },
    ]) {
      const refused = await request('POST', `${SR}?lean=1`, body);
      assert.equal(refused.statusCode, 400, refused.body);
    }
    const count = await db
      .selectFrom('ticket')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('description', '=', 'x')
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  test('wsmethod:changeStatus: NEW → QUEUED → INPROG → RESOLVED → CLOSED with history; CLOSED stays closed', async () => {
    const { location, row } = await create({ siteid: 'BEDFORD', description: 'Status walk' });
    const ticketid = String(row.ticketid);
    const change = (body: Record<string, unknown>) =>
      request('POST', `${location}?lean=1&action=wsmethod:changeStatus`, body, {
        ...admin,
        'x-method-override': 'PATCH',
      });
    for (const status of ['QUEUED', 'INPROG', 'RESOLVED', 'CLOSED']) {
      const answer = await change({ status, memo: `to ${status}` });
      assert.equal(answer.statusCode, 204, answer.body);
    }
    assert.deepEqual(await history(ticketid, 'BEDFORD'), [
      ['NEW', null],
      ['QUEUED', 'to QUEUED'],
      ['INPROG', 'to INPROG'],
      ['RESOLVED', 'to RESOLVED'],
      ['CLOSED', 'to CLOSED'],
    ]);
    const refused = await change({ status: 'INPROG' });
    assert.equal(refused.statusCode, 400, refused.body);
    const unknown = await change({ status: 'WAPPR' });
    assert.equal(unknown.statusCode, 400, unknown.body);
    const stored = await db
      .selectFrom('ticket')
      .select('status')
      .where('ticketid', '=', ticketid)
      .where('siteid', '=', 'BEDFORD')
      .executeTakeFirstOrThrow();
    assert.equal(stored.status, 'CLOSED');
  });

  test('lookups: the statuses a request may move to, the assets of its site, active people', async () => {
    const { location } = await create({ siteid: 'NASHUA', description: 'Lookups' });
    const values = async (url: string, attribute: string): Promise<string[]> => {
      const response = await request('GET', url);
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
      return (json(response).member ?? []).map((member) => String(member[attribute])).sort();
    };
    assert.deepEqual(await values(`${location}/getlist~status?lean=1&oslc.select=value`, 'value'), [
      'CLOSED',
      'INPROG',
      'QUEUED',
      'RESOLVED',
    ]);
    // A new request starts NEW: it lists where NEW may go.
    assert.deepEqual(await values(`${SR}/newmbo/getlist~status?lean=1&oslc.select=value`, 'value'), [
      'CLOSED',
      'INPROG',
      'QUEUED',
      'RESOLVED',
    ]);
    const nashuaAssets = (
      await db.selectFrom('asset').select('assetnum').where('siteid', '=', 'NASHUA').execute()
    )
      .map((asset) => String(asset.assetnum))
      .sort();
    assert.deepEqual(
      await values(`${location}/getlist~assetnum?lean=1&oslc.select=assetnum&oslc.pageSize=1000`, 'assetnum'),
      nashuaAssets,
    );
    const people = await values(`${location}/getlist~reportedby?lean=1&oslc.select=personid`, 'personid');
    assert.ok(
      ['MAXADMIN', 'SMITH', 'WILSON'].every((person) => people.includes(person)),
      people.join(),
    );
  });

  test('rights: the maintenance group writes requests, the viewers only read them', async () => {
    const wilson = await create({ siteid: 'BEDFORD', description: 'From a technician' }, maxauth('WILSON'));
    assert.ok(wilson.row.ticketid);
    const viewer = maxauth('SMITH');
    const read = await request('GET', `${SR}?lean=1&oslc.select=ticketid&oslc.pageSize=5`, undefined, viewer);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(json(read).member?.length, 5);
    const refused = await request(
      'POST',
      `${SR}?lean=1`,
      { siteid: 'BEDFORD', description: 'viewer' },
      viewer,
    );
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(json(refused).Error?.reasonCode, 'BMXAA9301E');
  });
});

describe('service requests in a migration package', () => {
  let source: TestApp;
  let target: TestApp;

  before(async () => {
    [source, target] = await Promise.all([startTestApp(), startTestApp()]);
  });
  after(async () => {
    await Promise.all([source?.close(), target?.close()]);
  });

  const post = (app: TestApp, url: string, body: unknown, headers: Record<string, string> = admin) =>
    app.app.inject({
      method: 'POST',
      url: `/maximo/oslc${url}`,
      headers,
      payload: body as Record<string, unknown>,
    });

  async function requestsOf(app: TestApp): Promise<Json[]> {
    const select =
      'ticketid,siteid,description,description_longdescription,status,reportedby,affectedperson,assetnum,location';
    const response = await app.app.inject({
      method: 'GET',
      url: `${SR}?lean=1&oslc.select=${select}&oslc.orderBy=%2Bticketid&oslc.pageSize=1000&oslc.where=${encodeURIComponent('siteid="NASHUA"')}`,
      headers: admin,
    });
    assert.equal(response.statusCode, 200, response.body);
    return (json(response).member ?? []).map(({ href: _href, _rowstamp: _stamp, ...rest }) => rest);
  }

  test('a SNAPSHOT of MXAPISR created on the source deploys the same requests on the target', async () => {
    const created = await post(source, '/os/mxapisr?lean=1', {
      ticketid: 'MIG1',
      siteid: 'NASHUA',
      description: 'Moved by a package',
      description_longdescription: 'With its long description.',
      reportedby: 'WILSON',
      affectedperson: 'SMITH',
    });
    assert.equal(created.statusCode, 201, created.body);
    const changed = await post(
      source,
      `/os/mxapisr/${String(created.headers.location).split('/').pop()}?lean=1&action=wsmethod:changeStatus`,
      { status: 'INPROG' },
      { ...admin, 'x-method-override': 'PATCH' },
    );
    assert.equal(changed.statusCode, 204, changed.body);
    assert.notDeepEqual(await requestsOf(target), await requestsOf(source));

    const defined = await post(source, '/os/mxapidmpkgdef', {
      pkgdefname: 'SRSNAP',
      type: 'SNAPSHOT',
      status: 'APPR',
      dmpkgdefcontent: [{ objectstructure: 'MXAPISR', whereclause: 'siteid="NASHUA"', cfgdataorder: 1 }],
      dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
    });
    assert.equal(defined.statusCode, 201, defined.body);
    const packaged = await post(source, '/dm/create', { pkgdefname: 'SRSNAP' });
    assert.equal(packaged.statusCode, 200, packaged.body);
    const dmpackageid = json(packaged).dmpackageid;
    const distributed = await post(source, '/dm/distribute', { pkgdefname: 'SRSNAP', dmpackageid });
    assert.equal(distributed.statusCode, 200, distributed.body);
    const download = await source.app.inject({
      method: 'GET',
      url: `/maximo/oslc/dm/download?dmpackagedef=SRSNAP&dmpackageid=${String(dmpackageid)}`,
      headers: admin,
    });
    assert.equal(download.statusCode, 200, download.body);

    const uploaded = await target.app.inject({
      method: 'POST',
      url: '/maximo/oslc/dm/upload?filename=srsnap.zip',
      headers: { ...admin, 'content-type': 'application/zip' },
      payload: download.rawPayload,
    });
    assert.equal(uploaded.statusCode, 200, uploaded.body);
    const deployed = await post(target, '/dm/deploy', {
      pkgdefname: 'SRSNAP',
      dmpackageid: json(uploaded).dmpackageid,
    });
    assert.equal(deployed.statusCode, 200, deployed.body);
    const moved = await requestsOf(target);
    assert.deepEqual(moved, await requestsOf(source));
    assert.equal(moved.find((member) => member.ticketid === 'MIG1')?.status, 'INPROG');
  });
});
