import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EasClient } from '../client/index.js';
import { captureIo } from '../../test/helpers/cli-io.js';
import { startMigrationServers, type MigrationServers } from '../../test/helpers/migration-servers.js';
import { EXIT } from './exit-codes.js';
import { runCli } from './program.js';

/**
 * `eas migrate --force` (docs/cli.md): a CHANGE package whose record was also changed on the target is refused by
 * the drift guard (docs/migration.md, "Drift guard") unless forced. DEMOCHANGE tracks items on both demo deployments.
 */
describe('eas migrate and the drift guard', () => {
  let servers: MigrationServers;

  before(async () => {
    servers = await startMigrationServers('DRSRC', 'DRTGT');
  });
  after(async () => {
    await Promise.all([servers?.sourceAdmin.logout(), servers?.targetAdmin.logout()]);
    await Promise.all([servers?.source.close(), servers?.target.close()]);
  });

  async function migrate(...args: string[]) {
    const captured = captureIo(servers.env);
    const code = await runCli(
      [
        'migrate',
        '--source',
        servers.source.base,
        '--target',
        servers.target.base,
        '--definition',
        'DEMOCHANGE',
        '--yes',
        '--cleanup',
        'none',
        ...args,
      ],
      captured.io,
    );
    return { code, output: captured.stdout() + captured.stderr() };
  }

  async function item(client: EasClient, itemnum: string): Promise<Record<string, unknown>> {
    const [found] = await client
      .query('mxapiitem', { where: `itemnum="${itemnum}"`, select: 'itemnum,description' })
      .all();
    assert.ok(found, itemnum);
    return found;
  }

  test('refused with EAS0169E and the target unchanged, then deployed with --force', async () => {
    const { sourceAdmin, targetAdmin } = servers;
    const [demo] = await sourceAdmin.query('mxapiitem', { select: 'itemnum', pageSize: 1 }).all();
    const itemnum = String(demo!.itemnum);
    await sourceAdmin.update(String((await item(sourceAdmin, itemnum)).href), { description: 'Source v1' });
    const first = await migrate();
    assert.equal(first.code, EXIT.ok, first.output);
    assert.equal((await item(targetAdmin, itemnum)).description, 'Source v1');

    await sourceAdmin.packages.toggleActive('DEMOCHANGE');
    await sourceAdmin.update(String((await item(sourceAdmin, itemnum)).href), { description: 'Source v2' });
    await targetAdmin.update(String((await item(targetAdmin, itemnum)).href), { description: 'Target only' });
    const refused = await migrate();
    assert.equal(refused.code, EXIT.deployFailed, refused.output);
    assert.match(refused.output, /EAS0169E/);
    assert.match(refused.output, /will be refused without --force/);
    assert.equal((await item(targetAdmin, itemnum)).description, 'Target only');

    const forced = await migrate('--force');
    assert.equal(forced.code, EXIT.ok, forced.output);
    assert.equal((await item(targetAdmin, itemnum)).description, 'Source v2');
  });
});
