import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { countStatements, settleBackgroundWrites } from '../../test/helpers/statements.js';
import { dynamicView } from '../db/schema.js';
import { encodeRestId } from './rest-id.js';
import { SiteCache } from './site-cache.js';

/**
 * The write path's few round trips (src/oslc/README.md, "Round trips of a write"): sites validated from a cache
 * that follows every process's writes, a create that checks its key and writes its status history in one
 * statement, and observers that take part only in the writes they name, inside the transaction.
 */

const admin = maxauth('MAXADMIN');
const jsonHeaders = { ...admin, 'content-type': 'application/json' };

describe('write path', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });

  after(() => t.close());

  const create = (structure: string, payload: Record<string, unknown>) =>
    t.app.inject({
      method: 'POST',
      url: `/maximo/oslc/os/${structure}?lean=1`,
      headers: jsonHeaders,
      payload,
    });

  const createAsset = (assetnum: string, siteid: string) =>
    create('mxapiasset', { assetnum, siteid, description: 'write path' });

  const historyOf = async (assetnum: string) =>
    (
      await sql<{
        status: string;
        changeby: string;
        changedate: Date;
        orgid: string;
        memo: string | null;
      }>`select status, changeby, changedate, orgid, memo from assetstatus where assetnum = ${assetnum}`.execute(
        t.storage.db,
      )
    ).rows;

  test('a create answers its Location and ETag, and records its status once; a duplicate writes nothing', async () => {
    const created = await createAsset('WP-1', 'BEDFORD');
    assert.equal(created.statusCode, 201, created.body);
    assert.match(
      String(created.headers.location),
      new RegExp(`/mxapiasset/${encodeRestId(['WP-1', 'BEDFORD'])}$`),
    );
    const read = await t.app.inject({
      method: 'GET',
      url: `${String(created.headers.location)}?lean=1`,
      headers: admin,
    });
    assert.equal(read.statusCode, 200);
    const asset = json(read);
    assert.equal(created.headers.etag, `"${String(asset._rowstamp)}"`);
    assert.equal(asset.orgid, 'EAGLENA');
    const history = await historyOf('WP-1');
    assert.equal(history.length, 1);
    assert.equal(history[0]!.status, asset.status);
    assert.equal(history[0]!.changeby, 'MAXADMIN');
    assert.equal(history[0]!.orgid, 'EAGLENA');
    assert.equal(history[0]!.memo, null);
    const stored = await sql<{
      statusdate: Date;
    }>`select statusdate from asset where assetnum = 'WP-1'`.execute(t.storage.db);
    assert.equal(history[0]!.changedate.getTime(), stored.rows[0]!.statusdate.getTime());

    const again = await createAsset('WP-1', 'BEDFORD');
    assert.equal(again.statusCode, 400);
    assert.equal(json(again).Error?.reasonCode, 'BMXAA4129E');
    assert.equal((await historyOf('WP-1')).length, 1);
  });

  test('a create of an asset is one statement: key check, row, status history and stamps together', async () => {
    // The first create fills what is kept in memory (credentials, rights, sites, the statement's compiled SQL).
    assert.equal((await createAsset('WP-COUNT-1', 'BEDFORD')).statusCode, 201);
    // The login's bookkeeping and the audit seal are written shortly after; written now, they are not counted below.
    await settleBackgroundWrites(t.services);
    const { result, statements } = await countStatements(() => createAsset('WP-COUNT-2', 'BEDFORD'));
    assert.equal(result.statusCode, 201, result.body);
    assert.equal(statements.length, 1, statements.join('\n'));
    assert.equal((await historyOf('WP-COUNT-2')).length, 1);
    const withChild = await countStatements(() =>
      create('mxapiasset', {
        assetnum: 'WP-COUNT-3',
        siteid: 'BEDFORD',
        assetspec: [{ assetattrid: 'A' }],
      } as never),
    );
    assert.equal(withChild.result.statusCode, 201, withChild.result.body);
    assert.deepEqual(
      [withChild.statements[0], withChild.statements.at(-1)],
      ['begin', 'commit'],
      'a create with child entries is one transaction',
    );
  });

  test('on PostgreSQL the create is a prepared statement, and a column added to its table leaves it working', async (context) => {
    if (t.storage.kind !== 'postgres') {
      context.skip('PGlite prepares nothing (src/db/prepared-statements.ts)');
      return;
    }
    const sent: unknown[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      sent.push(args[0]);
      return (query as (...parameters: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      assert.equal((await createAsset('WP-PREP-0', 'BEDFORD')).statusCode, 201);
    } finally {
      pg.Client.prototype.query = query;
    }
    const insert = sent.find(
      (config): config is { name: string; text: string } =>
        typeof config === 'object' &&
        config !== null &&
        /insert into "asset"/.test(String((config as { text?: unknown }).text)),
    );
    assert.match(insert?.name ?? '', /^eas_\d+$/, 'the insert is sent under a name');
    // Every connection of the pool prepares it; then the table gains a column, as applying configuration does.
    const burst = async (prefix: string) =>
      (
        await Promise.all(
          Array.from({ length: 12 }, (_, index) => createAsset(`${prefix}-${index}`, 'BEDFORD')),
        )
      ).map((created) => `${created.statusCode} ${created.statusCode === 201 ? '' : created.body}`);
    assert.deepEqual(await burst('WP-PREP-A'), Array(12).fill('201 '));
    await sql`alter table asset add column wpprobe varchar(8)`.execute(t.storage.db);
    try {
      assert.deepEqual(await burst('WP-PREP-B'), Array(12).fill('201 '));
      const created = await createAsset('WP-PREP-C', 'BEDFORD');
      assert.match(
        String(created.headers.location),
        new RegExp(`/mxapiasset/${encodeRestId(['WP-PREP-C', 'BEDFORD'])}$`),
      );
      assert.equal((await historyOf('WP-PREP-C')).length, 1);
    } finally {
      await sql`alter table asset drop column wpprobe`.execute(t.storage.db);
    }
  });

  test('a site created or deleted through the write path is what the next create validates against', async () => {
    const site = await create('mxapisite', { siteid: 'WPSITE', orgid: 'EAGLENA', description: 'Kept' });
    assert.equal(site.statusCode, 201, site.body);
    const unused = await create('mxapisite', { siteid: 'WPGONE', orgid: 'EAGLENA', description: 'Deleted' });
    assert.equal(unused.statusCode, 201, unused.body);
    // Before the delete, this process has validated against (and so cached) both sites.
    assert.equal((await createAsset('WP-2', 'WPSITE')).statusCode, 201);
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: String(unused.headers.location),
      headers: admin,
    });
    assert.equal(deleted.statusCode, 204, deleted.body);

    const atDeleted = await createAsset('WP-3', 'WPGONE');
    assert.equal(atDeleted.statusCode, 400);
    assert.equal(json(atDeleted).Error?.reasonCode, 'BMXAA4153E');
    const atNew = await t.app.inject({
      method: 'GET',
      url: `/maximo/oslc/os/mxapiasset/${encodeRestId(['WP-2', 'WPSITE'])}?lean=1`,
      headers: admin,
    });
    assert.equal(json(atNew).orgid, 'EAGLENA');
  });

  test('the site cache holds what it read until a process notifies a write of sites', async () => {
    const db = dynamicView(t.storage.db);
    const cache = new SiteCache(db);
    assert.equal(await cache.snapshot(), undefined, 'nothing is held before the cache listens');
    await cache.listen(t.storage.bus);
    assert.equal((await cache.snapshot())?.get('BEDFORD'), 'EAGLENA');
    await sql`insert into site (siteid, orgid, description) values ('WPRAW', 'EAGLENA', 'Written by SQL')`.execute(
      db,
    );
    assert.equal((await cache.snapshot())?.has('WPRAW'), false, 'a write nobody notified is not seen');
    // What another process's write path sends when it commits.
    await t.storage.bus.notify(db, 'object', 'SITE');
    const deadline = Date.now() + 5000;
    while (!(await cache.snapshot())?.has('WPRAW')) {
      assert.ok(Date.now() < deadline, 'the notification never reached the cache');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  test('writes of objects a process caches are notified on the change bus, writes of others are not', async () => {
    const heard: string[] = [];
    await t.storage.bus.listen('object', (objectName) => heard.push(objectName));
    assert.equal((await createAsset('WP-QUIET', 'BEDFORD')).statusCode, 201);
    const domain = await create('mxapidomain', {
      domainid: 'WPDOM',
      domaintype: 'ALN',
      description: 'Heard',
    });
    assert.equal(domain.statusCode, 201, domain.body);
    // Other processes hear it when it commits; this one at once, and through its listener again.
    const deadline = Date.now() + 5000;
    while (heard.filter((objectName) => objectName === 'MAXDOMAIN').length < 2) {
      assert.ok(Date.now() < deadline, `the domain's notification never arrived: ${heard.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(
      heard.filter((objectName) => objectName === 'ASSET' || objectName === 'ASSETSTATUS'),
      [],
    );
  });

  test('an observer taking part in a create runs in its transaction; one that does not is not run', async () => {
    const seen: string[] = [];
    t.services.resources.addWriteObserver(
      async () => {
        seen.push('never');
        throw new Error('not for assets');
      },
      (object) => object.name === 'MAXGROUP',
    );
    t.services.resources.addWriteObserver(
      async (transaction, write) => {
        seen.push(String(write.after?.assetnum));
        await sql`update asset set description = 'observed' where assetnum = ${write.after?.assetnum ?? ''}`.execute(
          transaction,
        );
        if (write.after?.assetnum === 'WP-REFUSED') throw new Error('refused by the observer');
      },
      (object, operation) => object.name === 'ASSET' && operation === 'insert',
    );
    assert.equal((await createAsset('WP-OBSERVED', 'BEDFORD')).statusCode, 201);
    assert.equal((await createAsset('WP-REFUSED', 'BEDFORD')).statusCode, 500);
    assert.deepEqual(seen, ['WP-OBSERVED', 'WP-REFUSED']);
    const rows = await sql<{ assetnum: string; description: string }>`select assetnum, description from asset
      where assetnum in ('WP-OBSERVED', 'WP-REFUSED')`.execute(t.storage.db);
    assert.deepEqual(rows.rows, [{ assetnum: 'WP-OBSERVED', description: 'observed' }]);
    assert.equal((await historyOf('WP-REFUSED')).length, 0);
  });
});
