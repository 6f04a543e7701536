import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ADMIN_GROUP, ensureAdministrator } from '../auth/bootstrap.js';
import { hashPassword } from '../auth/password.js';
import { migrateToLatest, openStorage, type Storage } from '../db/database.js';
import { migrations } from '../db/migrations/index.js';
import { tableDigests, type TableDigests } from '../../test/helpers/table-digest.js';
import { deploymentIdentity } from '../system/deployment-identity.js';
import { seedDemoData } from './seed.js';
import expectedTables from './seeded-tables.json' with { type: 'json' };

// PGlite in memory by default; EAS_TEST_DATABASE_URL runs the same checks on a PostgreSQL server in a fresh schema.
const url = process.env.EAS_TEST_DATABASE_URL;
const schema = `seedtest_${process.pid}`;

const TABLES = [
  'organization',
  'site',
  'person',
  'maxuser',
  'maxgroup',
  'groupuser',
  'osauth',
  'maxdomain',
  'alndomain',
  'numericdomain',
  'synonymdomain',
  'tabledomain',
  'locations',
  'item',
  'asset',
  'workorder',
  'ticket',
];

describe(`demo data on ${url ? 'PostgreSQL' : 'PGlite'}`, () => {
  let storage: Storage;
  let passwordHash: string;
  let identity: string;
  /** Before anything was written: every date from then on is the test's own. */
  let since: Date;

  async function scalar(query: string): Promise<number> {
    const { rows } = await sql.raw<{ n: number }>(query).execute(storage.db);
    const n = rows[0]?.n;
    assert.equal(typeof n, 'number', query);
    return Number(n);
  }

  async function snapshot(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of TABLES) counts[table] = await scalar(`select count(*)::int as n from ${table}`);
    // Any insert or update, even one rolled back or skipped on conflict, draws a rowstamp.
    counts.rowstamp = await scalar(`select last_value::int as n from rowstamp_seq`);
    return counts;
  }

  before(async () => {
    since = new Date();
    storage = await openStorage(url ? { kind: 'postgres', url, schema } : { kind: 'pglite' });
    assert.deepEqual(
      await migrateToLatest(storage),
      migrations.map((migration) => migration.name),
    );
    passwordHash = await hashPassword('demo-password');
    // As the server does before it seeds: the deployment's identity, which the demo definitions name.
    identity = (await deploymentIdentity(storage.db)).source;
  });

  after(async () => {
    if (url) await sql.raw(`drop schema "${schema}" cascade`).execute(storage.db);
    await storage.close();
  });

  it('gives every value row of the system domains its valueid', async () => {
    for (const table of ['alndomain', 'numericdomain', 'synonymdomain']) {
      const misnamed = await scalar(
        `select count(*)::int as n from ${table}
         where siteid is not null or orgid is not null
            or valueid is distinct from domainid || '|' || ${table === 'numericdomain' ? 'trim_scale(value)::text' : 'value'}`,
      );
      assert.equal(misnamed, 0, table);
    }
    assert.equal(await scalar(`select count(*)::int as n from maxdomain where description is null`), 0);
    assert.equal(
      await scalar(`select count(*)::int as n from tabledomain where domainid = 'LOCATIONLIST'`),
      1,
    );
  });

  it('creates the administrator once', async () => {
    assert.equal(await ensureAdministrator(storage.db, passwordHash), true);
    const before = await snapshot();
    assert.equal(await ensureAdministrator(storage.db, passwordHash), false);
    assert.deepEqual(await snapshot(), before);

    const admin = await storage.db
      .selectFrom('maxuser')
      .innerJoin('groupuser', 'groupuser.userid', 'maxuser.userid')
      .innerJoin('maxgroup', 'maxgroup.groupname', 'groupuser.groupname')
      .select([
        'maxuser.status',
        'maxuser.password',
        'maxuser.sysuser',
        'maxgroup.groupname',
        'maxgroup.authallsites',
      ])
      .where('maxuser.userid', '=', 'MAXADMIN')
      .execute();
    assert.deepEqual(admin, [
      { status: 'ACTIVE', password: passwordHash, sysuser: true, groupname: ADMIN_GROUP, authallsites: true },
    ]);
    assert.equal(await scalar(`select count(*)::int as n from osauth`), 0);
  });

  /** The tables with their values, but for the password hashes (salted) and the definitions' source (the database). */
  const digests = (): Promise<TableDigests> =>
    tableDigests(storage.db, {
      since,
      varying: [
        { table: 'maxuser', column: 'password' },
        { table: 'dmpackagedef', column: 'source' },
      ],
    });

  it('seeds the demo organization', async () => {
    const before = await digests();
    const summary = await seedDemoData(storage, { passwordHash });
    // seeded-tables.json holds what the demo data's first generator wrote, taken once from its database: the
    // tables the seeding changed, each with its row count and a digest of its rows. A deliberate change of the demo
    // records changes them: take the new figures from this assertion's failure.
    const after = await digests();
    const changed = Object.fromEntries(
      Object.entries(after).filter(
        ([table, digest]) => JSON.stringify(before[table]) !== JSON.stringify(digest),
      ),
    );
    assert.deepEqual(changed, expectedTables);
    assert.ok(summary.assets >= 200, `assets: ${summary.assets}`);
    assert.deepEqual(
      { ...summary, assets: 0 },
      {
        organizations: 1,
        sites: 2,
        locations: 50,
        assets: 0,
        items: 100,
        workOrders: 108,
        tasks: 28,
        serviceRequests: 30,
        statusHistory: 136 + 30 + summary.assets,
        assetMeters: 20,
        assetSpecs: 40,
        persons: 2,
        users: 2,
        groups: 2,
        groupMembers: 2,
        groupRights: 14,
      },
    );
    assert.equal(await scalar(`select count(*)::int as n from asset`), summary.assets);
    assert.equal(await scalar(`select count(*)::int as n from locations`), 50);
    assert.equal(await scalar(`select count(*)::int as n from item`), 100);
    assert.equal(await scalar(`select count(*)::int as n from workorder`), 136);
    assert.equal(
      await scalar(`select count(*)::int as n from workorder where istask and parent is not null`),
      28,
    );
  });

  it('leaves the planner statistics of the seeded tables, with their row counts', async () => {
    // Seeded by the test before: the statistics are those the seeding took (never analyzed: -1).
    const { rows } = await sql<{ relname: string; reltuples: number }>`
      select relname, reltuples::float8 as reltuples from pg_class
       where relnamespace = to_regnamespace(current_schema())::oid and relname in ('asset', 'workorder', 'locations')
       order by relname`.execute(storage.db);
    assert.deepEqual(Object.fromEntries(rows.map((row) => [row.relname, Number(row.reltuples)])), {
      asset: await scalar(`select count(*)::int as n from asset`),
      locations: 50,
      workorder: 136,
    });
  });

  it('uses only internal values of the synonym domains', async () => {
    const bindings = [
      ['asset', 'status', 'LOCASSETSTATUS'],
      ['locations', 'status', 'LOCASSETSTATUS'],
      ['locations', 'type', 'LOCTYPE'],
      ['workorder', 'status', 'WOSTATUS'],
      ['ticket', 'status', 'SRSTATUS'],
      ['item', 'status', 'ITEMSTATUS'],
      ['maxuser', 'status', 'MAXUSERSTATUS'],
      ['person', 'status', 'PERSONSTATUS'],
    ];
    for (const [table, column, domain] of bindings) {
      const invalid = await scalar(
        `select count(*)::int as n from ${table} t
         where not exists (select 1 from synonymdomain s
                           where s.domainid = '${domain}' and s.value = t.${column} and s.maxvalue = t.${column})`,
      );
      assert.equal(invalid, 0, `${table}.${column}`);
    }
    const spread = await scalar(`select count(distinct status)::int as n from asset`);
    assert.equal(spread, 3);
    const operating = await scalar(`select count(*)::int as n from asset where status = 'OPERATING'`);
    assert.ok(operating > (await scalar(`select count(*)::int as n from asset`)) / 2);
    assert.ok((await scalar(`select count(distinct status)::int as n from workorder`)) >= 6);
  });

  it('uses only values of the ALN domains', async () => {
    const bindings = [
      ['asset', 'assettype', 'ASSETTYPE'],
      ['workorder', 'worktype', 'WORKTYPE'],
      ['item', 'commoditygroup', 'COMMODITYGROUP'],
    ];
    for (const [table, column, domain] of bindings) {
      const invalid = await scalar(
        `select count(*)::int as n from ${table} t
         where t.${column} is not null
           and not exists (select 1 from alndomain a where a.domainid = '${domain}' and a.value = t.${column})`,
      );
      assert.equal(invalid, 0, `${table}.${column}`);
    }
  });

  it('keeps hierarchies and references within one site', async () => {
    assert.equal(
      await scalar(
        `select count(*)::int as n from locations l where l.parent is not null
         and not exists (select 1 from locations p where p.location = l.parent and p.siteid = l.siteid)`,
      ),
      0,
    );
    assert.equal(await scalar(`select count(*)::int as n from locations where parent is null`), 2);
    assert.ok((await scalar(`select count(*)::int as n from locations where type = 'STOREROOM'`)) >= 2);
    assert.ok((await scalar(`select count(*)::int as n from asset where parent is not null`)) > 0);
    assert.equal(
      await scalar(
        `select count(*)::int as n from asset a where a.parent is not null
         and not exists (select 1 from asset p where p.assetnum = a.parent and p.siteid = a.siteid)`,
      ),
      0,
    );
    assert.equal(
      await scalar(
        `select count(*)::int as n from workorder w join asset a on a.assetnum = w.assetnum and a.siteid = w.siteid
         where a.location is distinct from w.location`,
      ),
      0,
    );
    assert.equal(await scalar(`select count(*)::int as n from workorder where location is null`), 0);
    // Projects: a work order whose child work orders have tasks of their own (three levels).
    assert.equal(
      await scalar(
        `select count(distinct p.siteid)::int as n from workorder p
         join workorder c on c.parent = p.wonum and c.siteid = p.siteid and not c.istask
         join workorder t on t.parent = c.wonum and t.siteid = c.siteid and t.istask`,
      ),
      2,
    );
    assert.equal(
      await scalar(
        `select count(*)::int as n from ticket t join asset a on a.assetnum = t.assetnum and a.siteid = t.siteid
         where a.location is distinct from t.location`,
      ),
      0,
    );
    assert.equal(await scalar(`select count(distinct ticketid)::int as n from ticket`), 15);
    assert.equal(
      await scalar(
        `select count(*)::int as n from autokey where autokeyname = 'TICKETID' and siteid is not null`,
      ),
      2,
    );
  });

  it('grants the demo groups their rights and nothing on people or groups', async () => {
    const rights = await storage.db
      .selectFrom('osauth')
      .select(['groupname', 'objectstructure', 'canread', 'caninsert', 'canupdate', 'candelete'])
      .orderBy('groupname')
      .orderBy('objectstructure')
      .execute();
    assert.equal(rights.filter((right) => right.groupname === 'MAINT').length, 8);
    assert.equal(rights.filter((right) => right.groupname === 'VIEWER').length, 6);
    assert.ok(rights.every((right) => right.canread));
    assert.ok(
      rights
        .filter((right) => right.groupname === 'VIEWER')
        .every((right) => !right.caninsert && !right.canupdate && !right.candelete),
    );
    assert.ok(
      !rights.some((right) =>
        ['MXAPIPERUSER', 'MXAPIGROUP', 'MASPERUSER', 'MXAPIPERSON'].includes(right.objectstructure),
      ),
    );
    const members = await storage.db
      .selectFrom('groupuser')
      .select(['groupname', 'userid'])
      .orderBy('userid')
      .execute();
    assert.deepEqual(members, [
      { groupname: ADMIN_GROUP, userid: 'MAXADMIN' },
      { groupname: 'VIEWER', userid: 'SMITH' },
      { groupname: 'MAINT', userid: 'WILSON' },
    ]);
    const users = await storage.db
      .selectFrom('maxuser')
      .select(['userid', 'password', 'defsite'])
      .where('userid', '!=', 'MAXADMIN')
      .execute();
    assert.ok(users.every((user) => user.password === passwordHash && user.defsite === 'BEDFORD'));
  });

  it("names the deployment's own identity as the demo definitions' source", async () => {
    const sources = await storage.db.selectFrom('dmpackagedef').select('source').distinct().execute();
    assert.deepEqual(
      sources.map((row) => row.source),
      [identity],
    );
  });

  it('changes nothing when seeded again', async () => {
    const before = await snapshot();
    const summary = await seedDemoData(storage, { passwordHash });
    assert.ok(Object.values(summary).every((count) => count === 0));
    assert.deepEqual(await snapshot(), before);
  });
});
