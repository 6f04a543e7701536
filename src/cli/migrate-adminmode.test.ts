import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { EasClient } from '../client/index.js';
import { captureIo } from '../../test/helpers/cli-io.js';
import type { ListeningServer } from '../../test/helpers/http-server.js';
import { startMigrationServers } from '../../test/helpers/migration-servers.js';
import { DEMO_PASSWORD } from '../../test/helpers/storage.js';
import { TcpProxy } from '../../test/helpers/tcp-proxy.js';
import { EXIT } from './exit-codes.js';
import type { MigrationOutcome } from './migrate.js';
import { runCli } from './program.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('eas migrate with a target that needs admin mode', () => {
  let source: ListeningServer;
  let target: ListeningServer;
  let sourceAdmin: EasClient;
  let targetAdmin: EasClient;
  let env: Record<string, string>;

  before(async () => {
    ({ source, target, sourceAdmin, targetAdmin, env } = await startMigrationServers('AMSRC', 'AMTGT'));
  });
  after(async () => {
    await targetAdmin?.adminMode.off().catch(() => undefined);
    await Promise.all([sourceAdmin?.logout(), targetAdmin?.logout()]);
    await Promise.all([source?.close(), target?.close()]);
  });

  const args = (...more: string[]) => [
    'migrate',
    '--source',
    source.base,
    '--target',
    target.base,
    '--definition',
    'DEMOSNAP',
    '--poll-interval',
    '1',
    ...more,
  ];

  /**
   * A custom attribute of ASSET added on the source (a structural change: admin mode on there for the apply) and
   * given to a Bedford asset: the next package carries it, and the target's deploy needs admin mode to add it.
   */
  async function customAttributeOnSource(name: string, value: number): Promise<Record<string, unknown>> {
    await sourceAdmin.adminMode.on({ logoutmin: 0 });
    try {
      await sourceAdmin.create('mxapimaxattributecfg', {
        objectname: 'ASSET',
        attributename: name,
        changetype: 'ADD',
        maxtype: 'INTEGER',
      });
      await sourceAdmin.http.request('POST', 'dbconfig/apply');
    } finally {
      await sourceAdmin.adminMode.off();
    }
    const [asset] = await sourceAdmin
      .query('mxapiasset', {
        where: 'siteid="BEDFORD"',
        select: 'assetnum',
        orderBy: '+assetnum',
        pageSize: 1,
      })
      .all();
    await sourceAdmin.update(String(asset!.href), { [name.toLowerCase()]: value });
    return asset!;
  }

  /** An ordinary user's session on the target: admin mode stays pending (2) until `logoutmin` has passed. */
  async function ordinarySession(): Promise<EasClient> {
    const wilson = new EasClient({
      baseUrl: target.base,
      credentials: { scheme: 'maxauth', user: 'WILSON', password: DEMO_PASSWORD },
    });
    await wilson.login();
    return wilson;
  }

  test('a package with a custom attribute: admin mode on, countdown to state 1, completedeploy, admin mode off', async () => {
    const asset = await customAttributeOnSource('XCRITICALITY', 4);
    const [onSource] = await sourceAdmin
      .query('mxapiasset', {
        where: `assetnum="${String(asset.assetnum)}" and siteid="BEDFORD"`,
        select: 'xcriticality',
      })
      .all();
    assert.equal(onSource?.xcriticality, 4, 'the value on the source');
    await sourceAdmin.update(String(asset.href), { description: 'Deployed under admin mode' });
    await ordinarySession();

    const captured = captureIo(env);
    const code = await runCli(
      args('--numsessions', '3', '--logoutmin', '0.05', '--yes', '--cleanup', 'delete'),
      captured.io,
    );
    assert.equal(code, EXIT.ok, captured.stderr() + captured.stdout());
    const log = captured.stderr();
    assert.doesNotMatch(log + captured.stdout(), CONTROL);
    assert.match(log, /deploy done: BMXAA0578E: the deployment needs admin mode/);
    assert.match(log, /waiting for admin mode: state 2, \d+ s left/);
    for (const step of ['adminmode-on', 'adminmode-wait', 'completedeploy', 'adminmode-off', 'cleanup']) {
      assert.match(log, new RegExp(`^${step} done`, 'm'));
    }
    assert.ok(log.indexOf('completedeploy done') < log.indexOf('adminmode-off done'));
    assert.equal(captured.stdout(), 'deployed\n');

    // The package's structural change (the attribute) and its records arrived on the target.
    const attributes = await targetAdmin.http.request<{ member: Array<Record<string, unknown>> }>(
      'GET',
      'dbconfig/attributes',
    );
    assert.ok(attributes.member.some((attribute) => attribute.attributename === 'XCRITICALITY'));
    const [moved] = await targetAdmin
      .query('mxapiasset', {
        where: `assetnum="${String(asset.assetnum)}" and siteid="BEDFORD"`,
        select: 'description',
      })
      .all();
    assert.equal(moved?.description, 'Deployed under admin mode');
    assert.equal(await targetAdmin.adminMode.state(), 0);
  });

  test('SIGINT while admin mode is turning on: admin mode is off afterwards, exit 130', async () => {
    await customAttributeOnSource('XINTERRUPTED', 1);
    await ordinarySession();
    const child = spawn(
      process.execPath,
      [join(root, 'bin', 'eas.js'), ...args('--logoutmin', '10', '--yes', '--json')],
      {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = once(child, 'exit');
    // --json prints nothing while running: the target's own state says when admin mode is being turned on.
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const deadline = Date.now() + 60_000;
    while ((await targetAdmin.adminMode.state()) !== 2) {
      assert.ok(Date.now() < deadline, `admin mode never turned on: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill('SIGINT');
    const [code] = (await exited) as [number | null];
    assert.equal(code, EXIT.interrupted, stderr);
    assert.equal(await targetAdmin.adminMode.state(), 0);
    const outcome = JSON.parse(stdout) as MigrationOutcome;
    assert.deepEqual(outcome.adminMode, { turnedOn: true, off: true });
    assert.ok(outcome.steps.some((step) => step.step === 'adminmode-wait' && step.detail === 'interrupted'));
    assert.match(stderr, /interrupted: stopping; admin mode is turned off first/);
  });

  test('a lost connection while admin mode is on: polls and admin mode off are retried until it is back', async () => {
    await customAttributeOnSource('XDISCONNECTED', 2);
    await ordinarySession();
    const relay = TcpProxy.forUrl(target.base);
    await relay.up();
    const captured = captureIo(env);
    const running = runCli(
      [
        'migrate',
        '--source',
        source.base,
        '--target',
        relay.rewrite(target.base).replace(/\/$/, ''),
        '--definition',
        'DEMOSNAP',
        '--poll-interval',
        '1',
        '--logoutmin',
        '10',
        '--adminmode-timeout',
        '4',
        '--retries',
        '8',
        '--timeout',
        '5',
        '--yes',
      ],
      captured.io,
    );
    const waitFor = async (check: () => Promise<boolean> | boolean, what: string) => {
      const deadline = Date.now() + 60_000;
      while (!(await check())) {
        assert.ok(Date.now() < deadline, `${what}: ${captured.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await waitFor(async () => (await targetAdmin.adminMode.state()) === 2, 'admin mode turning on');
    await relay.down();
    await waitFor(() => /admin mode off: .*trying again/.test(captured.stderr()), 'a retried admin mode off');
    assert.equal(await targetAdmin.adminMode.state(), 2, 'still on while the connection is down');
    await relay.up();
    const code = await running;
    await relay.down();
    assert.equal(code, EXIT.adminModeTimeout, captured.stderr());
    assert.match(captured.stderr(), /admin mode state: No answer from .*; polling again/);
    assert.match(captured.stderr(), /adminmode-wait failed: Admin mode did not reach state 1 within 4 s/);
    assert.match(captured.stderr(), /adminmode-off done/);
    assert.equal(await targetAdmin.adminMode.state(), 0);
  });

  test('a package needing admin mode whose records the target refuses: listed at preview, admin mode never on, exit 6', async () => {
    await customAttributeOnSource('XREFUSED', 3);
    // An asset type that exists on the source only: the target's domain refuses the package's record.
    const [domain] = await sourceAdmin
      .query('mxapidomain', { where: 'domainid="ASSETTYPE"', select: 'domainid' })
      .all();
    await sourceAdmin.update(String(domain!.href), {
      alndomain: [{ value: 'AMONLY', description: 'Source only' }],
    });
    const [asset] = await sourceAdmin
      .query('mxapiasset', { where: 'siteid="BEDFORD"', select: 'assetnum', pageSize: 1 })
      .all();
    await sourceAdmin.update(String(asset!.href), { assettype: 'AMONLY' });

    const captured = captureIo(env);
    const code = await runCli(args('--logoutmin', '0', '--yes'), captured.io);
    assert.equal(code, EXIT.deployFailed, captured.stderr());
    assert.match(captured.stdout(), /failed at preview: the target would refuse 1 record\(s\)/);
    assert.match(captured.stderr(), /structural changes: .*ADD ASSET\.XREFUSED/);
    assert.match(captured.stderr(), /admin mode: needed/);
    assert.match(captured.stderr(), /refused: MXAPIASSET .*AMONLY/);
    assert.doesNotMatch(captured.stderr(), /adminmode-on/, 'admin mode was never asked for');
    assert.match(captured.stderr(), /cleanup skipped/);
    assert.equal(await targetAdmin.adminMode.state(), 0);
  });
});
