import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EasClient } from '../client/index.js';
import { captureIo } from '../../test/helpers/cli-io.js';
import type { ListeningServer } from '../../test/helpers/http-server.js';
import { startMigrationServers } from '../../test/helpers/migration-servers.js';
import { EXIT } from './exit-codes.js';
import type { MigrationOutcome } from './migrate.js';
import { runCli } from './program.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/**
 * `eas migrate` between two deployments (two server processes on PostgreSQL), each with the demo data and its
 * package definitions; DEMOSNAP carries the Bedford locations and assets through a FILE target.
 */
describe('eas migrate between two servers', () => {
  let source: ListeningServer;
  let target: ListeningServer;
  let sourceAdmin: EasClient;
  let targetAdmin: EasClient;
  let env: Record<string, string>;

  before(async () => {
    ({ source, target, sourceAdmin, targetAdmin, env } = await startMigrationServers('MIGSRC', 'MIGTGT'));
  });
  after(async () => {
    await Promise.all([sourceAdmin?.logout(), targetAdmin?.logout()]);
    await Promise.all([source?.close(), target?.close()]);
  });

  async function migrate(args: string[]) {
    const captured = captureIo(env);
    const code = await runCli(
      ['migrate', '--source', source.base, '--target', target.base, '--definition', 'DEMOSNAP', ...args],
      captured.io,
    );
    return { code, stdout: captured.stdout(), stderr: captured.stderr() };
  }

  async function firstAsset(client: EasClient, where: string) {
    const [asset] = await client
      .query('mxapiasset', {
        where,
        select: 'assetnum,siteid,status,description',
        pageSize: 1,
        orderBy: '+assetnum',
      })
      .all();
    assert.ok(asset, `an asset where ${where}`);
    return asset;
  }

  test('the package is deployed on the target: its data arrives, admin mode is off, the source package closed', async () => {
    const asset = await firstAsset(sourceAdmin, 'siteid="BEDFORD" and status="OPERATING"');
    await sourceAdmin.update(String(asset.href), { description: 'Moved by eas migrate' });
    await sourceAdmin.create('mxapioperloc', {
      location: 'CLIMIG1',
      siteid: 'BEDFORD',
      description: 'Created on the source',
    });

    const result = await migrate(['--yes', '--json', '--readme', 'e2e']);
    assert.equal(result.code, EXIT.ok, result.stderr + result.stdout);
    assert.doesNotMatch(result.stdout + result.stderr, CONTROL);
    const outcome = JSON.parse(result.stdout) as MigrationOutcome;
    assert.equal(outcome.exitCode, 0);
    const done = outcome.steps.filter((step) => step.status === 'done').map((step): string => step.step);
    for (const step of [
      'create',
      'distribute',
      'download',
      'upload',
      'preview',
      'confirm',
      'deploy',
      'cleanup',
    ]) {
      assert.ok(done.includes(step), `${step} in ${done.join(',')}`);
    }

    const moved = await targetAdmin
      .query('mxapiasset', {
        where: `assetnum="${String(asset.assetnum)}" and siteid="BEDFORD"`,
        select: 'description',
      })
      .all();
    assert.equal(moved[0]?.description, 'Moved by eas migrate');
    const location = await targetAdmin
      .query('mxapioperloc', { where: 'location="CLIMIG1"', select: 'description' })
      .all();
    assert.equal(location[0]?.description, 'Created on the source');
    assert.equal(await targetAdmin.adminMode.state(), 0);

    const packages = await sourceAdmin
      .query('mxapidmpackage', {
        where: `dmpackageid=${outcome.sourcePackage!.dmpackageid}`,
        select: 'status',
      })
      .all();
    assert.equal(packages[0]?.status, 'CLOSED');
  });

  test('records the target would refuse: listed by the preview before anything is written, exit 6, admin mode off', async () => {
    // An asset type that exists on the source only: the target's domain refuses the package's record.
    const [domain] = await sourceAdmin
      .query('mxapidomain', { where: 'domainid="ASSETTYPE"', select: 'domainid' })
      .all();
    await sourceAdmin.update(String(domain!.href), {
      alndomain: [{ value: 'CLIONLY', description: 'Source only' }],
    });
    const asset = await firstAsset(sourceAdmin, 'siteid="BEDFORD" and status="OPERATING"');
    const [before] = await sourceAdmin
      .query('mxapiasset', {
        where: `assetnum="${String(asset.assetnum)}" and siteid="BEDFORD"`,
        select: 'assettype',
      })
      .all();
    await sourceAdmin.update(String(asset.href), { assettype: 'CLIONLY' });

    const result = await migrate(['--yes', '--cleanup', 'none']);
    assert.equal(result.code, EXIT.deployFailed, result.stderr + result.stdout);
    assert.match(result.stdout, /failed at preview: the target would refuse 1 record\(s\)/);
    // Without a terminal the upload's progress is plain lines; the last tells all the file's bytes were sent.
    const download = /download done: .*, (\d+) bytes/.exec(result.stderr);
    assert.ok(download, result.stderr);
    const size = Number(download[1]).toLocaleString('en-US');
    assert.match(result.stderr, new RegExp(`^uploading: ${size} of ${size} bytes, [\\d,]+ bytes/s$`, 'm'));
    assert.match(
      result.stderr,
      new RegExp(
        `refused: MXAPIASSET assetnum=${String(asset.assetnum)}, siteid=BEDFORD: BMXAA\\d{4}E - .*CLIONLY`,
      ),
    );
    assert.doesNotMatch(result.stderr, /deploy (done|failed)/, 'no deploy was tried');
    assert.doesNotMatch(result.stdout + result.stderr, CONTROL);
    assert.equal(await targetAdmin.adminMode.state(), 0);
    await sourceAdmin.update(String(asset.href), { assettype: before?.assettype ?? null });
  });

  test('without --yes and without a terminal nothing is deployed (exit 7)', async () => {
    const result = await migrate(['--cleanup', 'delete']);
    assert.equal(result.code, EXIT.notConfirmed, result.stderr);
    assert.match(result.stderr, /confirm failed: not confirmed/);
  });
});
