import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { countStatements } from '../../../test/helpers/statements.js';
import { FORMAT_VERSION, writePackageFile, type Manifest } from '../transfer/package-file.js';

/**
 * Deploys of packages larger than one batch (src/oslc/batch-writer.ts, docs/migration.md "Deploy: speed"): the
 * records of a chunk are matched and added in batches, with the outcome of writing them one by one, and the package
 * record's progress moves on while the deploy's transaction is open ("Progress").
 */
const admin = maxauth('MAXADMIN');

type AssetLine = Record<string, unknown>;

let packages = 0;

/** A package file of MXAPIASSET records, written as a source would write it. */
async function assetPackage(pkgdefname: string, lines: readonly AssetLine[]): Promise<Buffer> {
  const text = lines.map((line) => `${JSON.stringify(line)}\n`).join('');
  const name = 'data/001-MXAPIASSET.ndjson';
  const manifest: Manifest = {
    formatVersion: FORMAT_VERSION,
    source: 'elsewhere:5432/test/source',
    pkgdefname,
    type: 'SNAPSHOT',
    xmlaction: 'AddChange',
    package: `${pkgdefname}_${++packages}`,
    createby: 'MAXADMIN',
    createdate: new Date().toISOString(),
    entries: [
      {
        name,
        objectstructure: 'MXAPIASSET',
        cfgdataorder: 1,
        count: lines.length,
        bytes: Buffer.byteLength(text),
        sha256: createHash('sha256').update(text).digest('hex'),
      },
    ],
  };
  const chunks: Buffer[] = [];
  const file = writePackageFile(manifest, [
    {
      name,
      lines: async function* () {
        for (const line of lines) yield JSON.stringify(line);
      },
    },
  ]);
  for await (const chunk of file) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function uploadAndDeploy(app: TestApp, pkgdefname: string, file: Buffer) {
  const uploaded = await app.app.inject({
    method: 'POST',
    url: '/maximo/oslc/dm/upload?filename=package.zip',
    headers: { ...admin, 'content-type': 'application/zip' },
    payload: file,
  });
  assert.equal(uploaded.statusCode, 200, uploaded.body);
  const dmpackageid = json(uploaded).dmpackageid as number;
  const deployed = await app.app.inject({
    method: 'POST',
    url: '/maximo/oslc/dm/deploy',
    headers: admin,
    payload: { pkgdefname, dmpackageid },
  });
  return { dmpackageid, deployed };
}

const assetLine = (assetnum: string, extra: AssetLine = {}): AssetLine => ({
  assetnum,
  siteid: 'BEDFORD',
  description: `Asset ${assetnum}`,
  status: 'OPERATING',
  ...extra,
});

async function countRows(app: TestApp, query: ReturnType<typeof sql<{ count: number }>>): Promise<number> {
  const result = await query.execute(app.storage.db);
  return Number(result.rows[0]?.count ?? 0);
}

/** A deploy refused with EAS0165E of MXAPIASSET that left no asset of the package: the error message. */
async function refusedAndNothingKept(
  app: TestApp,
  deployed: Awaited<ReturnType<typeof uploadAndDeploy>>['deployed'],
  prefix: string,
): Promise<string> {
  assert.equal(deployed.statusCode, 400, deployed.body);
  const error = json(deployed).Error!;
  assert.equal(error.reasonCode, 'EAS0165E');
  assert.match(String(error.message), /MXAPIASSET/);
  const kept = await sql<{ count: number }>`
    select count(*)::int as count from asset where assetnum like ${`${prefix}%`}`.execute(app.storage.db);
  assert.equal(kept.rows[0]?.count, 0);
  return String(error.message);
}

describe('batched deploys', () => {
  let target: TestApp;

  before(async () => {
    target = await startTestApp();
  });
  after(async () => {
    await target?.close();
  });

  test('a package of several batches: every record added, with its status history, children and CHANGE tracking', async () => {
    const tracked = await target.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapidmpkgdef?lean=1',
      headers: admin,
      payload: {
        pkgdefname: 'TRACKASSETS',
        type: 'CHANGE',
        status: 'APPR',
        active: true,
        dmpkgdefcontent: [{ objectstructure: 'MXAPIASSET', cfgdataorder: 1 }],
      },
    });
    assert.equal(tracked.statusCode, 201, tracked.body);
    const lines: AssetLine[] = [];
    for (let index = 0; index < 2500; index++) lines.push(assetLine(`BAT${String(index).padStart(5, '0')}`));
    // A later record names an earlier one of the same batch as its parent; another carries a child collection.
    lines[1700] = assetLine('BAT01700', { parent: 'BAT01699' });
    lines[2100] = assetLine('BAT02100', { assetspec: [{ assetattrid: 'ENCLOSURE', alnvalue: 'IP67' }] });
    const { deployed } = await uploadAndDeploy(target, 'BATCHED', await assetPackage('BATCHED', lines));
    assert.equal(deployed.statusCode, 200, deployed.body);
    assert.match(String(json(deployed).warningmsg), /2500 added, 0 changed, 0 unchanged, 0 deleted/);
    assert.equal(
      await countRows(target, sql`select count(*)::int as count from asset where assetnum like 'BAT%'`),
      2500,
    );
    assert.equal(
      await countRows(
        target,
        sql`select count(*)::int as count from assetstatus where assetnum like 'BAT%' and status = 'OPERATING'`,
      ),
      2500,
    );
    // Written by the insert's own statement, each history row is the one a single insert writes (stamps.ts).
    assert.equal(
      await countRows(
        target,
        sql`select count(*)::int as count from assetstatus h join asset a using (assetnum, siteid)
            where a.assetnum like 'BAT%' and h.orgid = a.orgid and h.status = a.status
              and h.changedate = a.statusdate and h.changeby = 'MAXADMIN' and h.memo is null`,
      ),
      2500,
    );
    assert.equal(
      await countRows(
        target,
        sql`select count(*)::int as count from asset where assetnum = 'BAT01700' and parent = 'BAT01699'`,
      ),
      1,
    );
    assert.equal(
      await countRows(
        target,
        sql`select count(*)::int as count from assetspec where assetnum = 'BAT02100' and alnvalue = 'IP67'`,
      ),
      1,
    );
    assert.equal(
      await countRows(
        target,
        sql`select count(distinct keyvalues)::int as count from dmpkgchange where pkgdefname = 'TRACKASSETS' and keyvalues like '["BAT%'`,
      ),
      2500,
    );
    // The change bus heard the written objects: a read through the service sees the new assets at once.
    const read = await target.app.inject({
      method: 'GET',
      url: '/maximo/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,orgid,changeby&oslc.where=assetnum="BAT00042"',
      headers: admin,
    });
    assert.deepEqual(
      json(read).member?.map(({ assetnum, orgid, changeby }) => ({ assetnum, orgid, changeby })),
      [{ assetnum: 'BAT00042', orgid: 'EAGLENA', changeby: 'MAXADMIN' }],
    );
  });

  test('statistics renewed as the table grows, of the columns its rows are looked up by only', async () => {
    // More new rows than the planner knows of (the seeded and earlier tests' assets): the table outgrows them once.
    const planned = await countRows(
      target,
      sql`select greatest(reltuples, 0)::int as count from pg_class where oid = to_regclass('asset')`,
    );
    const lines: AssetLine[] = [];
    for (let index = 0; index < Math.max(1000, planned) + 300; index++)
      lines.push(assetLine(`STA${String(index).padStart(5, '0')}`));
    const { result, statements } = await countStatements(async () =>
      uploadAndDeploy(target, 'STATISTICS', await assetPackage('STATISTICS', lines)),
    );
    assert.equal(result.deployed.statusCode, 200, result.deployed.body);
    const analyzed = statements.filter((text) => /^\s*analyze\b/i.test(text));
    assert.ok(analyzed.length >= 1, 'no ANALYZE during the deploy');
    for (const text of analyzed)
      assert.equal(text.trim(), 'analyze "asset" ("assetnum", "siteid", "assetuid")');
  });

  test('a key sent twice changes the record the first added; a second deploy adds none and leaves equal records alone', async () => {
    const lines = [
      assetLine('TWICE1'),
      assetLine('TWICE2'),
      assetLine('TWICE1', { description: 'Changed by the later line' }),
    ];
    const file = await assetPackage('TWICE', lines);
    const { dmpackageid, deployed } = await uploadAndDeploy(target, 'TWICE', file);
    assert.equal(deployed.statusCode, 200, deployed.body);
    assert.match(String(json(deployed).warningmsg), /2 added, 1 changed, 0 unchanged, 0 deleted/);
    const described = await sql<{ description: string }>`
      select description from asset where assetnum = 'TWICE1'`.execute(target.storage.db);
    assert.deepEqual(described.rows, [{ description: 'Changed by the later line' }]);
    const again = await target.app.inject({
      method: 'POST',
      url: '/maximo/oslc/dm/deploy',
      headers: admin,
      payload: { pkgdefname: 'TWICE', dmpackageid },
    });
    assert.equal(again.statusCode, 200, again.body);
    // TWICE1 differs from its first line, TWICE2 is as stored (left alone: no stamp), TWICE1's second line is read again.
    assert.match(String(json(again).warningmsg), /0 added, 2 changed, 1 unchanged, 0 deleted/);
    const stamps = await sql<{ assetnum: string; changedate: Date }>`
      select assetnum, changedate from asset where assetnum in ('TWICE1', 'TWICE2') order by assetnum`.execute(
      target.storage.db,
    );
    assert.ok(stamps.rows[0]!.changedate > stamps.rows[1]!.changedate, 'the unchanged record kept its stamp');
  });

  test('changes of stored records in multi-row updates: each changed, stamped, its status history written; the rest untouched', async () => {
    const lines: AssetLine[] = [];
    for (let index = 0; index < 600; index++) lines.push(assetLine(`UPD${String(index).padStart(5, '0')}`));
    const first = await uploadAndDeploy(target, 'UPDATES', await assetPackage('UPDATES', lines));
    assert.equal(first.deployed.statusCode, 200, first.deployed.body);
    const stampsOf = async () =>
      new Map(
        (
          await sql<{ assetnum: string; rowstamp: string }>`
            select assetnum, rowstamp::text as rowstamp from asset where assetnum like 'UPD%'`.execute(
            target.storage.db,
          )
        ).rows.map((row) => [row.assetnum, row.rowstamp]),
      );
    const before = await stampsOf();
    // Every other record changes its description; every tenth of those also its status.
    const changed = lines.map((line, index) =>
      index % 2 === 1
        ? { ...line, description: `Changed ${index}`, ...(index % 20 === 1 && { status: 'NOT READY' }) }
        : line,
    );
    const second = await uploadAndDeploy(target, 'UPDATES', await assetPackage('UPDATES', changed));
    assert.equal(second.deployed.statusCode, 200, second.deployed.body);
    assert.match(String(json(second.deployed).warningmsg), /0 added, 300 changed, 300 unchanged, 0 deleted/);
    const after = await stampsOf();
    let moved = 0;
    for (const [assetnum, stamp] of after) if (stamp !== before.get(assetnum)) moved += 1;
    assert.equal(moved, 300, 'the changed records, and only they, took a new rowstamp');
    assert.equal(
      await countRows(
        target,
        sql`select count(*)::int as count from asset where assetnum like 'UPD%' and description like 'Changed %'`,
      ),
      300,
    );
    assert.equal(
      await countRows(
        target,
        sql`select count(*)::int as count from assetstatus where assetnum like 'UPD%' and status = 'NOT READY'`,
      ),
      30,
    );
  });

  test('a record refused after whole batches were written: EAS0165E naming it, nothing of the package kept', async () => {
    const lines: AssetLine[] = [];
    for (let index = 0; index < 2200; index++) lines.push(assetLine(`REF${String(index).padStart(5, '0')}`));
    lines[2150] = assetLine('REF02150', { location: 'NOSUCHPLACE' });
    const { dmpackageid, deployed } = await uploadAndDeploy(
      target,
      'REFUSED',
      await assetPackage('REFUSED', lines),
    );
    assert.match(await refusedAndNothingKept(target, deployed, 'REF'), /assetnum=REF02150, siteid=BEDFORD/);
    assert.match(String(json(deployed).Error?.message), /NOSUCHPLACE/);
    const record = await target.services.migration.record('REFUSED', dmpackageid);
    assert.equal(record.status, 'DEPLOY_ERROR');
  });

  test('a child entry refused after its record was batched: EAS0165E naming the record, nothing kept', async () => {
    const lines: AssetLine[] = [];
    for (let index = 0; index < 600; index++) lines.push(assetLine(`CHI${String(index).padStart(5, '0')}`));
    lines[300] = assetLine('CHI00300', {
      assetspec: [{ assetattrid: 'ENCLOSURE', numvalue: 'not a number' }],
    });
    const { deployed } = await uploadAndDeploy(
      target,
      'CHILDREFUSED',
      await assetPackage('CHILDREFUSED', lines),
    );
    assert.match(await refusedAndNothingKept(target, deployed, 'CHI'), /assetnum=CHI00300, siteid=BEDFORD/);
  });

  test('progressstatus moves on during the deploy, seen by a reader between batches', async () => {
    const lines: AssetLine[] = [];
    for (let index = 0; index < 3500; index++) lines.push(assetLine(`PRG${String(index).padStart(5, '0')}`));
    const file = await assetPackage('PROGRESS', lines);
    const seen: Array<{ status: string; progress: string | null; stored?: string | null }> = [];
    target.services.migration.observeProgress(async (dmpackageid) => {
      const record = await target.services.migration.record('PROGRESS', dmpackageid);
      const reading: (typeof seen)[number] = { status: record.status, progress: record.progressstatus };
      // On PostgreSQL another connection sees the package row itself move on, outside the deploy's transaction.
      if (target.storage.kind === 'postgres') {
        const row = await target.storage.db
          .selectFrom('dmpackage')
          .select('progressstatus')
          .where('dmpackageid', '=', dmpackageid)
          .executeTakeFirstOrThrow();
        reading.stored = row.progressstatus;
      }
      seen.push(reading);
    });
    const { dmpackageid, deployed } = await uploadAndDeploy(target, 'PROGRESS', file);
    assert.equal(deployed.statusCode, 200, deployed.body);
    const expected = [
      'Deploying: 1,000 of 3,500 records',
      'Deploying: 2,000 of 3,500 records',
      'Deploying: 3,000 of 3,500 records',
      'Deploying: 3,500 of 3,500 records',
    ];
    assert.deepEqual(
      seen.map((reading) => reading.progress),
      expected,
    );
    assert.ok(seen.every((reading) => reading.status === 'DEPLOY_INPROGRESS'));
    if (target.storage.kind === 'postgres')
      assert.deepEqual(
        seen.map((reading) => reading.stored),
        expected,
      );
    const done = await target.services.migration.record('PROGRESS', dmpackageid);
    assert.equal(done.status, 'DEPLOYED');
    assert.equal(done.progressstatus, 'Deployed: 3500 added, 0 changed, 0 unchanged, 0 deleted');
  });
});
