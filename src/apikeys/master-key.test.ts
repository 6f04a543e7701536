import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { json, maxauth, testConfig } from '../../test/helpers/app.js';
import { startServer, stopServer } from '../../test/helpers/processes.js';
import { ADMIN_PASSWORD, openTestStorage, TEST_DATABASE_URL } from '../../test/helpers/storage.js';
import { runAdmin } from '../admin/cli.js';
import { buildApp } from '../app.js';
import { ConfigError } from '../config.js';
import type { Storage } from '../db/database.js';

/**
 * The master key's check value: a process whose EAS_MASTER_KEY is not the key that sealed the stored API keys
 * refuses to start, naming the variable, instead of refusing every key silently; `admin reseal-keys` rotates.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const KEY_A = 'master-key-A-0123456789abcdefghijklmnop';
const KEY_B = 'master-key-B-0123456789abcdefghijklmnop';

async function startApp(storage: Storage, masterKey: string) {
  const { app } = await buildApp(testConfig({ EAS_MASTER_KEY: masterKey }), storage);
  await app.ready();
  return app;
}

describe('master key check value and rotation', () => {
  let storage: Storage;
  let apikey = '';
  before(async () => {
    storage = await openTestStorage();
  });
  after(() => storage.close());

  test('the first process records the key; a process with another key refuses to start naming EAS_MASTER_KEY', async () => {
    const app = await startApp(storage, KEY_A);
    const created = await app.inject({
      method: 'POST',
      url: '/maximo/oslc/apitoken/create',
      headers: { ...maxauth('WILSON'), 'content-type': 'application/json' },
      payload: JSON.stringify({ expiration: -1 }),
    });
    assert.equal(created.statusCode, 200, created.body);
    apikey = String(json(created).apikey);
    await app.close();

    await assert.rejects(startApp(storage, KEY_B), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(
        error.message,
        /EAS_MASTER_KEY does not match the master key that sealed the stored API keys/,
      );
      return true;
    });
    const again = await startApp(storage, KEY_A);
    assert.equal((await again.inject({ url: '/maximo/oslc/whoami', headers: { apikey } })).statusCode, 200);
    await again.close();
  });

  test('keys sealed before check values existed: a key that does not open them is refused too', async () => {
    await storage.db.deleteFrom('easkeycheck' as never).execute();
    await assert.rejects(startApp(storage, KEY_B), /EAS_MASTER_KEY/);
    const app = await startApp(storage, KEY_A);
    await app.close();
  });

  test('`admin reseal-keys` re-seals every key under EAS_NEW_MASTER_KEY; the keys keep working', async () => {
    const output: string[] = [];
    const run = (masterKey: string, env: NodeJS.ProcessEnv, argv = ['reseal-keys']) =>
      runAdmin(argv, storage, testConfig({ EAS_MASTER_KEY: masterKey }), {
        out: (text) => void output.push(text),
        err: (text) => void output.push(text),
        env,
      });
    await assert.rejects(run(KEY_A, {}), /EAS_NEW_MASTER_KEY/);
    await assert.rejects(
      run(KEY_B, { EAS_NEW_MASTER_KEY: KEY_A }),
      /EAS_MASTER_KEY/,
      'the current key must be the one in use',
    );
    const verify = (masterKey: string) => run(masterKey, {}, ['audit', 'verify']);
    assert.equal(await verify(KEY_A), 0, output.join(''));
    const recordsBefore = await auditRecords(storage);
    assert.ok(recordsBefore > 0, 'the key creations and logins above left records');
    assert.equal(await run(KEY_A, { EAS_NEW_MASTER_KEY: KEY_B }), 0);
    assert.match(output.join(''), /Re-sealed 1 API key\(s\) and re-keyed \d+ audit record/);

    // The trail moved with the keys: it verifies under the new key only, and the rotation left its own record.
    output.length = 0;
    assert.equal(await verify(KEY_B), 0, output.join(''));
    assert.match(output.join(''), /The audit trail verifies/);
    assert.equal(await verify(KEY_A), 1, 'the old key no longer makes the MACs');
    assert.equal(await auditRecords(storage), recordsBefore + 1);
    const rotation = await storage.db
      .selectFrom('easaudit')
      .select(['userid', 'authscheme', 'detail', 'chainseq'])
      .where('eventtype', '=', 'masterkey.rotate')
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      { ...rotation, detail: JSON.parse(rotation.detail!) as unknown },
      {
        userid: 'ADMIN-CLI',
        authscheme: 'SHELL',
        detail: { keys: 1, records: recordsBefore },
        chainseq: recordsBefore + 1,
      },
    );

    await assert.rejects(startApp(storage, KEY_A), /EAS_MASTER_KEY/, 'the old key is refused now');
    const app = await startApp(storage, KEY_B);
    const whoami = await app.inject({ url: '/maximo/oslc/whoami', headers: { apikey } });
    assert.equal(whoami.statusCode, 200, whoami.body);
    assert.equal(json(whoami).userid, 'WILSON');
    await app.close();
    // A record the app just wrote is sealed under the new key: the chain goes on.
    output.length = 0;
    assert.equal(await verify(KEY_B), 0, output.join(''));
  });

  test('a trail that does not verify is not re-keyed, and nothing of the rotation is done', async () => {
    const victim = await storage.db
      .selectFrom('easaudit')
      .select('auditid')
      .where('eventtype', '=', 'masterkey.rotate')
      .executeTakeFirstOrThrow();
    await storage.db
      .updateTable('easaudit')
      .set({ userid: 'SOMEONE' })
      .where('auditid', '=', victim.auditid)
      .execute();
    const run = runAdmin(['reseal-keys'], storage, testConfig({ EAS_MASTER_KEY: KEY_B }), {
      out: () => undefined,
      err: () => undefined,
      env: { EAS_NEW_MASTER_KEY: KEY_A },
    });
    await assert.rejects(
      run,
      new RegExp(`audit trail does not verify \\(record ${victim.auditid} .*altered`),
    );
    await assert.rejects(startApp(storage, KEY_A), /EAS_MASTER_KEY/, 'the keys stay under the current key');
    const app = await startApp(storage, KEY_B);
    assert.equal((await app.inject({ url: '/maximo/oslc/whoami', headers: { apikey } })).statusCode, 200);
    await app.close();
  });
});

async function auditRecords(storage: Storage): Promise<number> {
  const row = await storage.db
    .selectFrom('easaudit')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

test('a server process with another EAS_MASTER_KEY exits at start-up naming it', async () => {
  const schema = `eas_masterkey_${process.pid}_${randomBytes(3).toString('hex')}`;
  const dataDir = join(root, '.cache', `masterkey-test-${process.pid}`);
  const settings = (masterKey: string) => ({
    name: 'MASTERKEYTEST',
    databaseUrl: TEST_DATABASE_URL ?? '',
    schema,
    adminPassword: ADMIN_PASSWORD,
    env: {
      EAS_MASTER_KEY: masterKey,
      ...(TEST_DATABASE_URL ? {} : { DATABASE_URL: '', EAS_DB_SCHEMA: '', EAS_DATA_DIR: dataDir }),
    },
  });
  try {
    const first = await startServer(settings(KEY_A));
    await stopServer(first);
    await assert.rejects(startServer(settings(KEY_B)), (error: unknown) => {
      assert.match(String(error), /exited with 1/);
      assert.match(String(error), /EAS_MASTER_KEY does not match/);
      return true;
    });
  } finally {
    if (TEST_DATABASE_URL) {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    } else {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
});
