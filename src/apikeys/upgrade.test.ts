import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { json, testConfig } from '../../test/helpers/app.js';
import { openTestStorage } from '../../test/helpers/storage.js';
import { buildApp } from '../app.js';
import { migrateToLatest, type Storage } from '../db/database.js';
import { apiKeys } from '../db/migrations/0007-apikeys.js';
import { migrations } from '../db/migrations/index.js';

/** Keys as a release before 0007-apikeys stored them: the value itself, in plain text. */
const OLD_KEYS = { WILSON: 'plainwilsonkey0123456789abcdef', SMITH: 'plainsmithkey0123456789abcdefgh' };

/** The table of that release, as its migration created it (no digest, no exposure columns, a short column). */
const OLD_LAYOUT = [
  `drop table apikeytoken`,
  `create table apikeytoken (
     apikeytokenid bigint generated always as identity primary key,
     userid varchar(30) not null unique references maxuser(userid) on delete cascade,
     apikey varchar(64) not null unique,
     expiration integer not null,
     creationdate timestamptz not null,
     clientcert boolean not null default false,
     rowstamp bigint not null)`,
  `create trigger apikeytoken_rowstamp before insert or update on apikeytoken for each row execute function set_rowstamp()`,
];

let storage: Storage;

before(async () => {
  storage = await openTestStorage();
  // Back to the older release: its table and data, and no record of 0007 (nor of any later migration) having run.
  for (const statement of OLD_LAYOUT) await sql.raw(statement).execute(storage.db);
  // Later migrations had not run either (each of them applies again over what it already changed).
  await sql`delete from kysely_migration where name >= ${apiKeys.name}`.execute(storage.db);
  for (const [userid, apikey] of Object.entries(OLD_KEYS)) {
    await sql`insert into apikeytoken (userid, apikey, expiration, creationdate)
              values (${userid}, ${apikey}, -1, now())`.execute(storage.db);
  }
});
after(() => storage.close());

test('a database with plain-text keys is migrated: values sealed, old keys still authenticate', async () => {
  const sinceApiKeys = migrations.slice(migrations.indexOf(apiKeys)).map((migration) => migration.name);
  assert.deepEqual(await migrateToLatest(storage), sinceApiKeys);
  const { app } = await buildApp(
    testConfig({ EAS_MASTER_KEY: 'upgrade-test-master-key-0123456789abcdef' }),
    storage,
  );
  try {
    const db = storage.db;
    const rows = await db.selectFrom('apikeytoken').selectAll().orderBy('userid').execute();
    assert.equal(rows.length, 2);
    for (const row of rows) {
      const plain = OLD_KEYS[row.userid as keyof typeof OLD_KEYS];
      assert.ok(!row.apikey.includes(plain), `${row.userid}'s stored value is no longer the key`);
      assert.match(String(row.apikeydigest), /^[0-9a-f]{64}$/);
    }
    for (const [userid, apikey] of Object.entries(OLD_KEYS)) {
      const whoami = await app.inject({ url: '/maximo/oslc/whoami', headers: { apikey } });
      assert.equal(whoami.statusCode, 200, whoami.body);
      assert.equal(json(whoami).userid, userid);
    }
    assert.equal(
      (await app.inject({ url: '/maximo/oslc/whoami', headers: { apikey: 'nosuchkey' } })).statusCode,
      400,
    );
  } finally {
    await app.close();
  }
});
