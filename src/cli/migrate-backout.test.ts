import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EasClient } from '../client/index.js';
import { captureIo } from '../../test/helpers/cli-io.js';
import { startMigrationServers, type MigrationServers } from '../../test/helpers/migration-servers.js';
import { EXIT } from './exit-codes.js';
import { runCli } from './program.js';

/**
 * `eas migrate backout` (docs/cli.md): a package deployed by `eas migrate` backed out on its target; refused while
 * a record it wrote was changed since, unless `--force`. DEMOCHANGE tracks items on both demo deployments.
 */
describe('eas migrate backout', () => {
  let servers: MigrationServers;

  before(async () => {
    servers = await startMigrationServers('BOSRC', 'BOTGT');
  });
  after(async () => {
    await Promise.all([servers?.sourceAdmin.logout(), servers?.targetAdmin.logout()]);
    await Promise.all([servers?.source.close(), servers?.target.close()]);
  });

  async function run(args: string[]) {
    const captured = captureIo(servers.env);
    const code = await runCli(args, captured.io);
    return { code, output: captured.stdout() + captured.stderr() };
  }

  async function item(client: EasClient, itemnum: string): Promise<Record<string, unknown>> {
    const [found] = await client
      .query('mxapiitem', { where: `itemnum="${itemnum}"`, select: 'itemnum,description' })
      .all();
    assert.ok(found, itemnum);
    return found;
  }

  test('refused with the changed record named, then backed out with --force: the item as before the deploy', async () => {
    const { sourceAdmin, targetAdmin, source, target } = servers;
    const [demo] = await sourceAdmin.query('mxapiitem', { select: 'itemnum', pageSize: 1 }).all();
    const itemnum = String(demo!.itemnum);
    const before = (await item(targetAdmin, itemnum)).description;
    await sourceAdmin.update(String((await item(sourceAdmin, itemnum)).href), { description: 'Deployed v1' });
    const migrated = await run([
      'migrate',
      ...['--source', source.base, '--target', target.base, '--definition', 'DEMOCHANGE', '--yes'],
    ]);
    assert.equal(migrated.code, EXIT.ok, migrated.output);
    const [received] = await targetAdmin
      .query('mxapidmpackage', {
        where: 'pkgdefname="DEMOCHANGE" and status="DEPLOYED"',
        select: 'dmpackageid',
      })
      .all();
    const dmpackageid = String(received!.dmpackageid);
    await targetAdmin.update(String((await item(targetAdmin, itemnum)).href), {
      description: 'Edited on target',
    });

    const backout = ['migrate', 'backout', '--target', target.base, '--definition', 'DEMOCHANGE'];
    const refused = await run([...backout, '--package', dmpackageid, '--yes']);
    assert.equal(refused.code, EXIT.refused, refused.output);
    assert.match(refused.output, /changed since the deploy: MXAPIITEM itemnum=/);
    assert.match(refused.output, /description deployed "Deployed v1", now "Edited on target"/);
    assert.equal((await item(targetAdmin, itemnum)).description, 'Edited on target');

    const forced = await run([...backout, '--package', dmpackageid, '--yes', '--force']);
    assert.equal(forced.code, EXIT.ok, forced.output);
    assert.match(forced.output, /backed out/);
    assert.equal((await item(targetAdmin, itemnum)).description, before);
    const record = await targetAdmin.packages.record({
      pkgdefname: 'DEMOCHANGE',
      dmpackageid: Number(dmpackageid),
    });
    assert.equal(record.status, 'BACKEDOUT');
    assert.deepEqual(
      record.history?.map((entry) => [entry.action, entry.changeby]),
      [
        ['DEPLOY', 'MAXADMIN'],
        ['BACKOUT', 'MAXADMIN'],
      ],
    );
    const again = await run([...backout, '--package', dmpackageid, '--yes']);
    assert.equal(again.code, EXIT.refused, again.output);
    assert.match(again.output, /EAS0181E/);
  });
});
