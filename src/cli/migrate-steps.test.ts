import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
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
 * The steps of `eas migrate` on their own, one command each as a scripted pipeline runs them (docs/cli.md, "The
 * steps on their own"), between two server processes; the question before a deploy; `--select` checked.
 */
describe('eas migrate steps in a pipeline', () => {
  let source: ListeningServer;
  let target: ListeningServer;
  let sourceAdmin: EasClient;
  let targetAdmin: EasClient;
  let env: Record<string, string>;
  let directory: string;

  before(async () => {
    ({ source, target, sourceAdmin, targetAdmin, env } = await startMigrationServers('STEPSRC', 'STEPTGT'));
    directory = await mkdtemp(join(tmpdir(), 'eas-steps-'));
  });
  after(async () => {
    await Promise.all([sourceAdmin?.logout(), targetAdmin?.logout()]);
    await Promise.all([source?.close(), target?.close()]);
    await rm(directory, { recursive: true, force: true });
  });

  async function eas(args: string[], options: { tty?: boolean; answer?: boolean } = {}) {
    const captured = captureIo(env, options);
    const code = await runCli(args, captured.io);
    return { code, stdout: captured.stdout(), stderr: captured.stderr(), questions: captured.questions() };
  }

  test('create, download, upload, preview, deploy and close, one by one', async () => {
    const [asset] = await sourceAdmin
      .query('mxapiasset', {
        where: 'siteid="BEDFORD"',
        select: 'assetnum',
        pageSize: 1,
        orderBy: '+assetnum',
      })
      .all();
    await sourceAdmin.update(String(asset!.href), { description: 'Moved step by step' });
    const created = await eas(['migrate', 'create', '--source', source.base, '--definition', 'DEMOSNAP']);
    assert.equal(created.code, EXIT.ok, created.stderr);
    const sourceId = created.stdout.trim();
    assert.match(sourceId, /^\d+$/);

    const file = join(directory, 'package.zip');
    const downloaded = await eas([
      'migrate',
      'download',
      '--source',
      source.base,
      '--definition',
      'DEMOSNAP',
      '--package',
      sourceId,
      '--output',
      file,
    ]);
    assert.equal(downloaded.code, EXIT.ok, downloaded.stderr);
    assert.equal(downloaded.stdout.trim(), file);

    const uploaded = await eas(['migrate', 'upload', '--target', target.base, file]);
    assert.equal(uploaded.code, EXIT.ok, uploaded.stderr);
    const targetId = uploaded.stdout.trim();
    assert.match(targetId, /^\d+$/);
    // The progress goes to stderr (stdout is the id alone): on a pipe plain lines, the last with every byte sent.
    const size = (await stat(file)).size.toLocaleString('en-US');
    assert.match(uploaded.stderr, new RegExp(`^uploading: ${size} of ${size} bytes, [\\d,]+ bytes/s$`, 'm'));

    const targetArgs = ['--target', target.base, '--definition', 'DEMOSNAP', '--package', targetId];
    const previewed = await eas(['migrate', 'preview', ...targetArgs]);
    assert.equal(previewed.code, EXIT.ok, previewed.stderr);
    assert.match(previewed.stdout, /^object\s+adds\s+changes\s+deletes\s+unchanged\s+refused\s+drifts/m);
    assert.match(previewed.stdout, /0 to add, 1 to change, 0 to delete, \d+ unchanged/);

    // On a terminal, the question names the target, the package, the counts and admin mode; answered no.
    const declined = await eas(['migrate', 'deploy', ...targetArgs], { tty: true, answer: false });
    assert.equal(declined.code, EXIT.notConfirmed, declined.stderr);
    assert.equal(declined.questions.length, 1);
    assert.match(
      declined.questions[0]!,
      new RegExp(
        `^Deploy package ${targetId} of DEMOSNAP to ${target.base.replace(/[/.]/g, '\\$&')}: 0 to add, 1 to change, 0 to delete, \\d+ unchanged, 0 refused; no structural changes; admin mode not needed\\?$`,
      ),
    );
    const deployed = await eas(['migrate', 'deploy', ...targetArgs, '--yes']);
    assert.equal(deployed.code, EXIT.ok, deployed.stderr);
    assert.match(deployed.stdout, /\(0 added, 1 changed, \d+ unchanged, 0 deleted\)/);
    const [moved] = await targetAdmin
      .query('mxapiasset', {
        where: `assetnum="${String(asset!.assetnum)}" and siteid="BEDFORD"`,
        select: 'description',
      })
      .all();
    assert.equal(moved?.description, 'Moved step by step');
    // On a terminal the upload's progress is a bar; the deployed package uploaded again answers its record.
    const again = await eas(['migrate', 'upload', '--target', target.base, file], { tty: true });
    assert.equal(again.stdout.trim(), targetId, again.stderr);
    assert.ok(
      again.stderr.includes(`[${'#'.repeat(24)}] uploading ${size} of ${size} bytes`),
      JSON.stringify(again.stderr),
    );

    const closed = await eas([
      'migrate',
      'close',
      '--source',
      source.base,
      '--definition',
      'DEMOSNAP',
      '--package',
      sourceId,
    ]);
    assert.equal(closed.code, EXIT.ok, closed.stderr);
    assert.match(closed.stdout, new RegExp(`closed package ${sourceId}`));
  });

  test('a failed deploy prints its reason code once', async () => {
    const failed = await eas([
      'migrate',
      'deploy',
      '--target',
      target.base,
      '--definition',
      'DEMOSNAP',
      '--package',
      '999999',
      '--yes',
    ]);
    assert.notEqual(failed.code, EXIT.ok);
    const codes = failed.stderr.match(/\b(?:EAS|BMXAA)\d{4}[EIW]\b/g) ?? [];
    assert.ok(codes.length > 0, failed.stderr);
    for (const code of new Set(codes))
      assert.equal(codes.filter((found) => found === code).length, 1, `${code} once in: ${failed.stderr}`);
  });

  test('a run failing before the target received the package leaves nothing half-made on the source', async () => {
    // The target passes its check; the distribution to a target the definition does not name fails after create.
    const failed = await eas([
      'migrate',
      '--source',
      source.base,
      '--target',
      target.base,
      '--definition',
      'DEMOSNAP',
      '--target-name',
      'NOSUCHTARGET',
      '--yes',
    ]);
    assert.equal(failed.code, EXIT.refused, failed.stderr);
    assert.match(failed.stderr, /^distribute failed: /m);
    const match = /cleanup done: deleted package (\d+), which never reached the target/.exec(failed.stderr);
    assert.ok(match, failed.stderr);
    const left = await sourceAdmin
      .query('mxapidmpackage', { where: `dmpackageid=${match[1]}`, select: 'status' })
      .all();
    assert.deepEqual(left, []);
  });

  test('a --select naming an attribute the structure does not have is an error', async () => {
    const refused = await eas([
      '--url',
      target.base,
      '--apikey-env',
      'EAS_TARGET_APIKEY',
      'query',
      'mxapiasset',
      '--select',
      'assetnum,nosuchattr',
    ]);
    assert.equal(refused.code, EXIT.usage, refused.stderr);
    assert.match(refused.stderr, /nosuchattr/);
    const fine = await eas([
      '--url',
      target.base,
      '--apikey-env',
      'EAS_TARGET_APIKEY',
      'query',
      'mxapiasset',
      '--select',
      'assetnum,assetspec{assetattrid}',
      '--page-size',
      '1',
    ]);
    assert.equal(fine.code, EXIT.ok, fine.stderr);
  });
});
