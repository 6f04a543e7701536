import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import {
  startServer,
  stopServer,
  stopServersAndDropSchema,
  type ServerProcess,
} from '../../test/helpers/processes.js';

/**
 * Two deployments as real server processes, each on its own PostgreSQL schema: a package distributed to a DATABASE
 * target and deployed there, and a target killed (SIGKILL) in the middle of a deploy. The DATABASE target needs a
 * database reachable by URL, so without EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'migration-admin-pw';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
const MASTER_KEY = 'migration-multiprocess-master-key-0123456789';
const BULK_ITEMS = 4000;

async function call(
  server: ServerProcess,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.base}/oslc${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...admin, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function scalar(client: pg.Client, schema: string, query: string): Promise<number> {
  const result = await client.query<{ n: number }>(query.replaceAll('$schema', `"${schema}"`));
  return Number(result.rows[0]!.n);
}

if (url) {
  describe('migration packages between two server processes, each on its own schema', () => {
    const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
    const sourceSchema = `eas_test_mig_src_${suffix}`;
    const targetSchema = `eas_test_mig_trg_${suffix}`;
    const settings = (name: string, schema: string) => ({
      name,
      databaseUrl: url,
      schema,
      adminPassword: ADMIN_PASSWORD,
      env: { EAS_DEMO: '1', EAS_DEMO_PASSWORD: 'migration-demo-pw', EAS_MASTER_KEY: MASTER_KEY },
    });
    let source: ServerProcess | undefined;
    let target: ServerProcess | undefined;
    const client = new pg.Client({ connectionString: url });

    before(async () => {
      await client.connect();
      [source, target] = await Promise.all([
        startServer(settings('SOURCE', sourceSchema)),
        startServer(settings('TARGET', targetSchema)),
      ]);
      // Many records, so that a deploy lasts long enough to be interrupted (the rowstamp trigger names its sequence
      // unqualified: the schema's own).
      await client.query(`set search_path to "${sourceSchema}"`);
      await client.query(
        `insert into "${sourceSchema}".item (itemnum, itemsetid, description, status)
         select 'BULK' || lpad(n::text, 5, '0'), 'SET1', 'Bulk item ' || n, 'ACTIVE' from generate_series(1, ${BULK_ITEMS}) as n`,
      );
    });
    after(async () => {
      await stopServersAndDropSchema([source], url, sourceSchema);
      await stopServersAndDropSchema([target], url, targetSchema);
      await client.end();
    });

    test('DATABASE target: create, distribute, deploy; a SIGKILL mid-deploy leaves nothing and the deploy runs again', async () => {
      const defined = await call(source!, '/os/mxapidmpkgdef?lean=1', {
        pkgdefname: 'TESTDB',
        type: 'SNAPSHOT',
        status: 'APPR',
        batchsize: 1000,
        dmpkgdefcontent: [{ objectstructure: 'MXAPIITEM', cfgdataorder: 1 }],
        dmpkgdsttrgt: [
          { targetname: 'TARGETDB', type: 'DATABASE', url, schemaname: targetSchema, password: 'not-needed' },
        ],
      });
      assert.equal(defined.status, 201, JSON.stringify(defined.body));
      const stored = await client.query<{ password: string }>(
        `select password from "${sourceSchema}".dmpkgdsttrgt where targetname = 'TARGETDB'`,
      );
      assert.match(stored.rows[0]!.password, /^v1:/, 'the password is sealed at rest');

      const created = await call(source!, '/dm/create', { pkgdefname: 'TESTDB', readme: 'to the database' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const distributed = await call(source!, '/dm/distribute', {
        pkgdefname: 'TESTDB',
        dmpackageid: created.body.dmpackageid,
        targetname: 'TARGETDB',
      });
      assert.equal(distributed.status, 200, JSON.stringify(distributed.body));
      const match = /as package (\d+)/.exec(String(distributed.body.distributionmessage));
      assert.ok(match, String(distributed.body.distributionmessage));
      const dmpackageid = Number(match[1]);
      const itemsOnTarget = `select count(*)::int as n from $schema.item where itemnum like 'BULK%'`;
      assert.equal(await scalar(client, targetSchema, itemsOnTarget), 0);

      // Deploy, and kill the target while the deploy's transaction is open.
      const deploying = call(target!, '/dm/deploy', { pkgdefname: 'TESTDB', dmpackageid }).catch(
        () => undefined,
      );
      for (let attempt = 0; ; attempt += 1) {
        const status = await client.query<{ status: string }>(
          `select status from "${targetSchema}".dmpackage where dmpackageid = $1`,
          [dmpackageid],
        );
        if (status.rows[0]?.status === 'DEPLOY_INPROGRESS') break;
        assert.ok(attempt < 400, 'the deploy did not start');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      target!.child.kill('SIGKILL');
      await deploying;
      await stopServer(target!);
      assert.equal(
        await scalar(client, targetSchema, itemsOnTarget),
        0,
        'nothing of the package after the kill',
      );

      target = await startServer(settings('TARGET', targetSchema));
      const deployed = await call(target, '/dm/deploy', { pkgdefname: 'TESTDB', dmpackageid });
      assert.equal(deployed.status, 200, JSON.stringify(deployed.body));
      assert.match(String(deployed.body.warningmsg), /deployed/);
      assert.equal(await scalar(client, targetSchema, itemsOnTarget), BULK_ITEMS);
      const differing = await scalar(
        client,
        targetSchema,
        `select count(*)::int as n from (
           (select itemnum, itemsetid, description, status from "${sourceSchema}".item
            except select itemnum, itemsetid, description, status from $schema.item)
           union all
           (select itemnum, itemsetid, description, status from $schema.item
            except select itemnum, itemsetid, description, status from "${sourceSchema}".item)) as d`,
      );
      assert.equal(differing, 0, 'the target rows equal the source rows');
    });
  });
}
