import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { startServer, stopServer, type ServerProcess } from '../../test/helpers/processes.js';

/**
 * The PostgreSQL backup docs/operations.md ("Backup and restore") prescribes: `pg_dump` of the schema while the
 * server runs, `pg_restore` into a schema that does not exist yet, and a new server on it that answers the
 * original's API keys, sessions and records. Without EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;
const run = promisify(execFile);
const ADMIN_PASSWORD = 'pgdump-admin-pw';
const MASTER_KEY = 'pgdump-test-master-key-0123456789abcdef';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };

async function query(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

if (url) {
  describe('pg_dump and pg_restore of the schema', () => {
    const schema = `eas_test_pgdump_${process.pid}_${randomBytes(3).toString('hex')}`;
    const original = `${schema}_orig`;
    const servers: ServerProcess[] = [];
    let work: string | undefined;

    after(async () => {
      for (const server of servers) await stopServer(server);
      await query(`drop schema if exists "${schema}" cascade; drop schema if exists "${original}" cascade`);
      if (work) await rm(work, { recursive: true, force: true });
    });

    test('the restored schema serves the original API keys, sessions, records and identity', async () => {
      const settings = {
        databaseUrl: url,
        schema,
        adminPassword: ADMIN_PASSWORD,
        env: { EAS_MASTER_KEY: MASTER_KEY },
      };
      const source = await startServer({ name: 'PGSOURCE', ...settings });
      servers.push(source);
      const created = await fetch(`${source.base}/oslc/apitoken/create`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: '{"expiration": -1}',
      });
      assert.equal(created.status, 200);
      const { apikey } = (await created.json()) as { apikey: string };
      const login = await fetch(`${source.base}/oslc/login`, { method: 'POST', headers: admin });
      assert.equal(login.status, 200);
      const cookie = login.headers
        .getSetCookie()
        .find((line) => line.startsWith('JSESSIONID='))!
        .split(';')[0]!;
      const asset = await fetch(`${source.base}/oslc/os/mxapiasset?lean=1`, {
        method: 'POST',
        headers: { cookie, ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ assetnum: 'PGDUMP-1', siteid: 'BEDFORD', description: 'dumped' }),
      });
      const assetBody = await asset.text();
      const identity = (
        (await (await fetch(`${source.base}/oslc/systeminfo?lean=1`, { headers: admin })).json()) as {
          deployment: { id: string };
        }
      ).deployment.id;

      // While the server runs, as documented.
      work = await mkdtemp(join(tmpdir(), 'eas-pgdump-'));
      const dump = join(work, 'eas.dump');
      await run('pg_dump', [
        '--format=custom',
        `--schema=${schema}`,
        '--no-owner',
        '--no-privileges',
        `--file=${dump}`,
        url!,
      ]);
      await stopServer(source);
      // The original moves aside: the restore makes the schema afresh, under its own name.
      await query(`alter schema "${schema}" rename to "${original}"`);
      await run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', `--dbname=${url!}`, dump]);

      const restored = await startServer({ name: 'PGRESTORED', ...settings });
      servers.push(restored);
      assert.equal(
        (await fetch(`${restored.base}/oslc/whoami`, { headers: { apikey } })).status,
        200,
        'API key',
      );
      const whoami = await fetch(`${restored.base}/oslc/whoami`, { headers: { cookie } });
      assert.equal(whoami.status, 200, 'the session of the original');
      assert.equal(((await whoami.json()) as { userid: string }).userid, 'MAXADMIN');
      const restoredIdentity = (
        (await (await fetch(`${restored.base}/oslc/systeminfo?lean=1`, { headers: admin })).json()) as {
          deployment: { id: string };
        }
      ).deployment.id;
      assert.equal(restoredIdentity, identity);
      if (asset.status === 201) {
        const found = await fetch(
          `${restored.base}/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,description&oslc.where=assetnum="PGDUMP-1"`,
          { headers: admin },
        );
        const members = ((await found.json()) as { member: Array<{ description: string }> }).member;
        assert.equal(members[0]?.description, 'dumped');
      } else assert.fail(`the asset was not created on the source: ${assetBody}`);
    });
  });
}
