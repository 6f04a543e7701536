import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startServer, stopServersAndDropSchema, type ServerProcess } from '../../test/helpers/processes.js';

/**
 * Work-order numbers issued by two real server processes (`src/server.ts`) on one PostgreSQL schema at once: the
 * autokey row is shared, so every create gets a number of its own. PGlite is one process by design, so without
 * EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'autokey-admin-pw';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
const CREATES = 200;
const IN_FLIGHT_PER_PROCESS = 8;

async function createWorkOrder(server: ServerProcess, index: number): Promise<string> {
  const response = await fetch(`${server.base}/api/os/mxapiwodetail?lean=1`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json', properties: 'wonum' },
    body: JSON.stringify({ siteid: 'AKSITE', description: `Concurrent create ${index}` }),
  });
  const text = await response.text();
  assert.equal(response.status, 201, text);
  return String((JSON.parse(text) as { wonum: unknown }).wonum);
}

if (url) {
  describe('autokeys across two server processes on one PostgreSQL', () => {
    const schema = `eas_test_autokey_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;

    before(async () => {
      first = await startServer({ name: 'AKA', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
      second = await startServer({ name: 'AKB', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`set search_path to "${schema}"`);
        await client.query(`insert into organization (orgid, itemsetid) values ('AKORG', 'AKSET')`);
        await client.query(`insert into site (siteid, orgid) values ('AKSITE', 'AKORG')`);
      } finally {
        await client.end();
      }
    });

    after(() => stopServersAndDropSchema([first, second], url, schema));

    test(`${CREATES} work-order creates without wonum, from both processes at once: ${CREATES} distinct numbers`, async () => {
      let next = 0;
      const numbers: string[] = [];
      const worker = async (server: ServerProcess) => {
        while (next < CREATES) {
          const index = next++;
          numbers.push(await createWorkOrder(server, index));
        }
      };
      await Promise.all(
        Array.from({ length: IN_FLIGHT_PER_PROCESS * 2 }, (_, lane) =>
          worker(lane % 2 === 0 ? first : second),
        ),
      );
      assert.equal(numbers.length, CREATES);
      assert.equal(new Set(numbers).size, CREATES, 'no number issued twice');
      assert.ok(
        numbers.every((wonum) => /^\d+$/.test(wonum)),
        'numbers of the system autokey row',
      );

      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`set search_path to "${schema}"`);
        const stored = await client.query<{ n: string; distinct: string }>(
          `select count(*) as n, count(distinct wonum) as distinct from workorder where siteid = 'AKSITE'`,
        );
        assert.equal(Number(stored.rows[0]!.n), CREATES);
        assert.equal(Number(stored.rows[0]!.distinct), CREATES);
      } finally {
        await client.end();
      }
    });
  });
}
