import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startServer, stopServersAndDropSchema, type ServerProcess } from '../../test/helpers/processes.js';

/**
 * Two real server processes on one PostgreSQL schema: a `transactionid` used on one is refused on the other, also
 * when both receive it at the same moment; a child written through one is read at its localref through the other.
 * PGlite is one process by design, so without EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'multiprocess-admin-pw';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };

async function createGroup(server: ServerProcess, groupname: string, transactionid: string): Promise<number> {
  const response = await fetch(`${server.base}/oslc/os/mxapigroup`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json', transactionid },
    body: JSON.stringify({ groupname, description: 'Created once' }),
  });
  await response.arrayBuffer();
  return response.status;
}

if (url) {
  describe('writes across two server processes on one PostgreSQL', () => {
    const schema = `eas_test_oslc_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;

    before(async () => {
      // One after the other: the first creates the schema, migrates it and creates the administrator.
      first = await startServer({ name: 'SRVA', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
      second = await startServer({ name: 'SRVB', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
    });

    after(() => stopServersAndDropSchema([first, second], url, schema));

    test('a transactionid sent to both processes at once writes once', async () => {
      for (let round = 0; round < 10; round++) {
        const id = `txn-mp-${round}`;
        const statuses = await Promise.all([
          createGroup(first, `MPA${round}`, id),
          createGroup(second, `MPB${round}`, id),
        ]);
        assert.deepEqual([...statuses].sort(), [201, 409], `round ${round}`);
      }
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ count: string }>(
          `select count(*) as count from "${schema}".maxgroup where groupname like 'MP%'`,
        );
        assert.equal(Number(rows[0]!.count), 10);
      } finally {
        await client.end();
      }
    });

    test('a child added through one process is read and deleted at its localref through the other', async () => {
      assert.equal(await createGroup(first, 'MPCHILD', 'txn-mp-child'), 201);
      const listed = await fetch(
        `${second.base}/api/os/mxapigroup?oslc.select=maxgroupid&oslc.where=groupname="MPCHILD"`,
        {
          headers: admin,
        },
      );
      const id = ((await listed.json()) as { member: Array<{ maxgroupid: number }> }).member[0]!.maxgroupid;
      const added = await fetch(`${first.base}/api/os/mxapigroup/${id}/groupuser`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ userid: 'MAXADMIN' }),
      });
      assert.equal(added.status, 201, await added.text());
      const localref = new URL(String(added.headers.get('location'))).pathname;
      const found = await fetch(
        `${second.base}/api/os/mxapigroup/${id}/groupuser?lean=1&oslc.where=userid="MAXADMIN"`,
        {
          headers: admin,
        },
      );
      const members = ((await found.json()) as { member: Array<{ localref: string }> }).member;
      assert.equal(members.length, 1);
      const path = localref.replace(/^\/maximo/, '');
      const removed = await fetch(`${second.base}${path}`, { method: 'DELETE', headers: admin });
      assert.equal(removed.status, 204, await removed.text());
      const gone = await fetch(`${first.base}${path}`, { headers: admin });
      assert.equal(gone.status, 404);
    });
  });
}
