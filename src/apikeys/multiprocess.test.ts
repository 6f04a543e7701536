import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  startServer,
  stopServersAndDropSchema,
  whileStopped,
  type ServerProcess,
} from '../../test/helpers/processes.js';

/**
 * API keys across two real server processes (`src/server.ts`) on one PostgreSQL schema: a key revoked on one is
 * refused on the other at once (the change is answered once every process dropped it), and no key value reaches
 * either server's log. PGlite is one process by design, so without EAS_TEST_DATABASE_URL this file registers
 * nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'apikey-multiprocess-pw';
const MASTER_KEY = 'apikey-multiprocess-master-key-0123456789';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };

if (url) {
  describe('API keys across two server processes', () => {
    const schema = `eas_test_apikey_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;
    const usedKeys: string[] = [];

    before(async () => {
      // One after the other: the first creates the schema, migrates it and creates the administrator.
      const settings = {
        databaseUrl: url,
        schema,
        adminPassword: ADMIN_PASSWORD,
        env: { EAS_MASTER_KEY: MASTER_KEY, EAS_LOG_LEVEL: 'info' },
      };
      first = await startServer({ name: 'KEYA', ...settings });
      second = await startServer({ name: 'KEYB', ...settings });
    });
    after(() => stopServersAndDropSchema([first, second], url, schema));

    async function create(base: string): Promise<string> {
      const response = await fetch(`${base}/oslc/apitoken/create`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: '{"expiration": -1}',
      });
      assert.equal(response.status, 200);
      const { apikey } = (await response.json()) as { apikey: string };
      usedKeys.push(apikey);
      return apikey;
    }

    const whoami = (base: string, apikey: string) => fetch(`${base}/oslc/whoami`, { headers: { apikey } });

    test('a key revoked on one process is refused on the other at once', async () => {
      const apikey = await create(first.base);
      // Both processes verify (and cache) the key, by header and by query parameter.
      assert.equal((await whoami(first.base, apikey)).status, 200);
      assert.equal((await whoami(second.base, apikey)).status, 200);
      assert.equal((await fetch(`${second.base}/oslc/whoami?apikey=${apikey}`)).status, 200);

      const revoked = await fetch(`${first.base}/oslc/apitoken/revoke`, { method: 'POST', headers: admin });
      assert.equal(revoked.status, 200);
      assert.equal(
        (await whoami(second.base, apikey)).status,
        400,
        'the other process refuses the revoked key',
      );
      assert.equal((await fetch(`${second.base}/oslc/whoami?apikey=${apikey}`)).status, 400);
    });

    test('a revocation is answered only once a process that hears it late has dropped the key', async () => {
      const apikey = await create(first.base);
      assert.equal(
        (await whoami(second.base, apikey)).status,
        200,
        'the second process holds the key in memory',
      );
      const { response: revoked, afterResume } = await whileStopped(second, 500, () =>
        fetch(`${first.base}/oslc/apitoken/revoke`, { method: 'POST', headers: admin }),
      );
      assert.equal(revoked.status, 200);
      await revoked.arrayBuffer();
      assert.ok(afterResume, 'answered after the stopped process resumed');
      assert.equal((await whoami(second.base, apikey)).status, 400);
    });

    test('a key regenerated on one process: the old value is refused on the other at once', async () => {
      const old = await create(second.base);
      assert.equal((await whoami(first.base, old)).status, 200);
      const fresh = await create(second.base);
      assert.equal((await whoami(first.base, old)).status, 400);
      assert.equal((await fetch(`${first.base}/api/whoami?apikey=${fresh}&lean=1`)).status, 200);
    });

    test('no key value appears in either server log', async () => {
      assert.ok(usedKeys.length >= 3);
      const logs = first.output() + second.output();
      assert.match(logs, /incoming request|request completed/, 'the request log was written');
      for (const apikey of usedKeys) assert.ok(!logs.includes(apikey), 'a key value is in the server log');
    });
  });
}
