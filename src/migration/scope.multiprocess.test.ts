import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startServer, stopServersAndDropSchema, type ServerProcess } from '../../test/helpers/processes.js';

/**
 * A package carrying a system property and a group's rights, deployed on one process of a target deployment of two:
 * the other process applies the property and the rights without a restart, from the notifications the deploy's
 * transaction sent (docs/migration.md, "What migrates"). Real processes on PostgreSQL: without
 * EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'migscope-admin-pw';
const DEMO_PASSWORD = 'migscope-demo-pw';
const MASTER_KEY = 'migscope-multiprocess-master-key-0123456789';
const header = (userid: string, password: string) => ({
  maxauth: Buffer.from(`${userid}:${password}`).toString('base64'),
});
const admin = header('MAXADMIN', ADMIN_PASSWORD);
const wilson = header('WILSON', DEMO_PASSWORD);

async function call(
  server: ServerProcess,
  path: string,
  body?: unknown,
  headers: Record<string, string> = admin,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.base}/oslc${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** Polls until `check` holds (a live refresh is bound to a second; a few more are allowed on a busy machine). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(what);
}

if (url) {
  describe('properties and rights deployed on one process reach the other processes of the target', () => {
    const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
    const sourceSchema = `eas_test_scope_src_${suffix}`;
    const targetSchema = `eas_test_scope_trg_${suffix}`;
    const settings = (name: string, schema: string) => ({
      name,
      databaseUrl: url,
      schema,
      adminPassword: ADMIN_PASSWORD,
      env: { EAS_DEMO: '1', EAS_DEMO_PASSWORD: DEMO_PASSWORD, EAS_MASTER_KEY: MASTER_KEY },
    });
    let source: ServerProcess | undefined;
    let deploying: ServerProcess | undefined;
    let other: ServerProcess | undefined;

    before(async () => {
      [source, deploying] = await Promise.all([
        startServer(settings('SOURCE', sourceSchema)),
        startServer(settings('TARGETA', targetSchema)),
      ]);
      other = await startServer(settings('TARGETB', targetSchema));
    });
    after(async () => {
      await stopServersAndDropSchema([source], url, sourceSchema);
      await stopServersAndDropSchema([deploying, other], url, targetSchema);
    });

    test('the other process applies the property and the rights', async () => {
      const property = '/service/system?action=wsmethod:getProperty&propName=mxe.oslc.maxpagesize';
      const set = await call(source!, '/service/system?action=wsmethod:setProperty', {
        propName: 'mxe.oslc.maxpagesize',
        serverName: 'COMMON',
        propValue: '321',
      });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      const group = await call(source!, '/os/mxapigroup?lean=1', {
        groupname: 'MIGGRP',
        groupuser: [{ userid: 'WILSON' }],
        osauth: [{ objectstructure: 'MXAPIPERSON', canread: true }],
      });
      assert.equal(group.status, 201, JSON.stringify(group.body));
      const bare = await call(deploying!, '/os/mxapigroup?lean=1', {
        groupname: 'MIGGRP',
        groupuser: [{ userid: 'WILSON' }],
      });
      assert.equal(bare.status, 201, JSON.stringify(bare.body));
      // The other process holds the property and WILSON's profile before the deploy.
      assert.equal((await call(other!, property)).body.return, '1000');
      const people = '/os/mxapiperson?lean=1&oslc.select=personid&oslc.pageSize=1';
      const refused = await call(other!, people, undefined, wilson);
      assert.equal((refused.body.Error as { reasonCode?: string } | undefined)?.reasonCode, 'BMXAA9301E');

      const defined = await call(source!, '/os/mxapidmpkgdef?lean=1', {
        pkgdefname: 'TESTSCOPE',
        type: 'SNAPSHOT',
        status: 'APPR',
        dmpkgdefcontent: [
          {
            objectstructure: 'MXAPIPROPERTY',
            whereclause: 'propname="mxe.oslc.maxpagesize"',
            cfgdataorder: 1,
          },
          { objectstructure: 'MXAPIGROUP', whereclause: 'groupname="MIGGRP"', cfgdataorder: 2 },
        ],
        dmpkgdsttrgt: [
          { targetname: 'TARGETDB', type: 'DATABASE', url, schemaname: targetSchema, password: 'not-needed' },
        ],
      });
      assert.equal(defined.status, 201, JSON.stringify(defined.body));
      const created = await call(source!, '/dm/create', { pkgdefname: 'TESTSCOPE' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const distributed = await call(source!, '/dm/distribute', {
        pkgdefname: 'TESTSCOPE',
        dmpackageid: created.body.dmpackageid,
      });
      assert.equal(distributed.status, 200, JSON.stringify(distributed.body));
      const match = /as package (\d+)/.exec(String(distributed.body.distributionmessage));
      assert.ok(match, String(distributed.body.distributionmessage));
      const deployed = await call(deploying!, '/dm/deploy', {
        pkgdefname: 'TESTSCOPE',
        dmpackageid: Number(match[1]),
      });
      assert.equal(deployed.status, 200, JSON.stringify(deployed.body));

      assert.equal((await call(deploying!, property)).body.return, '321');
      await eventually('the other process applies the property', async () => {
        return (await call(other!, property)).body.return === '321';
      });
      await eventually('the other process drops the cached rights', async () => {
        return (await call(other!, people, undefined, wilson)).status === 200;
      });
    });
  });
}
