import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { EasClient } from '../client/index.js';
import { captureIo } from '../../test/helpers/cli-io.js';
import type { ListeningServer } from '../../test/helpers/http-server.js';
import { startMigrationServers } from '../../test/helpers/migration-servers.js';
import { EXIT } from './exit-codes.js';
import { runCli } from './program.js';

/**
 * `eas migrate` guides instead of flooding (docs/cli.md, "eas migrate"): a preview tells each distinct refusal once,
 * with its count and remedy; the flow checks the target before it creates anything on the source.
 */
describe('eas migrate guides', () => {
  let source: ListeningServer;
  let target: ListeningServer;
  let sourceAdmin: EasClient;
  let targetAdmin: EasClient;
  let env: Record<string, string>;
  let directory: string;

  before(async () => {
    ({ source, target, sourceAdmin, targetAdmin, env } = await startMigrationServers('GUIDESRC', 'GUIDETGT'));
    directory = await mkdtemp(join(tmpdir(), 'eas-guide-'));
  });
  after(async () => {
    await Promise.all([sourceAdmin?.logout(), targetAdmin?.logout()]);
    await Promise.all([source?.close(), target?.close()]);
    await rm(directory, { recursive: true, force: true });
  });

  async function eas(args: string[], environment: Record<string, string> = env) {
    const captured = captureIo(environment);
    const code = await runCli(args, captured.io);
    return { code, stdout: captured.stdout(), stderr: captured.stderr() };
  }

  /** The source's packages of a definition. */
  async function packagesOf(pkgdefname: string): Promise<number> {
    return sourceAdmin.count('mxapidmpackage', `pkgdefname="${pkgdefname}"`);
  }

  test('preview against a target without the site: one line per distinct refusal, with its count and remedy', async () => {
    await sourceAdmin.create('mxapisite', { siteid: 'GUIDEFAR', orgid: 'EAGLENA', description: 'Far' });
    for (let index = 1; index <= 12; index++)
      await sourceAdmin.create('mxapiasset', { assetnum: `GFAR${index}`, siteid: 'GUIDEFAR' });
    for (let index = 1; index <= 3; index++)
      await sourceAdmin.create('mxapioperloc', { location: `GLOC${index}`, siteid: 'GUIDEFAR' });
    await sourceAdmin.create('mxapidmpkgdef', {
      pkgdefname: 'GUIDEFAR',
      type: 'SNAPSHOT',
      status: 'APPR',
      dmpkgdefcontent: [
        { objectstructure: 'MXAPIOPERLOC', whereclause: 'siteid="GUIDEFAR"', cfgdataorder: 1 },
        { objectstructure: 'MXAPIASSET', whereclause: 'siteid="GUIDEFAR"', cfgdataorder: 2 },
      ],
      dmpkgdsttrgt: [{ targetname: 'FILE1', type: 'FILE' }],
    });
    const created = await eas(['migrate', 'create', '--source', source.base, '--definition', 'GUIDEFAR']);
    assert.equal(created.code, EXIT.ok, created.stderr);
    const file = join(directory, 'guidefar.zip');
    const downloaded = await eas([
      ...['migrate', 'download', '--source', source.base, '--definition', 'GUIDEFAR'],
      ...['--package', created.stdout.trim(), '--output', file],
    ]);
    assert.equal(downloaded.code, EXIT.ok, downloaded.stderr);
    const uploaded = await eas(['migrate', 'upload', '--target', target.base, file]);
    assert.equal(uploaded.code, EXIT.ok, uploaded.stderr);

    const previewed = await eas([
      ...['migrate', 'preview', '--target', target.base, '--definition', 'GUIDEFAR'],
      ...['--package', uploaded.stdout.trim()],
    ]);
    assert.equal(previewed.code, EXIT.deployFailed, previewed.stderr);
    const refused = previewed.stdout.split('\n').filter((line) => line.startsWith('refused:'));
    // 15 records, one reason: one line with the count, each structure's share, the reason and the remedy once.
    assert.equal(refused.length, 1, previewed.stdout);
    assert.match(
      refused[0]!,
      /^refused: 15 records \(MXAPIOPERLOC 3, MXAPIASSET 12; e\.g\. [^)]*\): BMXAA4153E - .*GUIDEFAR.* Remedy: The site GUIDEFAR does not exist on this deployment: create it here \(object structure MXAPISITE/,
    );
    assert.equal(refused[0]!.match(/MXAPISITE/g)!.length, 1, 'the remedy once');
    assert.match(previewed.stdout, /^0 to add, 0 to change, 0 to delete, 0 unchanged, 15 refused$/m);
    assert.equal(await targetAdmin.count('mxapiasset', 'siteid="GUIDEFAR"'), 0);
  });

  test('an unreachable target: exit 5 before anything is created on the source', async () => {
    const before = await packagesOf('DEMOSNAP');
    const result = await eas([
      ...['migrate', '--source', source.base, '--target', 'http://127.0.0.1:1/maximo'],
      ...['--definition', 'DEMOSNAP', '--yes', '--retries', '1'],
    ]);
    assert.equal(result.code, EXIT.connection, result.stderr + result.stdout);
    assert.match(result.stderr, /check-target failed/);
    assert.doesNotMatch(result.stderr, /^create /m);
    assert.equal(await packagesOf('DEMOSNAP'), before);
  });

  test('a wrong key for the target: exit 3 before anything is created on the source', async () => {
    const before = await packagesOf('DEMOSNAP');
    const result = await eas(
      ['migrate', '--source', source.base, '--target', target.base, '--definition', 'DEMOSNAP', '--yes'],
      { ...env, EAS_TARGET_APIKEY: 'not-a-key-of-this-target' },
    );
    assert.equal(result.code, EXIT.authentication, result.stderr + result.stdout);
    assert.match(result.stderr, /check-target failed/);
    assert.doesNotMatch(result.stderr, /^create /m);
    assert.equal(await packagesOf('DEMOSNAP'), before);
  });

  test("a key of a user who is not the target's administrator: exit 4, named, before anything is created", async () => {
    const key = await targetAdmin.apikeys.createFor('wilson', -1);
    const before = await packagesOf('DEMOSNAP');
    const result = await eas(
      ['migrate', '--source', source.base, '--target', target.base, '--definition', 'DEMOSNAP', '--yes'],
      { ...env, EAS_TARGET_APIKEY: String(key.apikey) },
    );
    assert.equal(result.code, EXIT.refused, result.stderr + result.stdout);
    assert.match(result.stderr, /check-target failed: WILSON is not an administrator of the target/);
    assert.equal(await packagesOf('DEMOSNAP'), before);
  });

  test('a reachable target with an administrator key: checked, then the flow goes on', async () => {
    const result = await eas([
      ...['migrate', '--source', source.base, '--target', target.base, '--definition', 'DEMOSNAP'],
      ...['--cleanup', 'delete'],
    ]);
    // Not confirmed (no terminal, no --yes): the check passed and the package was made and moved.
    assert.equal(result.code, EXIT.notConfirmed, result.stderr);
    assert.match(result.stderr, /^check-target done: MAXADMIN, administrator, release V7613-/m);
    assert.match(result.stderr, /^create done: package \d+/m);
  });
});
