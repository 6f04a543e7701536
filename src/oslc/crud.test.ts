import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { json, maxauth, startTestApp, type Json, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';
import { baseObjectStructures } from '../metadata/object-structures.js';

/**
 * Create → read (rest id and numeric id) → update (PATCH, MERGE of children, replacement of children) → delete
 * (DELETE and POST with `x-method-override: DELETE`) on every object structure, checked against the stored rows.
 */

type Body = Record<string, unknown>;

/** Facts of the demo data the bodies are built from, read from the database rather than assumed. */
interface DemoFacts {
  site: string;
  otherSite: string;
  organization: string;
  alnDomain: string;
  numericDomain: string;
  itemSet: string;
  location: string;
  assetStatus: string;
  woStatus: string;
}

interface ChildCase {
  /** Child collection name (a path of names for a grandchild: `maxuser.groupuser`). */
  path: readonly string[];
  /** Table and join column of the child rows, with the parent value they hang under. */
  table: string;
  column: string;
  parentValue: string;
  /** The attribute that tells the child rows apart. */
  distinct: string;
  /** Values of `distinct` after the create. */
  created: readonly string[];
  /** Update body (sent with `patchtype: MERGE`) that adds one child. */
  mergeBody: Body;
  added: string;
  /** Plain update body whose child array replaces the collection. */
  replaceBody: Body;
  replaced: readonly string[];
}

interface CrudCase {
  structure: string;
  table: string;
  uniqueId: string;
  /** Column and value that find the created row. */
  key: (suffix: string) => readonly [string, string | number];
  body: (facts: DemoFacts, suffix: string) => Body;
  update: Body;
  /** Attribute the update changed, with its expected stored value. */
  updated: readonly [string, string | number];
  child?: (suffix: string) => ChildCase;
}

const cases: readonly CrudCase[] = [
  {
    structure: 'MXAPIASSET',
    table: 'asset',
    uniqueId: 'assetuid',
    key: (suffix) => ['assetnum', `CRUDA${suffix}`],
    body: (facts, suffix) => ({
      assetnum: `CRUDA${suffix}`,
      siteid: facts.site,
      description: 'Crud test pump',
      status: facts.assetStatus,
      location: facts.location,
      priority: 2,
      purchaseprice: 1250.5,
      installdate: '2024-03-01T08:00:00+00:00',
      isrunning: true,
    }),
    update: { description: 'Crud test pump, rebuilt', priority: 3 },
    updated: ['description', 'Crud test pump, rebuilt'],
  },
  {
    structure: 'MXAPIOPERLOC',
    table: 'locations',
    uniqueId: 'locationsid',
    key: (suffix) => ['location', `CRUDL${suffix}`],
    body: (facts, suffix) => ({
      location: `CRUDL${suffix}`,
      siteid: facts.site,
      description: 'Crud test room',
      type: 'OPERATING',
      parent: facts.location,
    }),
    update: { description: 'Crud test room, renamed' },
    updated: ['description', 'Crud test room, renamed'],
  },
  {
    structure: 'MXAPIITEM',
    table: 'item',
    uniqueId: 'itemid',
    key: (suffix) => ['itemnum', `CRUDI${suffix}`],
    body: (facts, suffix) => ({
      itemnum: `CRUDI${suffix}`,
      itemsetid: facts.itemSet,
      description: 'Crud test bearing',
      orderunit: 'EA',
      unitcost: 12.25,
    }),
    update: { description: 'Crud test bearing, sealed', status: 'ACTIVE' },
    updated: ['status', 'ACTIVE'],
  },
  {
    structure: 'MXAPIWODETAIL',
    table: 'workorder',
    uniqueId: 'workorderid',
    key: (suffix) => ['wonum', `CRUDW${suffix}`],
    body: (facts, suffix) => ({
      wonum: `CRUDW${suffix}`,
      siteid: facts.otherSite,
      description: 'Crud test inspection',
      status: facts.woStatus,
      worktype: 'PM',
      wopriority: 2,
      estdur: 1.5,
    }),
    update: { description: 'Crud test inspection, extended', estdur: 2.75 },
    updated: ['description', 'Crud test inspection, extended'],
  },
  {
    structure: 'MXAPIDOMAIN',
    table: 'maxdomain',
    uniqueId: 'maxdomainid',
    key: (suffix) => ['domainid', `CRUDALN${suffix}`],
    body: (_facts, suffix) => ({
      domainid: `CRUDALN${suffix}`,
      domaintype: 'ALN',
      description: 'Crud test colours',
      maxtype: 'UPPER',
      length: 10,
      alndomain: [
        { value: 'RED', description: 'Red' },
        { value: 'GREEN', description: 'Green' },
      ],
    }),
    update: { description: 'Crud test colours, revised' },
    updated: ['description', 'Crud test colours, revised'],
    child: (suffix) => ({
      path: ['alndomain'],
      table: 'alndomain',
      column: 'domainid',
      distinct: 'value',
      created: ['GREEN', 'RED'],
      mergeBody: { alndomain: [{ value: 'BLUE', description: 'Blue' }] },
      added: 'BLUE',
      replaceBody: { alndomain: [{ value: 'BLACK', description: 'Black' }] },
      replaced: ['BLACK'],
      parentValue: `CRUDALN${suffix}`,
    }),
  },
  {
    structure: 'MXAPISYNONYMDOMAIN',
    table: 'synonymdomain',
    uniqueId: 'synonymdomainid',
    key: (suffix) => ['value', `CRUDSYN${suffix}`],
    body: (_facts, suffix) => ({
      domainid: 'LOCASSETSTATUS',
      maxvalue: 'NOT READY',
      value: `CRUDSYN${suffix}`,
      description: 'Crud test status',
    }),
    update: { description: 'Crud test status, revised', defaults: false },
    updated: ['description', 'Crud test status, revised'],
  },
  {
    structure: 'MXAPIALNDOMAIN',
    table: 'alndomain',
    uniqueId: 'alndomainid',
    key: (suffix) => ['value', `CRUDALV${suffix}`],
    body: (facts, suffix) => ({
      domainid: facts.alnDomain,
      value: `CRUDALV${suffix}`,
      description: 'Crud test value',
    }),
    update: { description: 'Crud test value, revised' },
    updated: ['description', 'Crud test value, revised'],
  },
  {
    structure: 'MXAPINUMERICDOMAIN',
    table: 'numericdomain',
    uniqueId: 'numericdomainid',
    key: (suffix) => ['value', 9000 + Number(suffix)],
    body: (facts, suffix) => ({
      domainid: facts.numericDomain,
      value: 9000 + Number(suffix),
      description: 'Crud test',
    }),
    update: { description: 'Crud test number, revised' },
    updated: ['description', 'Crud test number, revised'],
  },
  {
    structure: 'MXAPIORGANIZATION',
    table: 'organization',
    uniqueId: 'organizationid',
    key: (suffix) => ['orgid', `CRUDO${suffix}`],
    body: (_facts, suffix) => ({
      orgid: `CRUDO${suffix}`,
      description: 'Crud test org',
      itemsetid: 'CRUDSET',
    }),
    update: { description: 'Crud test org, renamed' },
    updated: ['description', 'Crud test org, renamed'],
  },
  {
    structure: 'MXAPISITE',
    table: 'site',
    uniqueId: 'siteuid',
    key: (suffix) => ['siteid', `CRUDS${suffix}`],
    body: (facts, suffix) => ({
      siteid: `CRUDS${suffix}`,
      orgid: facts.organization,
      description: 'Crud test site',
    }),
    update: { description: 'Crud test site, renamed' },
    updated: ['description', 'Crud test site, renamed'],
  },
  {
    structure: 'MXAPIPERUSER',
    table: 'person',
    uniqueId: 'personuid',
    key: (suffix) => ['personid', `CRUDP${suffix}`],
    body: (facts, suffix) => ({
      personid: `CRUDP${suffix}`,
      firstname: 'Crud',
      lastname: 'Tester',
      displayname: 'Crud Tester',
      locationsite: facts.site,
      maxuser: [
        {
          userid: `CRUDU${suffix}`,
          loginid: `crudu${suffix}`,
          password: `crud-secret-${suffix}`,
          defsite: facts.site,
          groupuser: [{ groupname: 'VIEWER' }],
        },
      ],
    }),
    update: { title: 'Inspector' },
    updated: ['title', 'Inspector'],
    child: (suffix) => ({
      path: ['maxuser', 'groupuser'],
      table: 'groupuser',
      column: 'userid',
      distinct: 'groupname',
      created: ['VIEWER'],
      mergeBody: { maxuser: [{ userid: `CRUDU${suffix}`, groupuser: [{ groupname: 'MAINT' }] }] },
      added: 'MAINT',
      replaceBody: { maxuser: [{ userid: `CRUDU${suffix}`, groupuser: [{ groupname: 'MAINT' }] }] },
      replaced: ['MAINT'],
      parentValue: `CRUDU${suffix}`,
    }),
  },
  {
    structure: 'MXAPIGROUP',
    table: 'maxgroup',
    uniqueId: 'maxgroupid',
    key: (suffix) => ['groupname', `CRUDG${suffix}`],
    body: (_facts, suffix) => ({
      groupname: `CRUDG${suffix}`,
      description: 'Crud test group',
      groupuser: [{ userid: 'WILSON' }],
    }),
    update: { description: 'Crud test group, revised', authallsites: true },
    updated: ['description', 'Crud test group, revised'],
    child: (suffix) => ({
      path: ['groupuser'],
      table: 'groupuser',
      column: 'groupname',
      distinct: 'userid',
      created: ['WILSON'],
      mergeBody: { groupuser: [{ userid: 'SMITH' }] },
      added: 'SMITH',
      replaceBody: { groupuser: [{ userid: 'MAXADMIN' }] },
      replaced: ['MAXADMIN'],
      parentValue: `CRUDG${suffix}`,
    }),
  },
  {
    structure: 'MXAPIDMPKGDEF',
    table: 'dmpackagedef',
    uniqueId: 'dmpackagedefid',
    key: (suffix) => ['pkgdefname', `CRUDPKG${suffix}`],
    body: (_facts, suffix) => ({
      pkgdefname: `CRUDPKG${suffix}`,
      type: 'SNAPSHOT',
      description: 'Crud test package definition',
      dmpkgdefcontent: [{ objectstructure: 'MXAPIITEM', cfgdataorder: 1 }],
    }),
    update: { description: 'Crud test package definition, revised' },
    updated: ['description', 'Crud test package definition, revised'],
  },
  {
    // One key per user: the second create (suffix 2) follows the delete of the first, for the same user.
    structure: 'MXAPIAPIKEY',
    table: 'apikeytoken',
    uniqueId: 'apikeytokenid',
    key: () => ['userid', 'WILSON'],
    body: () => ({ userid: 'WILSON', expiration: 60 }),
    update: { expiration: 120 },
    updated: ['expiration', 120],
  },
  {
    structure: 'MXAPIWO',
    table: 'workorder',
    uniqueId: 'workorderid',
    key: (suffix) => ['wonum', `CRUDWO${suffix}`],
    body: (facts, suffix) => ({
      wonum: `CRUDWO${suffix}`,
      siteid: facts.site,
      description: 'Crud test overhaul',
      woclass: 'WORKORDER',
      schedstart: '2025-02-01T08:00:00+00:00',
      description_longdescription: 'Strip, inspect and rebuild.',
    }),
    update: { description: 'Crud test overhaul, rescheduled', schedfinish: '2025-02-03T17:00:00+00:00' },
    updated: ['description', 'Crud test overhaul, rescheduled'],
    child: (suffix) => ({
      path: ['woactivity'],
      table: 'workorder',
      column: 'parent',
      distinct: 'description',
      created: [],
      mergeBody: { woactivity: [{ description: 'Isolate' }] },
      added: 'Isolate',
      replaceBody: { woactivity: [{ description: 'Inspect' }] },
      replaced: ['Inspect'],
      parentValue: `CRUDWO${suffix}`,
    }),
  },
  {
    structure: 'MXAPISR',
    table: 'ticket',
    uniqueId: 'ticketuid',
    key: (suffix) => ['ticketid', `CRUDSR${suffix}`],
    body: (facts, suffix) => ({
      ticketid: `CRUDSR${suffix}`,
      siteid: facts.site,
      description: 'Crud test request',
      reportedby: 'WILSON',
      location: facts.location,
    }),
    update: { description: 'Crud test request, updated', affectedperson: 'SMITH' },
    updated: ['description', 'Crud test request, updated'],
  },
  {
    structure: 'MASPERUSER',
    table: 'person',
    uniqueId: 'personuid',
    key: (suffix) => ['personid', `CRUDMP${suffix}`],
    // As the platform's tooling creates a person and user: `maxuser` is one object.
    body: (_facts, suffix) => ({
      personid: `CRUDMP${suffix}`,
      displayname: 'Crud Platform',
      primaryemail: `crudmp${suffix}@example.org`,
      maxuser: { userid: `CRUDMU${suffix}`, loginid: `crudmu${suffix}`, status: 'ACTIVE' },
    }),
    update: { displayname: 'Crud Platform, renamed' },
    updated: ['displayname', 'Crud Platform, renamed'],
  },
  {
    structure: 'MXAPIPERSON',
    table: 'person',
    uniqueId: 'personuid',
    key: (suffix) => ['personid', `CRUDPE${suffix}`],
    body: (_facts, suffix) => ({
      personid: `CRUDPE${suffix}`,
      firstname: 'Crud',
      lastname: 'Person',
      department: 'MAINT',
    }),
    update: { primaryphone: '555-0100' },
    updated: ['primaryphone', '555-0100'],
  },
  {
    // A pending change of database configuration (docs/dbconfig.md); staging it changes no table.
    structure: 'MXAPIMAXATTRIBUTECFG',
    table: 'maxattributecfg',
    uniqueId: 'maxattributecfgid',
    key: (suffix) => ['attributename', `XCRUD${suffix}`],
    body: (_facts, suffix) => ({
      objectname: 'ASSET',
      attributename: `XCRUD${suffix}`,
      changetype: 'ADD',
      maxtype: 'ALN',
      length: 10,
    }),
    update: { title: 'Crud attribute' },
    updated: ['title', 'Crud attribute'],
  },
];

const admin = maxauth('MAXADMIN');
const REST_ID_HREF = /^http:\/\/localhost(?::80)?\/maximo\/(oslc|api)\/os\/([a-z0-9_]+)\/(_[A-Za-z0-9_.-]+)$/;

describe('object-structure CRUD', () => {
  let t: TestApp;
  let db: Kysely<DynamicDatabase>;
  let facts: DemoFacts;

  before(async () => {
    t = await startTestApp();
    db = t.storage.db as unknown as Kysely<DynamicDatabase>;
    const sites = await db.selectFrom('site').select(['siteid', 'orgid']).orderBy('siteid').execute();
    assert.ok(sites.length >= 2, 'the demo data has two sites');
    const site = String(sites[0]!.siteid);
    const organization = await db
      .selectFrom('organization')
      .select('itemsetid')
      .where('orgid', '=', sites[0]!.orgid)
      .executeTakeFirstOrThrow();
    const location = await db
      .selectFrom('locations')
      .select('location')
      .where('siteid', '=', site)
      .orderBy('location')
      .executeTakeFirstOrThrow();
    const domainOfType = async (domaintype: string) =>
      String(
        (
          await db
            .selectFrom('maxdomain')
            .select('domainid')
            .where('domaintype', '=', domaintype)
            .orderBy('domainid')
            .executeTakeFirstOrThrow()
        ).domainid,
      );
    facts = {
      site,
      otherSite: String(sites[1]!.siteid),
      organization: String(sites[0]!.orgid),
      alnDomain: await domainOfType('ALN'),
      numericDomain: await domainOfType('NUMERIC'),
      itemSet: String(organization.itemsetid),
      location: String(location.location),
      assetStatus: await synonymValue(db, 'LOCASSETSTATUS', 'OPERATING'),
      woStatus: await synonymValue(db, 'WOSTATUS', 'APPR'),
    };
  });
  after(() => t.close());

  test('every object structure of the metadata has a case here', () => {
    assert.deepEqual(
      cases.map((entry) => entry.structure).sort(),
      baseObjectStructures
        .map((structure) => structure.name)
        // Packages are read-only records the migration service writes (docs/migration.md); properties are read-only
        // here, set by setProperty (docs/properties.md; their refusals are in src/migration/scope.test.ts); the audit
        // trail and login tracking are written by the service only (docs/audit.md; refusals in src/audit/audit.test.ts).
        .filter(
          (name) => !['MXAPIDMPACKAGE', 'MXAPIPROPERTY', 'MXAPIAUDIT', 'MXAPILOGINTRACKING'].includes(name),
        )
        .sort(),
    );
  });

  for (const entry of cases) {
    test(`${entry.structure}: create, read by rest id and numeric id, update, delete`, async () => {
      const name = entry.structure.toLowerCase();
      const [keyColumn, keyValue] = entry.key('1');
      const rowsBefore = await countRows(db, entry.table);

      const created = await t.app.inject({
        method: 'POST',
        url: `/maximo/oslc/os/${name}?lean=1`,
        headers: admin,
        payload: entry.body(facts, '1'),
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.body, '', 'a create without a properties header answers no body');
      const location = String(created.headers.location);
      const match = REST_ID_HREF.exec(location);
      assert.ok(match, `Location ${location} is a member href`);
      assert.equal(match[1], 'oslc');
      assert.equal(match[2], name);
      assert.equal(await countRows(db, entry.table), rowsBefore + 1);
      const stored = await db
        .selectFrom(entry.table)
        .selectAll()
        .where(keyColumn, '=', keyValue)
        .executeTakeFirstOrThrow();
      const uniqueId = Number(stored[entry.uniqueId]);
      assert.ok(Number.isInteger(uniqueId) && uniqueId > 0);

      const byRestId = await getResource(t, `${location}?lean=1`);
      assert.equal(byRestId.statusCode, 200, byRestId.body);
      const resource = json(byRestId);
      assert.equal(resource.href, location);
      assert.equal(resource[keyColumn], keyValue);
      assert.equal(resource[entry.uniqueId], uniqueId);
      for (const [attribute, value] of Object.entries(entry.body(facts, '1'))) {
        if (typeof value === 'object' || attribute === 'password') continue;
        assert.deepEqual(resource[attribute], value, `${attribute} reads back as sent`);
      }
      assert.equal(typeof resource._rowstamp, 'string');

      const byNumericId = await getResource(t, `/maximo/oslc/os/${name}/${uniqueId}?lean=1`);
      assert.equal(byNumericId.statusCode, 200, byNumericId.body);
      assert.deepEqual(json(byNumericId), resource, 'the numeric unique id addresses the same resource');

      const updated = await t.app.inject({
        method: 'POST',
        url: location,
        headers: { ...admin, 'x-method-override': 'PATCH' },
        payload: entry.update,
      });
      assert.equal(updated.statusCode, 204, updated.body);
      assert.equal(updated.body, '');
      const [updatedAttribute, updatedValue] = entry.updated;
      const afterUpdate = json(await getResource(t, `${location}?lean=1`));
      assert.equal(afterUpdate[updatedAttribute], updatedValue);
      assert.notEqual(afterUpdate._rowstamp, resource._rowstamp, 'an update takes a new rowstamp');
      const storedAfterUpdate = await db
        .selectFrom(entry.table)
        .select(updatedAttribute)
        .where(entry.uniqueId, '=', uniqueId)
        .executeTakeFirstOrThrow();
      assert.equal(storedAfterUpdate[updatedAttribute], updatedValue);
      assert.equal(await countRows(db, entry.table), rowsBefore + 1, 'an update adds no row');

      if (entry.child) await checkChildWrites(t, db, location, entry.child('1'));

      const removed = await t.app.inject({ method: 'DELETE', url: location, headers: admin });
      assert.equal(removed.statusCode, 204, removed.body);
      assert.equal(removed.body, '');
      await assertGone(t, location, entry.structure);
      await assertGone(t, `/maximo/oslc/os/${name}/${uniqueId}`, entry.structure);
      assert.equal(await countRows(db, entry.table), rowsBefore);
      if (entry.child) {
        const child = entry.child('1');
        assert.equal(
          await countRows(db, child.table, [child.column, child.parentValue]),
          0,
          'children go with the parent',
        );
      }

      // The second delete form: POST on the member with x-method-override: DELETE, through /api and an id in URL form.
      const second = await t.app.inject({
        method: 'POST',
        url: `/maximo/api/os/${name}`,
        headers: admin,
        payload: entry.body(facts, '2'),
      });
      assert.equal(second.statusCode, 201, second.body);
      const secondLocation = String(second.headers.location);
      assert.equal(REST_ID_HREF.exec(secondLocation)?.[1], 'api', 'Location follows the route used');
      assert.equal(await countRows(db, entry.table), rowsBefore + 1);
      const overridden = await t.app.inject({
        method: 'POST',
        url: secondLocation,
        headers: { ...admin, 'x-method-override': 'DELETE' },
      });
      assert.equal(overridden.statusCode, 204, overridden.body);
      assert.equal(overridden.body, '');
      await assertGone(t, secondLocation, entry.structure);
      assert.equal(await countRows(db, entry.table), rowsBefore);
    });
  }

  test('MXAPIDOMAIN: synonym and numeric domains are created with their value children', async () => {
    const synonym = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapidomain?lean=1',
      headers: { ...admin, properties: '*' },
      payload: {
        domainid: 'CRUDSYNDOM',
        domaintype: 'SYNONYM',
        maxtype: 'UPPER',
        synonymdomain: [
          { maxvalue: 'OPEN', value: 'OPEN', description: 'Open', defaults: true },
          { maxvalue: 'OPEN', value: 'NEW', description: 'New' },
        ],
      },
    });
    assert.equal(synonym.statusCode, 201, synonym.body);
    assert.equal(json(synonym).domaintype, 'SYNONYM');
    const synonymRead = json(await getResource(t, `${String(synonym.headers.location)}?lean=1`));
    const synonymValues = (synonymRead.synonymdomain as Json[] | undefined) ?? [];
    assert.deepEqual(synonymValues.map((row) => `${String(row.maxvalue)}:${String(row.value)}`).sort(), [
      'OPEN:NEW',
      'OPEN:OPEN',
    ]);
    assert.equal(await countRows(db, 'synonymdomain', ['domainid', 'CRUDSYNDOM']), 2);

    const numeric = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapidomain?lean=1',
      headers: { ...admin, properties: '*' },
      payload: {
        domainid: 'CRUDNUMDOM',
        domaintype: 'NUMERIC',
        maxtype: 'DECIMAL',
        scale: 2,
        numericdomain: [
          { value: 1.5, description: 'One and a half' },
          { value: 3, description: 'Three' },
        ],
      },
    });
    assert.equal(numeric.statusCode, 201, numeric.body);
    const numericRead = json(await getResource(t, `${String(numeric.headers.location)}?lean=1`));
    const numericValues = (numericRead.numericdomain as Json[] | undefined) ?? [];
    assert.deepEqual(numericValues.map((row) => row.value).sort(), [1.5, 3]);

    // MERGE on a numeric domain keeps the values not sent.
    const merged = await t.app.inject({
      method: 'POST',
      url: String(numeric.headers.location),
      headers: { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
      payload: { numericdomain: [{ value: 4.25, description: 'Four and a quarter' }] },
    });
    assert.equal(merged.statusCode, 204, merged.body);
    const stored = await db
      .selectFrom('numericdomain')
      .select('value')
      .where('domainid', '=', 'CRUDNUMDOM')
      .execute();
    assert.deepEqual(stored.map((row) => Number(row.value)).sort(), [1.5, 3, 4.25]);

    for (const href of [String(synonym.headers.location), String(numeric.headers.location)]) {
      const removed = await t.app.inject({ method: 'DELETE', url: href, headers: admin });
      assert.equal(removed.statusCode, 204, removed.body);
    }
    assert.equal(await countRows(db, 'synonymdomain', ['domainid', 'CRUDSYNDOM']), 0);
    assert.equal(await countRows(db, 'numericdomain', ['domainid', 'CRUDNUMDOM']), 0);
  });

  test('a resource whose rest id is long (keys at their full length) is addressable by its Location', async () => {
    const value = 'V'.repeat(50);
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapisynonymdomain',
      headers: admin,
      payload: {
        domainid: 'LOCASSETSTATUS',
        maxvalue: 'DECOMMISSIONED',
        value,
        description: 'Longest value',
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const location = String(created.headers.location);
    assert.ok(REST_ID_HREF.exec(location)![3]!.length > 100, 'the rest id is longer than 100 characters');
    const read = await getResource(t, `${location}?lean=1`);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(json(read).value, value);
    const removed = await t.app.inject({ method: 'DELETE', url: location, headers: admin });
    assert.equal(removed.statusCode, 204, removed.body);
  });

  test('alias names and any case reach the same structure; hrefs keep the name the client used', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/MXASSET',
      headers: admin,
      payload: { assetnum: 'CRUDALIAS', siteid: facts.site, description: 'Through the alias' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const location = String(created.headers.location);
    assert.equal(REST_ID_HREF.exec(location)?.[2], 'mxasset');
    const restId = REST_ID_HREF.exec(location)![3]!;
    for (const name of ['MXAPIASSET', 'mxapiasset', 'MxApiAsset', 'mxasset']) {
      const response = await getResource(t, `/maximo/oslc/os/${name}/${restId}?lean=1`);
      assert.equal(response.statusCode, 200, `${name}: ${response.body}`);
      assert.equal(json(response).assetnum, 'CRUDALIAS');
      assert.equal(json(response).href, `http://localhost:80/maximo/oslc/os/${name.toLowerCase()}/${restId}`);
    }
    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/maximo/oslc/os/MxAsset/${restId}`,
      headers: admin,
    });
    assert.equal(removed.statusCode, 204);

    const workOrders = await t.app.inject({
      url: '/maximo/oslc/os/mxwo?lean=1&oslc.select=wonum&oslc.pageSize=1',
      headers: admin,
    });
    assert.equal(workOrders.statusCode, 200, workOrders.body);
    const member = json(workOrders).member?.[0];
    assert.ok(member, 'mxwo answers work orders');
    assert.match(String(member.href), /\/maximo\/oslc\/os\/mxwo\/_/);
    const one = await getResource(t, `${String(member.href)}?lean=1`);
    assert.equal(json(one).wonum, member.wonum);
  });

  test('a properties header on create answers 201 with the resource and the Location', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset?lean=1',
      headers: { ...admin, properties: '*' },
      payload: {
        assetnum: 'CRUDPROPS',
        siteid: facts.site,
        description: 'Answered in full',
        status: facts.assetStatus,
      },
    });
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(response.headers['content-type'], 'application/json');
    const resource = json(response);
    assert.equal(resource.assetnum, 'CRUDPROPS');
    assert.equal(resource.siteid, facts.site);
    assert.equal(resource.status, facts.assetStatus);
    assert.equal(typeof resource._rowstamp, 'string');
    assert.equal(resource.href, response.headers.location);

    const some = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset?lean=1',
      headers: { ...admin, properties: 'assetnum,description' },
      payload: { assetnum: 'CRUDPROPS2', siteid: facts.site, description: 'Answered in part' },
    });
    assert.equal(some.statusCode, 201, some.body);
    const partial = json(some);
    assert.equal(partial.assetnum, 'CRUDPROPS2');
    assert.equal(partial.description, 'Answered in part');
    assert.equal(partial.siteid, undefined, 'only the named properties are answered');

    const patched = await t.app.inject({
      method: 'POST',
      url: `${String(some.headers.location)}?lean=1`,
      headers: { ...admin, 'x-method-override': 'PATCH', properties: 'description' },
      payload: { description: 'Changed and answered' },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(json(patched).description, 'Changed and answered');
  });

  test('a user created through MXAPIPERUSER logs in with maxauth; the password is stored hashed', async () => {
    const password = 'fresh-user-pw-42';
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiperuser',
      headers: admin,
      payload: {
        personid: 'CRUDLOGIN',
        displayname: 'Crud Login',
        maxuser: [{ userid: 'CRUDLOGIN', password, groupuser: [{ groupname: 'VIEWER' }] }],
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const row = await db
      .selectFrom('maxuser')
      .select('password')
      .where('userid', '=', 'CRUDLOGIN')
      .executeTakeFirstOrThrow();
    assert.equal(typeof row.password, 'string');
    assert.notEqual(row.password, password);
    assert.ok(!String(row.password).includes(password), 'the stored value does not contain the password');

    const resource = json(await getResource(t, `${String(created.headers.location)}?lean=1`));
    const users = resource.maxuser as Json[];
    assert.equal(users.length, 1);
    assert.equal(users[0]!.password, undefined, 'the password is never answered');

    const credentials = { maxauth: Buffer.from(`CRUDLOGIN:${password}`).toString('base64') };
    const asNewUser = await t.app.inject({
      url: '/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=1',
      headers: credentials,
    });
    assert.equal(asNewUser.statusCode, 200, asNewUser.body);
    const lowerCase = { maxauth: Buffer.from(`crudlogin:${password}`).toString('base64') };
    assert.equal(
      (await t.app.inject({ url: '/maximo/oslc/os/mxapiasset?lean=1&oslc.pageSize=1', headers: lowerCase }))
        .statusCode,
      200,
    );
    const wrong = { maxauth: Buffer.from('CRUDLOGIN:not-the-password').toString('base64') };
    const refused = await t.app.inject({ url: '/maximo/oslc/os/mxapiasset?lean=1', headers: wrong });
    assert.equal(refused.statusCode, 401);
    assert.equal(json(refused).Error?.reasonCode, 'BMXAA7901E');
    // VIEWER reads assets but cannot create them: the new user got the group's rights, no more.
    const insert = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset',
      headers: credentials,
      payload: { assetnum: 'CRUDNOPE', siteid: facts.site },
    });
    assert.equal(insert.statusCode, 400);
    assert.equal(json(insert).Error?.reasonCode, 'BMXAA9301E');
  });
});

async function synonymValue(
  db: Kysely<DynamicDatabase>,
  domainid: string,
  maxvalue: string,
): Promise<string> {
  const row = await db
    .selectFrom('synonymdomain')
    .select('value')
    .where('domainid', '=', domainid)
    .where('maxvalue', '=', maxvalue)
    .where('defaults', '=', true)
    .executeTakeFirstOrThrow();
  return String(row.value);
}

async function countRows(
  db: Kysely<DynamicDatabase>,
  table: string,
  where?: readonly [string, string],
): Promise<number> {
  let query = db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
  if (where) query = query.where(where[0], '=', where[1]);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

function getResource(t: TestApp, url: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ url, headers: admin });
}

async function assertGone(t: TestApp, url: string, structure: string): Promise<void> {
  const response = await getResource(t, url);
  assert.equal(response.statusCode, 404, `${url} is gone`);
  const error = json(response).Error;
  assert.equal(error?.reasonCode, 'BMXAA8727E');
  assert.equal(error?.statusCode, '404');
  assert.match(String(error?.message), new RegExp(`OSLC resource ${structure} with the ID`));
}

/** Children of a child collection (or a grandchild, through the first entry of each level) as answered. */
function childValues(resource: Json, path: readonly string[], attribute: string): string[] {
  let rows: Json[] = [resource];
  for (const name of path) rows = rows.flatMap((row) => (row[name] as Json[] | undefined) ?? []);
  return rows.map((row) => String(row[attribute])).sort();
}

async function checkChildWrites(
  t: TestApp,
  db: Kysely<DynamicDatabase>,
  location: string,
  child: ChildCase,
): Promise<void> {
  const parentValue = child.parentValue;
  const storedChildren = async () =>
    (await db.selectFrom(child.table).select(child.distinct).where(child.column, '=', parentValue).execute())
      .map((row) => String(row[child.distinct]))
      .sort();
  const readChildren = async () =>
    childValues(json(await getResource(t, `${location}?lean=1`)), child.path, child.distinct);

  assert.deepEqual(await readChildren(), [...child.created].sort(), 'children are created with the parent');
  assert.deepEqual(await storedChildren(), [...child.created].sort());

  const merged = await t.app.inject({
    method: 'POST',
    url: location,
    headers: { ...admin, 'x-method-override': 'PATCH', patchtype: 'MERGE' },
    payload: child.mergeBody,
  });
  assert.equal(merged.statusCode, 204, merged.body);
  const afterMerge = [...child.created, child.added].sort();
  assert.deepEqual(await readChildren(), afterMerge, 'MERGE adds the child and keeps the others');
  assert.deepEqual(await storedChildren(), afterMerge);

  const replaced = await t.app.inject({
    method: 'POST',
    url: location,
    headers: { ...admin, 'x-method-override': 'PATCH' },
    payload: child.replaceBody,
  });
  assert.equal(replaced.statusCode, 204, replaced.body);
  assert.deepEqual(await readChildren(), [...child.replaced].sort(), 'a plain PATCH replaces the collection');
  assert.deepEqual(await storedChildren(), [...child.replaced].sort());
}
