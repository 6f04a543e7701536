import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';
import { baseObjects } from '../metadata/objects/index.js';
import { MetadataRegistry } from '../metadata/registry.js';
import { parseWhere, planFilter } from '../oslc/query/index.js';
import { encodeRestId } from '../oslc/rest-id.js';
import { lookupOf } from './service.js';

/**
 * `getlist~<attr>` (docs/lookups.md): every path shape, every declared lookup, setupdata, errors,
 * ETag revalidation, and agreement with the equivalent collection query. Expected members come from the fixture
 * data (the system domains of migration 0002 and the demo rows read from the database), never from the service.
 */

const ROOT = '/maximo/oslc/os';
const admin = maxauth('MAXADMIN');

/** LOCASSETSTATUS of migration 0002: value → internal value. */
const LOCASSETSTATUS: Record<string, string> = {
  'NOT READY': 'NOT READY',
  OPERATING: 'OPERATING',
  DECOMMISSIONED: 'DECOMMISSIONED',
  ACTIVE: 'OPERATING',
  BROKEN: 'NOT READY',
  INSTALLING: 'NOT READY',
  SCRAPPED: 'DECOMMISSIONED',
};
const LOCTYPE = ['COURIER', 'HOLDING', 'LABOR', 'OPERATING', 'REPAIR', 'SALVAGE', 'STOREROOM', 'VENDOR'];
const WOSTATUS = ['APPR', 'CAN', 'CLOSE', 'COMP', 'INPRG', 'WAPPR', 'WMATL', 'WPCOND', 'WSCH'];
const ITEMSTATUS = ['ACTIVE', 'OBSOLETE', 'PENDING', 'PENDOBS', 'PLANNING'];
const ASSETTYPE = ['FACILITIES', 'FLEET', 'IT', 'PRODUCTION', 'TRANSPORTATION'];
const WORKTYPE = ['CM', 'CP', 'EM', 'EV', 'PM'];
const COMMODITYGROUP = ['4100', '4200', '4300', '4400', '4500'];

/** The ACTIVE value of LOCASSETSTATUS as a deployed system addresses it (docs/lookups.md). */
const ACTIVE_STATUS_ID = '_TE9DQVNTRVRTVEFUVVMvT1BFUkFUSU5HL35OVUxMfi9_TlVMTH4vQUNUSVZF';

/** Tables a lookup's record or list comes from; none may change while lookups run. */
const WATCHED_TABLES = [
  'organization',
  'site',
  'person',
  'maxgroup',
  'groupuser',
  'maxdomain',
  'alndomain',
  'numericdomain',
  'synonymdomain',
  'locations',
  'item',
  'asset',
  'workorder',
];

interface AssetFacts {
  assetnum: string;
  siteid: string;
  assetuid: number;
  status: string;
}

describe('declared lookups', () => {
  const metadata = new MetadataRegistry();

  test('the lookups of the issue are declared (or come from the domain)', () => {
    const wanted: ReadonlyArray<readonly [string, string]> = [
      ['ASSET', 'status'],
      ['ASSET', 'assettype'],
      ['ASSET', 'location'],
      ['ASSET', 'parent'],
      ['ASSET', 'siteid'],
      ['LOCATIONS', 'status'],
      ['LOCATIONS', 'type'],
      ['LOCATIONS', 'parent'],
      ['WORKORDER', 'status'],
      ['WORKORDER', 'worktype'],
      ['WORKORDER', 'assetnum'],
      ['WORKORDER', 'location'],
      ['ITEM', 'status'],
      ['ITEM', 'commoditygroup'],
      ['GROUPUSER', 'userid'],
    ];
    for (const [objectName, name] of wanted) {
      const attribute = metadata.object(objectName).attributes.get(name);
      assert.ok(attribute && lookupOf(attribute), `${objectName}.${name}`);
    }
  });

  test('every table lookup names a structure, attributes and 1:1 relations that exist', () => {
    for (const object of baseObjects) {
      for (const attribute of object.attributes) {
        const lookup = attribute.lookup;
        if (lookup?.kind !== 'table') continue;
        const where = `${object.name}.${attribute.name}`;
        const listed = metadata.findObjectStructure(lookup.structure)?.root.object;
        assert.ok(listed, `${where}: structure ${lookup.structure}`);
        if (lookup.where !== undefined) planFilter(metadata, listed, parseWhere(lookup.where), false);
        for (const [target, source] of [...(lookup.match ?? []), ...(lookup.differ ?? [])]) {
          assert.ok(listed.attributes.has(target), `${where}: ${lookup.structure} has ${target}`);
          let current = metadata.object(object.name);
          const segments = source.split('.');
          for (const segment of segments.slice(0, -1)) {
            const relation = current.relations.get(segment);
            assert.ok(
              relation && !relation.many,
              `${where}: ${segment} is a 1:1 relation of ${current.name}`,
            );
            current = metadata.object(relation.object);
          }
          assert.ok(current.attributes.has(segments[segments.length - 1]!), `${where}: ${source}`);
        }
      }
    }
  });
});

describe('lookups (getlist~)', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;
  let operating: AssetFacts;
  let decommissioned: AssetFacts;
  let otherSite: string;

  const get = (url: string, headers: Record<string, string> = admin): Promise<LightMyRequestResponse> =>
    t.app.inject({ url, headers });

  /** Members of a lookup or collection answer (status 200 asserted). */
  async function members(url: string, headers: Record<string, string> = admin): Promise<Json[]> {
    const response = await get(url, headers);
    assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
    return (json(response).member ?? []) as Json[];
  }

  async function values(url: string, attribute: string): Promise<string[]> {
    return (await members(url)).map((member) => String(member[attribute])).sort();
  }

  async function column(query: Promise<Array<Record<string, unknown>>>, name: string): Promise<string[]> {
    return (await query).map((row) => String(row[name])).sort();
  }

  const locationsOf = (siteid: string): Promise<string[]> =>
    column(db.selectFrom('locations').select('location').where('siteid', '=', siteid).execute(), 'location');

  const setup = (values: Record<string, unknown>): string =>
    `setupdata=${encodeURIComponent(JSON.stringify(values))}`;

  async function errorOf(url: string, headers: Record<string, string> = admin): Promise<[number, string]> {
    const response = await get(url, headers);
    assert.equal(response.headers['content-type'], 'application/json');
    return [response.statusCode, String(json(response).Error?.reasonCode)];
  }

  async function assetWithStatus(status: string): Promise<AssetFacts> {
    const row = await db
      .selectFrom('asset')
      .select(['assetnum', 'siteid', 'assetuid', 'status'])
      .where('status', '=', status)
      .orderBy('assetuid')
      .executeTakeFirstOrThrow();
    return {
      assetnum: String(row.assetnum),
      siteid: String(row.siteid),
      assetuid: Number(row.assetuid),
      status: String(row.status),
    };
  }

  const assetUrl = (asset: AssetFacts): string =>
    `${ROOT}/mxapiasset/${encodeRestId([asset.assetnum, asset.siteid])}`;

  before(async () => {
    t = await startTestApp({ EAS_LOG_LEVEL: 'error' });
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
    operating = await assetWithStatus('OPERATING');
    decommissioned = await assetWithStatus('DECOMMISSIONED');
    const sites = await column(db.selectFrom('site').select('siteid').execute(), 'siteid');
    otherSite = sites.find((siteid) => siteid !== operating.siteid)!;
    assert.ok(otherSite, 'the demo data has two sites');
  });
  after(() => t.close());

  describe('path shapes', () => {
    test('an existing record by rest id and by numeric id: locations of its site', async () => {
      const expected = await locationsOf(operating.siteid);
      assert.ok(expected.length > 0);
      assert.deepEqual(
        await values(`${assetUrl(operating)}/getlist~location?lean=1&oslc.select=location`, 'location'),
        expected,
      );
      assert.deepEqual(
        await values(
          `${ROOT}/mxapiasset/${operating.assetuid}/getlist~location?lean=1&oslc.select=location`,
          'location',
        ),
        expected,
      );
    });

    test('zombie: no record, every value of the domain', async () => {
      const list = await members(
        `${ROOT}/mxapiasset/zombie/getlist~status?lean=1&oslc.select=value,maxvalue`,
      );
      assert.deepEqual(list.map((member) => String(member.value)).sort(), Object.keys(LOCASSETSTATUS).sort());
      for (const member of list) assert.equal(member.maxvalue, LOCASSETSTATUS[String(member.value)]);
    });

    test('newmbo: a new record with its defaults (status NOT READY) lists the moves from NOT READY', async () => {
      const list = await values(`${ROOT}/mxapiasset/newmbo/getlist~status?lean=1&oslc.select=value`, 'value');
      assert.deepEqual(list, ['ACTIVE', 'BROKEN', 'DECOMMISSIONED', 'INSTALLING', 'OPERATING', 'SCRAPPED']);
    });

    test('a child record: by unique id, by localref tail, by rest id, and new or zombie children', async () => {
      const member = await db
        .selectFrom('groupuser')
        .select(['groupuserid', 'groupname', 'userid'])
        .where('groupname', '=', 'MAINT')
        .executeTakeFirstOrThrow();
      const expected = await column(db.selectFrom('maxuser').select('personid').execute(), 'personid');
      const group = `${ROOT}/mxapigroup/${encodeRestId(['MAINT'])}/groupuser`;
      const childIds = [
        String(member.groupuserid),
        `0-${String(member.groupuserid)}`,
        encodeRestId(['MAINT', String(member.userid)]),
        'newmbo',
        'zombie',
      ];
      for (const childId of childIds) {
        assert.deepEqual(
          await values(`${group}/${childId}/getlist~userid?lean=1&oslc.select=personid`, 'personid'),
          expected,
          childId,
        );
      }
      assert.deepEqual(
        await values(
          `${ROOT}/mxapigroup/zombie/groupuser/zombie/getlist~userid?lean=1&oslc.select=personid`,
          'personid',
        ),
        expected,
      );
    });

    test('/api serves the same lookups with hrefs on /api; the collection href is the target structure', async () => {
      const response = await get(`/maximo/api/os/mxapiasset/zombie/getlist~assettype?oslc.select=value`);
      assert.equal(response.statusCode, 200, response.body);
      const body = json(response);
      assert.match(String(body.href), /\/maximo\/api\/os\/mxapialndomain$/);
      assert.match(
        String(body.responseInfo?.href),
        /\/maximo\/api\/os\/mxapiasset\/zombie\/getlist~assettype\?oslc\.select=value$/,
      );
      for (const member of body.member ?? [])
        assert.match(String(member.href), /\/maximo\/api\/os\/mxapialndomain\/_/);
    });
  });

  describe('domain lookups', () => {
    test('synonym values are MXAPISYNONYMDOMAIN members shaped as in docs/lookups.md, hrefs dereferenceable', async () => {
      const list = await members(
        `${ROOT}/mxapiasset/zombie/getlist~status?lean=1&oslc.select=*&relativeuri=1`,
      );
      const active = list.find((member) => member.value === 'ACTIVE');
      assert.ok(active);
      assert.equal(active.href, `oslc/os/mxapisynonymdomain/${ACTIVE_STATUS_ID}`);
      assert.equal(active.maxvalue, 'OPERATING');
      assert.equal(active.description, 'Active');
      assert.equal(active.domainid, 'LOCASSETSTATUS');
      assert.equal(active.valueid, 'LOCASSETSTATUS|ACTIVE');
      assert.equal(active.defaults, false);
      assert.equal(typeof active._rowstamp, 'string');
      const resource = json(await get(`/maximo/${String(active.href)}?lean=1`));
      assert.equal(resource.value, 'ACTIVE');
      assert.equal(resource.maxvalue, 'OPERATING');
    });

    test('asset status lists the transitions from the current status, never the current value', async () => {
      assert.deepEqual(
        await values(`${assetUrl(operating)}/getlist~status?lean=1&oslc.select=value`, 'value'),
        ['ACTIVE', 'BROKEN', 'DECOMMISSIONED', 'INSTALLING', 'NOT READY', 'SCRAPPED'],
      );
      // A decommissioned asset stays decommissioned: nothing to move to.
      assert.deepEqual(
        await values(`${assetUrl(decommissioned)}/getlist~status?lean=1&oslc.select=value`, 'value'),
        [],
      );
      // setupdata changes the current status the transitions start from.
      assert.deepEqual(
        await values(
          `${assetUrl(operating)}/getlist~status?lean=1&oslc.select=value&${setup({ status: 'broken' })}`,
          'value',
        ),
        ['ACTIVE', 'DECOMMISSIONED', 'INSTALLING', 'NOT READY', 'OPERATING', 'SCRAPPED'],
      );
    });

    test('ALN values (asset type, work type, commodity group) are MXAPIALNDOMAIN members', async () => {
      const assetTypes = await members(
        `${assetUrl(operating)}/getlist~assettype?lean=1&oslc.select=value,description,valueid`,
      );
      assert.deepEqual(assetTypes.map((member) => String(member.value)).sort(), ASSETTYPE);
      const it = assetTypes.find((member) => member.value === 'IT');
      assert.equal(it?.description, 'Information Technology');
      assert.equal(it?.valueid, 'ASSETTYPE|IT');
      assert.match(String(it?.href), /\/oslc\/os\/mxapialndomain\/_/);
      const wo = await db
        .selectFrom('workorder')
        .select(['wonum', 'siteid'])
        .orderBy('workorderid')
        .executeTakeFirstOrThrow();
      const woUrl = `${ROOT}/mxapiwodetail/${encodeRestId([String(wo.wonum), String(wo.siteid)])}`;
      assert.deepEqual(await values(`${woUrl}/getlist~worktype?lean=1&oslc.select=value`, 'value'), WORKTYPE);
      assert.deepEqual(
        await values(`${ROOT}/mxapiitem/zombie/getlist~commoditygroup?lean=1&oslc.select=value`, 'value'),
        COMMODITYGROUP,
      );
    });

    test('numeric values (work order priority) are MXAPINUMERICDOMAIN members with numbers', async () => {
      const list = await members(
        `${ROOT}/mxapiwodetail/newmbo/getlist~wopriority?lean=1&oslc.select=value,description`,
      );
      assert.deepEqual(list.map((member) => member.value).sort(), [1, 2, 3, 4, 5]);
      assert.equal(list.find((member) => member.value === 1)?.description, 'Emergency');
      assert.match(String(list[0]?.href), /\/oslc\/os\/mxapinumericdomain\/_/);
    });

    test('location status and type, work order status, item status list their whole synonym domain', async () => {
      const location = await db
        .selectFrom('locations')
        .select(['location', 'siteid'])
        .orderBy('locationsid')
        .executeTakeFirstOrThrow();
      const locationUrl = `${ROOT}/mxapioperloc/${encodeRestId([String(location.location), String(location.siteid)])}`;
      assert.deepEqual(
        await values(`${locationUrl}/getlist~status?lean=1&oslc.select=value`, 'value'),
        Object.keys(LOCASSETSTATUS).sort(),
      );
      assert.deepEqual(
        await values(`${locationUrl}/getlist~type?lean=1&oslc.select=value`, 'value'),
        LOCTYPE,
      );
      assert.deepEqual(
        await values(`${ROOT}/mxapiwodetail/zombie/getlist~status?lean=1&oslc.select=value`, 'value'),
        WOSTATUS,
      );
      const item = await db
        .selectFrom('item')
        .select(['itemnum', 'itemsetid'])
        .orderBy('itemid')
        .executeTakeFirstOrThrow();
      const itemUrl = `${ROOT}/mxapiitem/${encodeRestId([String(item.itemnum), String(item.itemsetid)])}`;
      assert.deepEqual(
        await values(`${itemUrl}/getlist~status?lean=1&oslc.select=value`, 'value'),
        ITEMSTATUS,
      );
    });

    test('a site-specific domain value is listed for records of that site only', async () => {
      const created = await t.app.inject({
        method: 'POST',
        url: `${ROOT}/mxapialndomain`,
        headers: admin,
        payload: { domainid: 'ASSETTYPE', value: 'SITEONLY', description: 'Only here', siteid: otherSite },
      });
      assert.equal(created.statusCode, 201, created.body);
      const url = `${assetUrl(operating)}/getlist~assettype?lean=1&oslc.select=value`;
      assert.deepEqual(await values(url, 'value'), ASSETTYPE);
      assert.deepEqual(
        await values(`${url}&${setup({ siteid: otherSite })}`, 'value'),
        [...ASSETTYPE, 'SITEONLY'].sort(),
      );
      const removed = await t.app.inject({
        method: 'DELETE',
        url: String(created.headers.location),
        headers: admin,
      });
      assert.equal(removed.statusCode, 204);
    });
  });

  describe('table lookups', () => {
    test('asset parent: assets of the same site except the asset itself', async () => {
      const expected = (
        await column(
          db.selectFrom('asset').select('assetnum').where('siteid', '=', operating.siteid).execute(),
          'assetnum',
        )
      ).filter((assetnum) => assetnum !== operating.assetnum);
      const list = await members(`${assetUrl(operating)}/getlist~parent?lean=1&oslc.select=assetnum,siteid`);
      assert.deepEqual(list.map((member) => String(member.assetnum)).sort(), expected);
      assert.ok(list.every((member) => member.siteid === operating.siteid));
      assert.match(String(list[0]?.href), /\/oslc\/os\/mxapiasset\/_/);
    });

    test('location parent: locations of the same site except the location itself', async () => {
      const location = await db
        .selectFrom('locations')
        .select(['location', 'siteid'])
        .where('siteid', '=', otherSite)
        .orderBy('locationsid')
        .executeTakeFirstOrThrow();
      const expected = (await locationsOf(otherSite)).filter((code) => code !== location.location);
      const url = `${ROOT}/mxapioperloc/${encodeRestId([String(location.location), String(location.siteid)])}`;
      assert.deepEqual(
        await values(`${url}/getlist~parent?lean=1&oslc.select=location`, 'location'),
        expected,
      );
    });

    test('work order location: locations of its site; asset: assets of its site and location', async () => {
      const wo = await db
        .selectFrom('workorder')
        .select(['wonum', 'siteid', 'location'])
        .where('location', 'is not', null)
        .orderBy('workorderid')
        .executeTakeFirstOrThrow();
      const woUrl = `${ROOT}/mxapiwodetail/${encodeRestId([String(wo.wonum), String(wo.siteid)])}`;
      assert.deepEqual(
        await values(`${woUrl}/getlist~location?lean=1&oslc.select=location`, 'location'),
        await locationsOf(String(wo.siteid)),
      );
      const assetsThere = await column(
        db
          .selectFrom('asset')
          .select('assetnum')
          .where('siteid', '=', wo.siteid)
          .where('location', '=', wo.location)
          .execute(),
        'assetnum',
      );
      assert.deepEqual(
        await values(`${woUrl}/getlist~assetnum?lean=1&oslc.select=assetnum`, 'assetnum'),
        assetsThere,
      );
      // Without a location (a new work order of the site), every asset of the site.
      assert.deepEqual(
        await values(
          `${ROOT}/mxapiwodetail/newmbo/getlist~assetnum?lean=1&oslc.select=assetnum&${setup({ siteid: wo.siteid })}`,
          'assetnum',
        ),
        await column(
          db.selectFrom('asset').select('assetnum').where('siteid', '=', wo.siteid).execute(),
          'assetnum',
        ),
      );
    });

    test('group user: people with a user account (a person without one is not listed)', async () => {
      const created = await t.app.inject({
        method: 'POST',
        url: `${ROOT}/mxapiperuser`,
        headers: admin,
        payload: { personid: 'LOOKUPNOUSER', displayname: 'No Account' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const withUser = await column(db.selectFrom('maxuser').select('personid').execute(), 'personid');
      const list = await members(
        `${ROOT}/mxapigroup/zombie/groupuser/newmbo/getlist~userid?lean=1&oslc.select=personid,displayname,maxuser.userid`,
      );
      assert.deepEqual(list.map((member) => String(member.personid)).sort(), withUser);
      const wilson = list.find((member) => member.personid === 'WILSON');
      assert.deepEqual(wilson?.maxuser, { userid: 'WILSON' });
      assert.match(String(wilson?.href), /\/oslc\/os\/mxapiperuser\/_/);
      // Reported by: any active person, with or without an account.
      const reporters = await values(
        `${ROOT}/mxapiwodetail/zombie/getlist~reportedby?lean=1&oslc.select=personid`,
        'personid',
      );
      assert.ok(reporters.includes('LOOKUPNOUSER'));
      assert.deepEqual(
        reporters,
        await column(
          db.selectFrom('person').select('personid').where('status', '=', 'ACTIVE').execute(),
          'personid',
        ),
      );
    });

    test('sites, rotating items of the item set: by the organization of the record', async () => {
      // A second organization with its own item set, one active and one inactive site.
      await db
        .insertInto('organization')
        .values({ orgid: 'LKORG', itemsetid: 'LKSET', description: 'Lookups' })
        .execute();
      await db
        .insertInto('site')
        .values([
          { siteid: 'LKSITE', orgid: 'LKORG', description: 'Lookup site', active: true },
          { siteid: 'LKOLD', orgid: 'LKORG', description: 'Closed site', active: false },
        ])
        .execute();
      for (const [itemnum, rotating] of [
        ['LK-ROT', true],
        ['LK-PART', false],
      ] as const) {
        const item = await t.app.inject({
          method: 'POST',
          url: `${ROOT}/mxapiitem`,
          headers: admin,
          payload: { itemnum, itemsetid: 'LKSET', description: itemnum, rotating },
        });
        assert.equal(item.statusCode, 201, item.body);
      }
      const demoOrg = await db
        .selectFrom('site')
        .select('orgid')
        .where('siteid', '=', operating.siteid)
        .executeTakeFirstOrThrow();
      const demoSites = await column(
        db
          .selectFrom('site')
          .select('siteid')
          .where('orgid', '=', demoOrg.orgid)
          .where('active', '=', true)
          .execute(),
        'siteid',
      );
      const sitesUrl = `${assetUrl(operating)}/getlist~siteid?lean=1&oslc.select=siteid,orgid`;
      const sites = await members(sitesUrl);
      assert.deepEqual(sites.map((member) => String(member.siteid)).sort(), demoSites);
      assert.match(String(sites[0]?.href), /\/oslc\/os\/mxapisite\/_/);
      // A new asset has no organization yet: every active site; a site of LKORG narrows to LKORG's.
      assert.deepEqual(
        await values(`${ROOT}/mxapiasset/newmbo/getlist~siteid?lean=1&oslc.select=siteid`, 'siteid'),
        [...demoSites, 'LKSITE'].sort(),
      );
      assert.deepEqual(await values(`${sitesUrl}&${setup({ siteid: 'LKSITE' })}`, 'siteid'), ['LKSITE']);

      const demoItemSet = await db
        .selectFrom('organization')
        .select('itemsetid')
        .where('orgid', '=', demoOrg.orgid)
        .executeTakeFirstOrThrow();
      const rotating = await column(
        db
          .selectFrom('item')
          .select('itemnum')
          .where('itemsetid', '=', demoItemSet.itemsetid)
          .where('rotating', '=', true)
          .execute(),
        'itemnum',
      );
      assert.ok(rotating.length > 0);
      const itemsUrl = `${assetUrl(operating)}/getlist~itemnum?lean=1&oslc.select=itemnum`;
      assert.deepEqual(await values(itemsUrl, 'itemnum'), rotating);
      assert.deepEqual(await values(`${itemsUrl}&${setup({ siteid: 'LKSITE' })}`, 'itemnum'), ['LK-ROT']);
    });
  });

  describe('setupdata', () => {
    test('changing siteid changes the locations returned, on zombie, newmbo and a loaded record', async () => {
      const here = await locationsOf(operating.siteid);
      const there = await locationsOf(otherSite);
      assert.notDeepEqual(here, there);
      for (const record of ['zombie', 'newmbo', encodeRestId([operating.assetnum, operating.siteid])]) {
        const url = `${ROOT}/mxapiasset/${record}/getlist~location?lean=1&oslc.select=location`;
        assert.deepEqual(
          await values(`${url}&${setup({ siteid: otherSite.toLowerCase() })}`, 'location'),
          there,
          record,
        );
        assert.deepEqual(
          await values(`${url}&${setup({ siteid: operating.siteid })}`, 'location'),
          here,
          record,
        );
      }
      // A zombie without a site narrows nothing: every location.
      assert.deepEqual(
        await values(
          `${ROOT}/mxapiasset/zombie/getlist~location?lean=1&oslc.select=location&setupdata=%7B%7D`,
          'location',
        ),
        [...here, ...there].sort(),
      );
    });

    test('nothing is written: row counts and rowstamps stay as they were', async () => {
      const snapshot = async (): Promise<string> => {
        const parts: string[] = [];
        for (const table of WATCHED_TABLES) {
          const row = await sql<{ count: number; max: number | null }>`select count(*)::integer as count,
            max(rowstamp) as max from ${sql.table(table)}`.execute(db);
          parts.push(`${table}:${row.rows[0]?.count}:${row.rows[0]?.max}`);
        }
        return parts.join(' ');
      };
      const beforeLookups = await snapshot();
      const asset = assetUrl(operating);
      for (const url of [
        `${asset}/getlist~location?${setup({ siteid: otherSite, description: 'changed', status: 'BROKEN' })}`,
        `${asset}/getlist~status?${setup({ status: 'ACTIVE', priority: 1 })}`,
        `${ROOT}/mxapiasset/newmbo/getlist~parent?${setup({ assetnum: 'NEWONE', siteid: otherSite })}`,
        `${ROOT}/mxapigroup/${encodeRestId(['MAINT'])}/groupuser/newmbo/getlist~userid?${setup({ userid: 'SMITH' })}`,
      ]) {
        assert.equal((await get(url)).statusCode, 200, url);
      }
      assert.equal(await snapshot(), beforeLookups);
      const stored = await db
        .selectFrom('asset')
        .select(['siteid', 'status', 'description'])
        .where('assetuid', '=', operating.assetuid)
        .executeTakeFirstOrThrow();
      assert.equal(stored.siteid, operating.siteid);
      assert.equal(stored.status, operating.status);
    });
  });

  describe('a lookup is a collection query', () => {
    test('paging, filtering and ordering give the members of the equivalent collection query', async () => {
      const filter =
        'oslc.where=status="OPERATING"&oslc.orderBy=-location&oslc.select=location,description,status';
      const lookupBase = `${ROOT}/mxapiasset/zombie/getlist~location?lean=1&${setup({ siteid: otherSite })}&${filter}`;
      const collectionBase =
        `${ROOT}/mxapioperloc?lean=1&oslc.where=${encodeURIComponent(`siteid="${otherSite}" and status="OPERATING"`)}` +
        '&oslc.orderBy=-location&oslc.select=location,description,status';
      for (const page of [
        'oslc.pageSize=4&pageno=1',
        'oslc.pageSize=4&pageno=2',
        'oslc.pageSize=4&pageno=50',
      ]) {
        const lookup = json(await get(`${lookupBase}&${page}&collectioncount=1`));
        const collection = json(await get(`${collectionBase}&${page}&collectioncount=1`));
        assert.deepEqual(lookup.member, collection.member, page);
        assert.equal(lookup.responseInfo?.totalCount, collection.responseInfo?.totalCount);
        assert.equal(lookup.responseInfo?.totalPages, collection.responseInfo?.totalPages);
        assert.equal(
          'nextPage' in (lookup.responseInfo ?? {}),
          'nextPage' in (collection.responseInfo ?? {}),
        );
      }
      const first = json(await get(`${lookupBase}&oslc.pageSize=4`));
      const next = (first.responseInfo?.nextPage as { href?: string } | undefined)?.href;
      assert.match(String(next), /\/mxapiasset\/zombie\/getlist~location\?pageno=2&/);
      const expected = await column(
        db
          .selectFrom('locations')
          .select('location')
          .where('siteid', '=', otherSite)
          .where('status', '=', 'OPERATING')
          .execute(),
        'location',
      );
      const counted = json(await get(`${lookupBase}&count=1`));
      assert.deepEqual(counted, { totalCount: expected.length });
    });

    test('lean=0 answers the namespaced form', async () => {
      const body = json(await get(`${ROOT}/mxapiitem/zombie/getlist~status?lean=0&oslc.select=value`));
      const list = body['rdfs:member'] as Json[];
      assert.deepEqual(list.map((member) => String(member['spi:value'])).sort(), ITEMSTATUS);
      assert.ok(list.every((member) => String(member['rdf:about']).includes('/os/mxapisynonymdomain/_')));
      assert.ok(body['oslc:responseInfo']);
    });
  });

  describe('ETag', () => {
    test('If-None-Match with the current tag answers 304; a change of the list changes the tag', async () => {
      const url = `${ROOT}/mxapiasset/zombie/getlist~location?lean=1&oslc.select=location,description&${setup({ siteid: otherSite })}`;
      const first = await get(url);
      assert.equal(first.statusCode, 200);
      const tag = String(first.headers.etag);
      assert.match(tag, /^"[A-Za-z0-9_-]+"$/);
      assert.equal((await get(url)).headers.etag, tag, 'the same answer has the same tag');
      for (const header of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
        const cached = await get(url, { ...admin, 'if-none-match': header });
        assert.equal(cached.statusCode, 304, header);
        assert.equal(cached.body, '');
        assert.equal(cached.headers.etag, tag);
      }
      assert.equal((await get(url, { ...admin, 'if-none-match': '"stale"' })).statusCode, 200);

      const location = await db
        .selectFrom('locations')
        .select(['location', 'siteid'])
        .where('siteid', '=', otherSite)
        .orderBy('locationsid')
        .executeTakeFirstOrThrow();
      const changed = await t.app.inject({
        method: 'POST',
        url: `${ROOT}/mxapioperloc/${encodeRestId([String(location.location), String(location.siteid)])}`,
        headers: { ...admin, 'x-method-override': 'PATCH' },
        payload: { description: 'Renamed for the ETag test' },
      });
      assert.equal(changed.statusCode, 204, changed.body);
      const afterChange = await get(url, { ...admin, 'if-none-match': tag });
      assert.equal(afterChange.statusCode, 200);
      assert.notEqual(afterChange.headers.etag, tag);
    });

    test('errors carry no tag', async () => {
      const response = await get(`${ROOT}/mxapiasset/zombie/getlist~nosuchattribute`, {
        ...admin,
        'if-none-match': '*',
      });
      assert.equal(response.statusCode, 400);
      assert.equal(response.headers.etag, undefined);
    });
  });

  describe('errors', () => {
    test('unknown object structure, attribute, attribute without a value list', async () => {
      assert.deepEqual(await errorOf(`${ROOT}/mxapinothing/zombie/getlist~status`), [404, 'EAS0002E']);
      assert.deepEqual(await errorOf(`${ROOT}/mxapiasset/zombie/getlist~nosuchattribute`), [400, 'EAS0020E']);
      assert.deepEqual(await errorOf(`${ROOT}/mxapiasset/zombie/getlist~`), [400, 'EAS0020E']);
      assert.deepEqual(await errorOf(`${ROOT}/mxapiasset/zombie/getlist~description`), [400, 'EAS0050E']);
      assert.deepEqual(await errorOf(`${ROOT}/mxapiperuser/zombie/getlist~maxuser`), [400, 'EAS0020E']);
    });

    test('unknown record, child record, child relation', async () => {
      assert.deepEqual(
        await errorOf(`${ROOT}/mxapiasset/${encodeRestId(['NOSUCHASSET', operating.siteid])}/getlist~status`),
        [404, 'BMXAA8727E'],
      );
      assert.deepEqual(await errorOf(`${ROOT}/mxapiasset/99999999/getlist~status`), [404, 'BMXAA8727E']);
      const group = `${ROOT}/mxapigroup/${encodeRestId(['MAINT'])}`;
      assert.deepEqual(await errorOf(`${group}/groupuser/99999999/getlist~userid`), [404, 'BMXAA8727E']);
      // A member of another group is not a child of this one.
      const viewer = await db
        .selectFrom('groupuser')
        .select('groupuserid')
        .where('groupname', '=', 'VIEWER')
        .executeTakeFirstOrThrow();
      assert.deepEqual(await errorOf(`${group}/groupuser/${String(viewer.groupuserid)}/getlist~userid`), [
        404,
        'BMXAA8727E',
      ]);
      assert.deepEqual(await errorOf(`${group}/nosuchchild/1/getlist~userid`), [404, 'EAS0001E']);
    });

    test('setupdata that is not a JSON object, names unknown attributes or holds wrong types', async () => {
      const url = `${ROOT}/mxapiasset/zombie/getlist~location`;
      assert.deepEqual(await errorOf(`${url}?setupdata=${encodeURIComponent('{siteid:')}`), [
        400,
        'EAS0051E',
      ]);
      assert.deepEqual(await errorOf(`${url}?setupdata=${encodeURIComponent('["NASHUA"]')}`), [
        400,
        'EAS0051E',
      ]);
      assert.deepEqual(await errorOf(`${url}?setupdata=null`), [400, 'EAS0051E']);
      assert.deepEqual(await errorOf(`${url}?${setup({ nosuchattribute: 1 })}`), [400, 'EAS0020E']);
      assert.deepEqual(await errorOf(`${url}?${setup({ priority: 'high' })}`), [400, 'EAS0010E']);
    });

    test('rights: read on the object structure is required; the target structure needs none', async () => {
      const smith = maxauth('SMITH');
      assert.deepEqual(await errorOf(`${ROOT}/mxapigroup/zombie/groupuser/zombie/getlist~userid`, smith), [
        400,
        'BMXAA9301E',
      ]);
      // SMITH reads assets but has no right on MXAPIALNDOMAIN: the value list is part of reading the asset.
      assert.deepEqual(
        await values(`${ROOT}/mxapiasset/zombie/getlist~assettype?lean=1&oslc.select=value`, 'value'),
        ASSETTYPE,
      );
      const asSmith = await members(
        `${ROOT}/mxapiasset/zombie/getlist~assettype?lean=1&oslc.select=value`,
        smith,
      );
      assert.deepEqual(asSmith.map((member) => String(member.value)).sort(), ASSETTYPE);
      assert.deepEqual(await errorOf(`${ROOT}/mxapiasset/zombie/getlist~assettype`, {}), [401, 'BMXAA7901E']);
    });
  });
});
