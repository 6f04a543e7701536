import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { builtPackage } from '../../../test/helpers/migration-packages.js';
import {
  startServer,
  stopServer,
  stopServersAndDropSchema,
  type ServerProcess,
  type ServerSettings,
} from '../../../test/helpers/processes.js';

/**
 * A back-out killed (SIGKILL) in the middle of its transaction, as a real server process on PGlite (a data directory)
 * and on PostgreSQL (a schema of EAS_TEST_DATABASE_URL): after a restart the package's records are either all backed
 * out or not at all, and the back-out runs again to the end (docs/migration.md, "Back-out").
 */
const url = process.env.EAS_TEST_DATABASE_URL;
const ADMIN_PASSWORD = 'backout-admin-pw';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
const ITEMS = 3000;

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

async function bulkItems(server: ServerProcess): Promise<number> {
  const answer = await call(
    server,
    `/os/mxapiitem?lean=1&count=1&oslc.where=${encodeURIComponent('itemnum="BOBULK%"')}`,
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return Number(answer.body.totalCount);
}

/**
 * Waits until the back-out this process runs has written at least one chunk, and not all of them. The readings
 * overlap (one starts every few milliseconds, whether or not the last has answered): on PGlite a reading that reached
 * the database just before the back-out's transaction took the only connection waits for its commit, and a reader
 * that waited for it in turn would see only the end (docs/migration.md, "Progress"). The readings that start after
 * the back-out began are answered from the process's memory. Readings still waiting are left to fail with the kill.
 */
async function midway(server: ServerProcess, dmpackageid: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  let last = 'no reading';
  let found = false;
  const readings = new Set<Promise<void>>();
  const read = async () => {
    const record = await call(server, `/dm/package?pkgdefname=BOKILL&dmpackageid=${dmpackageid}`);
    last = `${String(record.body.status)}: ${String(record.body.progressstatus)}`;
    const done = /Backing out: ([\d,]+) of/.exec(String(record.body.progressstatus));
    if (record.body.status === 'BACKOUT_INPROGRESS' && done && Number(done[1]!.replace(/,/g, '')) > 0)
      found = true;
  };
  while (!found && Date.now() < deadline) {
    if (readings.size < 16) {
      // A reading still waiting when the process is killed fails then: nothing waits for it.
      const reading: Promise<void> = read()
        .catch(() => undefined)
        .finally(() => readings.delete(reading));
      readings.add(reading);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (!found) assert.fail(`the back-out did not get under way; the last reading: ${last}`);
}

async function killMidBackout(settings: ServerSettings): Promise<void> {
  let server = await startServer(settings);
  try {
    const lines = Array.from({ length: ITEMS }, (_, index) => ({
      itemnum: `BOBULK${String(index).padStart(5, '0')}`,
      itemsetid: 'SET1',
      description: `Bulk item ${index}`,
      status: 'ACTIVE',
    }));
    const file = await builtPackage('BOKILL', [{ objectstructure: 'MXAPIITEM', lines }], []);
    const uploaded = await call(server, '/dm/upload?filename=bokill.zip', undefined, file);
    assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
    const dmpackageid = uploaded.body.dmpackageid as number;
    const deployed = await call(server, '/dm/deploy', { pkgdefname: 'BOKILL', dmpackageid });
    assert.equal(deployed.status, 200, JSON.stringify(deployed.body));
    assert.equal(await bulkItems(server), ITEMS);

    const backingOut = call(server, '/dm/backout', { pkgdefname: 'BOKILL', dmpackageid }).catch(
      () => undefined,
    );
    await midway(server, dmpackageid);
    server.child.kill('SIGKILL');
    await backingOut;
    await stopServer(server);

    server = await startServer(settings);
    const left = await bulkItems(server);
    const record = await call(server, `/dm/package?pkgdefname=BOKILL&dmpackageid=${dmpackageid}`);
    assert.ok(left === ITEMS || left === 0, `${left} of ${ITEMS} records: a back-out is all or nothing`);
    assert.equal(record.body.status === 'BACKEDOUT', left === 0, JSON.stringify(record.body));
    assert.equal(left, ITEMS, 'killed before its commit, the back-out left every record');

    const again = await call(server, '/dm/backout', { pkgdefname: 'BOKILL', dmpackageid });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(await bulkItems(server), 0);
  } finally {
    await stopServer(server);
  }
}

describe('a back-out killed mid-way, in a real server process', () => {
  const demo = { EAS_DEMO: '1', EAS_DEMO_PASSWORD: 'backout-demo-pw' };

  // Each pass runs its own engine's: the PostgreSQL pass repeating the PGlite one would only repeat it.
  if (!url) {
    test('PGlite data directory: nothing backed out after the restart, then the whole back-out', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'eas-backout-kill-'));
      try {
        await killMidBackout({
          name: 'BOKILLPG',
          adminPassword: ADMIN_PASSWORD,
          env: { ...demo, EAS_DATA_DIR: dataDir },
        });
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  } else {
    test('PostgreSQL schema: nothing backed out after the restart, then the whole back-out', async () => {
      const schema = `eas_test_backout_${process.pid}_${randomBytes(3).toString('hex')}`;
      try {
        await killMidBackout({
          name: 'BOKILLPOSTGRES',
          databaseUrl: url,
          schema,
          adminPassword: ADMIN_PASSWORD,
          env: demo,
        });
      } finally {
        await stopServersAndDropSchema([], url, schema);
      }
    });
  }
});
