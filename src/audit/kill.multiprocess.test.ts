import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { builtPackage } from '../../test/helpers/migration-packages.js';
import {
  startServer,
  stopServer,
  stopServersAndDropSchema,
  type ServerProcess,
  type ServerSettings,
} from '../../test/helpers/processes.js';
import { openStorage, type Storage } from '../db/database.js';

/**
 * A server process killed (SIGKILL) during a burst of API key creations and package deploys, on PGlite (a data
 * directory) and on PostgreSQL (a schema of EAS_TEST_DATABASE_URL): after a restart every committed change has
 * exactly one audit record, no record stands for a change that is not there, and `audit verify` passes, the records
 * the dead process left unsealed sealed by the new one (docs/audit.md). Each pass runs its own engine's: the
 * PostgreSQL pass repeating the PGlite one would only repeat it.
 */
const url = process.env.EAS_TEST_DATABASE_URL;
const ADMIN_PASSWORD = 'audit-kill-admin-pw';
const MASTER_KEY = 'audit-kill-master-key-0123456789abcdef';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
const USERS = 80;
const KEY_SPACING_MS = 15;
const PACKAGES = 8;
const ITEMS_PER_PACKAGE = 150;
/** The kill comes once this many keys and deploys have answered: some committed, others in flight. */
const KEYS_BEFORE_KILL = 4;
const DEPLOYS_BEFORE_KILL = 1;

const userOf = (index: number) => `AUDKILLU${index}`;
const packageOf = (index: number) => `AUDKILL${index}`;

async function call(server: ServerProcess, path: string, body?: unknown, raw?: Buffer) {
  const response = await fetch(`${server.base}/oslc${path}`, {
    method: body === undefined && raw === undefined ? 'GET' : 'POST',
    headers: {
      ...admin,
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...(raw !== undefined && { 'content-type': 'application/zip' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    ...(raw !== undefined && { body: new Uint8Array(raw) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** The users the keys are made for, and the packages uploaded, not deployed: their ids by definition name. */
async function prepare(server: ServerProcess): Promise<Map<string, number>> {
  for (let index = 0; index < USERS; index += 1) {
    const user = userOf(index);
    const created = await call(server, '/os/mxapiperuser?lean=1', {
      personid: user,
      displayname: user,
      maxuser: [{ userid: user, loginid: user, status: 'ACTIVE' }],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
  }
  const packages = new Map<string, number>();
  for (let index = 0; index < PACKAGES; index += 1) {
    const pkgdefname = packageOf(index);
    const lines = Array.from({ length: ITEMS_PER_PACKAGE }, (_, item) => ({
      itemnum: `${pkgdefname}-${String(item).padStart(4, '0')}`,
      itemsetid: 'SET1',
      description: `Item ${item} of ${pkgdefname}`,
      status: 'ACTIVE',
    }));
    const file = await builtPackage(pkgdefname, [{ objectstructure: 'MXAPIITEM', lines }], []);
    const uploaded = await call(server, `/dm/upload?filename=${pkgdefname}.zip`, undefined, file);
    assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
    packages.set(pkgdefname, uploaded.body.dmpackageid as number);
  }
  return packages;
}

/**
 * Fires every deploy at once and the key creations one every few milliseconds (so that some are in flight whenever
 * the kill comes), and kills the process as soon as a few of each have answered: from the answer that makes it
 * enough, not from a timer, which a busy machine can hold back until every request has answered.
 */
async function burstAndKill(
  server: ServerProcess,
  packages: ReadonlyMap<string, number>,
): Promise<{ keys: Set<string>; deploys: Set<string> }> {
  const answered = { keys: new Set<string>(), deploys: new Set<string>() };
  const requests: Array<Promise<void>> = [];
  let killed = false;
  let enoughAnswered: () => void = () => undefined;
  const killedSoon = new Promise<void>((resolve) => (enoughAnswered = resolve));
  const enough = () => answered.keys.size >= KEYS_BEFORE_KILL && answered.deploys.size >= DEPLOYS_BEFORE_KILL;
  const killIfEnough = () => {
    if (killed || !enough()) return;
    server.child.kill('SIGKILL');
    killed = true;
    enoughAnswered();
  };
  for (const [pkgdefname, dmpackageid] of packages) {
    requests.push(
      call(server, '/dm/deploy', { pkgdefname, dmpackageid }).then(
        (answer) => {
          if (answer.status === 200) answered.deploys.add(pkgdefname);
          killIfEnough();
        },
        () => undefined,
      ),
    );
  }
  const keys = (async () => {
    for (let index = 0; index < USERS && !killed; index += 1) {
      const user = userOf(index);
      requests.push(
        call(server, '/os/mxapiapikey?lean=1', { userid: user, expiration: -1 }).then(
          (answer) => {
            if (answer.status === 201) answered.keys.add(user);
            killIfEnough();
          },
          () => undefined,
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, KEY_SPACING_MS));
    }
  })();
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, 120_000).unref());
  await Promise.race([killedSoon, deadline]);
  if (!killed) {
    server.child.kill('SIGKILL');
    killed = true;
  }
  await keys;
  await Promise.all(requests);
  await stopServer(server);
  const answeredCount = answered.keys.size + answered.deploys.size;
  assert.ok(enough(), `only ${answeredCount} answered before the deadline`);
  assert.ok(
    answeredCount < USERS + PACKAGES,
    'the kill came after every request had answered: nothing in flight',
  );
  return answered;
}

async function counted<Row extends { key: string; n: number }>(rows: Promise<{ rows: Row[] }>) {
  return new Map((await rows).rows.map((row) => [row.key, Number(row.n)]));
}

/** Compares the keys and deploys that committed with their records: one each, and none for anything else. */
async function compare(
  storage: Storage,
  packages: ReadonlyMap<string, number>,
  answered: { keys: Set<string>; deploys: Set<string> },
  lastIdOfKilled: number,
): Promise<void> {
  const db = storage.db;
  const keyRows = await counted(
    sql<{ key: string; n: number }>`select userid as key, count(*)::int as n from apikeytoken
      where userid like 'AUDKILLU%' group by userid`.execute(db),
  );
  const keyRecords = await counted(
    sql<{ key: string; n: number }>`select objectkey as key, count(*)::int as n from easaudit
      where eventtype = 'apikey.admin.insert' and objectkey like 'AUDKILLU%' group by objectkey`.execute(db),
  );
  assert.deepEqual(keyRecords, keyRows, 'one record per key committed, none for a key that is not there');
  for (const user of answered.keys)
    assert.equal(keyRows.get(user), 1, `${user}'s key was answered: committed`);

  const deployedRows = await counted(
    sql<{ key: string; n: number }>`select pkgdefname || '/' || dmpackageid as key, 1 as n from dmpackage
      where pkgdefname like 'AUDKILL%' and status = 'DEPLOYED'`.execute(db),
  );
  const deployRecords = await counted(
    sql<{ key: string; n: number }>`select objectkey as key, count(*)::int as n from easaudit
      where eventtype = 'package.deploy' and objectkey like 'AUDKILL%' group by objectkey`.execute(db),
  );
  assert.deepEqual(deployRecords, deployedRows, 'one record per deploy committed, none for one rolled back');
  for (const [pkgdefname, dmpackageid] of packages) {
    const deployed = deployedRows.has(`${pkgdefname}/${dmpackageid}`);
    if (answered.deploys.has(pkgdefname))
      assert.ok(deployed, `${pkgdefname}'s deploy was answered: committed`);
    const items = await sql<{ n: number }>`select count(*)::int as n from item
      where itemnum like ${`${pkgdefname}-%`}`.execute(db);
    assert.equal(Number(items.rows[0]!.n), deployed ? ITEMS_PER_PACKAGE : 0, `${pkgdefname}: all or nothing`);
  }

  // The records of the killed process are all sealed now (the restarted one may have written a few since).
  const chain = await sql<{ sealed: number; unsealed: number; last: number | null }>`
    select count(*) filter (where chainseq is not null)::int as sealed,
           count(*) filter (where chainseq is null and auditid <= ${lastIdOfKilled})::int as unsealed,
           max(chainseq)::int as last from easaudit`.execute(db);
  const { sealed, unsealed, last } = chain.rows[0]!;
  assert.equal(unsealed, 0, 'every record of the killed process sealed after the restart');
  assert.equal(Number(last), sealed, 'one chain without gaps');
}

/** What the killed process left: its last record's id, and how many of its records were not sealed yet. */
async function leftByKilled(storage: Storage): Promise<{ lastId: number; unsealed: number }> {
  const result = await sql<{ last: number | null; unsealed: number }>`select max(auditid)::int as last,
    count(*) filter (where chainseq is null)::int as unsealed from easaudit`.execute(storage.db);
  return { lastId: Number(result.rows[0]!.last ?? 0), unsealed: Number(result.rows[0]!.unsealed) };
}

async function killDuringBurst(
  t: TestContext,
  settings: ServerSettings,
  open: () => Promise<Storage>,
): Promise<void> {
  let server = await startServer(settings);
  const packages = await prepare(server);
  const answered = await burstAndKill(server, packages);

  const storageLeft = await open();
  const left = await leftByKilled(storageLeft).finally(() => storageLeft.close());
  t.diagnostic(
    `answered before the kill: ${answered.keys.size} key(s), ${answered.deploys.size} deploy(s); ` +
      `records left unsealed by the killed process: ${left.unsealed}`,
  );

  server = await startServer(settings);
  try {
    const verified = await call(server, '/audit/verify');
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.equal(verified.body.ok, true, JSON.stringify(verified.body));
  } finally {
    await stopServer(server);
  }
  const storage = await open();
  try {
    await compare(storage, packages, answered, left.lastId);
  } finally {
    await storage.close();
  }
}

describe('audit trail: a server killed during a burst of key creations and deploys', () => {
  const env = { EAS_DEMO: '1', EAS_DEMO_PASSWORD: 'audit-kill-demo-pw', EAS_MASTER_KEY: MASTER_KEY };

  test(
    'PGlite data directory: every committed change has one record, and the chain verifies',
    { skip: !!url },
    async (t) => {
      const dataDir = await mkdtemp(join(tmpdir(), 'eas-audit-kill-'));
      try {
        await killDuringBurst(
          t,
          {
            name: 'AUDKILLLITE',
            adminPassword: ADMIN_PASSWORD,
            env: { ...env, EAS_DATA_DIR: dataDir },
            startupTimeoutMs: 120_000,
          },
          () => openStorage({ kind: 'pglite', dataDir }),
        );
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );

  test(
    'PostgreSQL schema: every committed change has one record, and the chain verifies',
    { skip: !url },
    async (t) => {
      const schema = `eas_test_auditkill_${process.pid}_${randomBytes(3).toString('hex')}`;
      try {
        await killDuringBurst(
          t,
          { name: 'AUDKILLPG', databaseUrl: url!, schema, adminPassword: ADMIN_PASSWORD, env },
          () => openStorage({ kind: 'postgres', url: url!, schema, poolSize: 1 }),
        );
      } finally {
        await stopServersAndDropSchema([], url!, schema);
      }
    },
  );
});
