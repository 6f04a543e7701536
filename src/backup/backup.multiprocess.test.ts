import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer, stopServer, type ServerProcess } from '../../test/helpers/processes.js';

/**
 * A backup taken from a real server while four clients write, restored into a new data directory and served by a
 * new process (docs/operations.md, "Backup and restore"). The embedded database only: PostgreSQL deployments are
 * backed up with pg_dump.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ADMIN_PASSWORD = 'backup-admin-pw';
const MASTER_KEY = 'backup-test-master-key-0123456789abcdef';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
const WRITERS = 4;
/** A first start on a new PGlite directory (initdb, the demo data) is slow on a loaded machine. */
const STARTUP_MS = 180_000;

/** Runs a command of this tree (`src/...` through tsx); answers its exit code and output. */
async function run(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    env: { ...process.env, EAS_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

interface Acknowledged {
  assetnum: string;
  at: number;
}

/** One client: creates assets (each with two specifications, one transaction) until told to stop. */
async function writer(
  base: string,
  index: number,
  stop: { now: boolean },
  acked: Acknowledged[],
): Promise<void> {
  for (let n = 0; !stop.now; n += 1) {
    const assetnum = `BK${index}-${n}`;
    const response = await fetch(`${base}/oslc/os/mxapiasset?lean=1`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({
        assetnum,
        siteid: 'BEDFORD',
        description: `written by client ${index}`,
        assetspec: [
          { assetattrid: 'RATEDPOWER', numvalue: n },
          { assetattrid: 'ENCLOSURE', alnvalue: 'IP55' },
        ],
      }),
    });
    const body = await response.text();
    assert.equal(response.status, 201, body);
    acked.push({ assetnum, at: performance.now() });
  }
}

describe(
  'backup while serving, restore into a new directory',
  { skip: !!process.env.EAS_TEST_DATABASE_URL },
  () => {
    let work: string;
    let source: ServerProcess | undefined;
    let restored: ServerProcess | undefined;

    before(async () => {
      work = await mkdtemp(join(tmpdir(), 'eas-backup-mp-'));
    });
    after(async () => {
      for (const server of [source, restored]) if (server) await stopServer(server);
      await rm(work, { recursive: true, force: true });
    });

    test('every write acknowledged before the backup is restored, none acknowledged after it; keys need the master key', async () => {
      const sourceDir = join(work, 'source');
      source = await startServer({
        name: 'BKSOURCE',
        adminPassword: ADMIN_PASSWORD,
        startupTimeoutMs: STARTUP_MS,
        env: { EAS_DATA_DIR: sourceDir, EAS_DEMO: '1', EAS_MASTER_KEY: MASTER_KEY },
      });
      const created = await fetch(`${source.base}/oslc/apitoken/create`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: '{"expiration": -1}',
      });
      assert.equal(created.status, 200);
      const { apikey } = (await created.json()) as { apikey: string };
      const deployment = (
        (await (await fetch(`${source.base}/oslc/systeminfo?lean=1`, { headers: admin })).json()) as {
          deployment: { id: string; source: string };
        }
      ).deployment;
      const identity = deployment.id;
      // The embedded deployment is named by its machine and data directory (docs/migration.md, "Source").
      assert.equal(deployment.source, `${hostname()}:${sourceDir} (${identity})`);

      // An attachment uploaded before: its file is in the data directory's attachment folder, and travels with it.
      const firstAsset = (await (
        await fetch(`${source.base}/oslc/os/mxapiasset?lean=1&oslc.pageSize=1`, { headers: admin })
      ).json()) as { member: Array<{ href: string }> };
      const attachment = randomBytes(300_000);
      const uploaded = await fetch(`${firstAsset.member[0]!.href}/doclinks`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/pdf', slug: 'manual.pdf' },
        body: attachment,
      });
      assert.equal(uploaded.status, 201, await uploaded.text());
      const attachmentPath = new URL(String(uploaded.headers.get('location'))).pathname;

      const stop = { now: false };
      const acked: Acknowledged[] = [];
      const writers = Array.from({ length: WRITERS }, (_, index) => writer(source!.base, index, stop, acked));
      // Every client has had writes acknowledged before the backup starts, and again after it ends.
      const settled = async (count: () => number) => {
        while (count() < 2 * WRITERS) await new Promise((resolve) => setTimeout(resolve, 50));
      };
      await settled(() => acked.length);
      const archive = join(work, 'backup.zip');
      const backupStarted = performance.now();
      const backup = await run('src/cli/main.ts', ['--url', source.base, 'backup', archive], {
        EAS_USER: 'MAXADMIN',
        EAS_PASSWORD: ADMIN_PASSWORD,
      });
      const backupEnded = performance.now();
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, new RegExp(`backup written to .*deployment ${identity}`));
      await settled(() => acked.filter((write) => write.at > backupEnded).length);
      stop.now = true;
      await Promise.all(writers);
      await stopServer(source);
      const before = acked.filter((write) => write.at < backupStarted);
      const afterwards = acked.filter((write) => write.at > backupEnded);
      assert.ok(
        before.length >= WRITERS && afterwards.length >= WRITERS,
        `${before.length} before, ${afterwards.length} after`,
      );

      // Not into the source's directory: it is not empty.
      const refused = await run('src/admin/main.ts', ['restore', archive], { EAS_DATA_DIR: sourceDir });
      assert.equal(refused.code, 4, refused.stderr);
      assert.match(refused.stderr, /is not empty/);

      const restoredDir = join(work, 'restored');
      const restore = await run('src/admin/main.ts', ['restore', archive], { EAS_DATA_DIR: restoredDir });
      assert.equal(restore.code, 0, restore.stderr);
      assert.match(restore.stdout, new RegExp(`Deployment identity kept: ${identity}`));
      assert.match(restore.stdout, /No master key was given/);

      // Without the master key the restored deployment does not serve the sealed keys: it refuses to start.
      await assert.rejects(
        startServer({
          name: 'BKNOKEY',
          adminPassword: ADMIN_PASSWORD,
          startupTimeoutMs: STARTUP_MS,
          env: { EAS_DATA_DIR: restoredDir },
        }),
        /EAS_MASTER_KEY.*does not match the master key/s,
      );
      restored = await startServer({
        name: 'BKRESTORED',
        adminPassword: ADMIN_PASSWORD,
        startupTimeoutMs: STARTUP_MS,
        env: { EAS_DATA_DIR: restoredDir, EAS_MASTER_KEY: MASTER_KEY },
      });
      const whoami = await fetch(`${restored.base}/oslc/whoami`, { headers: { apikey } });
      assert.equal(whoami.status, 200, 'the original API key is answered');
      const restoredIdentity = (
        (await (await fetch(`${restored.base}/oslc/systeminfo?lean=1`, { headers: admin })).json()) as {
          deployment: { id: string };
        }
      ).deployment.id;
      assert.equal(restoredIdentity, identity);
      const download = await fetch(`${new URL(restored.base).origin}${attachmentPath}`, { headers: admin });
      assert.equal(download.status, 200);
      assert.ok(
        Buffer.from(await download.arrayBuffer()).equals(attachment),
        'the attachment is restored whole',
      );

      type AssetMember = { assetnum: string; assetspec?: unknown[] };
      const members: AssetMember[] = [];
      let next: string | undefined =
        `${restored.base}/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,assetspec{assetattrid}&oslc.pageSize=500`;
      while (next) {
        const page: Response = await fetch(next, { headers: admin });
        assert.equal(page.status, 200, await page.clone().text());
        const body = (await page.json()) as {
          member: AssetMember[];
          responseInfo?: { nextPage?: { href: string } };
        };
        members.push(...body.member);
        next = body.responseInfo?.nextPage?.href;
      }
      const present = new Map(members.filter((m) => /^BK\d-/.test(m.assetnum)).map((m) => [m.assetnum, m]));
      for (const write of before)
        assert.ok(present.has(write.assetnum), `${write.assetnum}, acknowledged before, is restored`);
      for (const write of afterwards)
        assert.ok(!present.has(write.assetnum), `${write.assetnum}, acknowledged after, is not restored`);
      for (const [assetnum, member] of present)
        assert.equal(member.assetspec?.length, 2, `${assetnum} is whole: both its specifications`);
    });
  },
);
