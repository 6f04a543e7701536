import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { EasClient } from '../client/index.js';
import { captureIo } from '../../test/helpers/cli-io.js';
import { startListeningServer, type ListeningServer } from '../../test/helpers/http-server.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD } from '../../test/helpers/storage.js';
import { TcpProxy } from '../../test/helpers/tcp-proxy.js';
import { EXIT } from './exit-codes.js';
import type { MigrationOutcome } from './migrate.js';
import { runCli } from './program.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The target deployment with one rule added in front of it: deploying a package (deploy, completedeploy) needs admin
 * mode on, as a package with structural changes does on the deployed systems. The rule reads the target's real
 * admin mode state with the caller's own credentials and answers BMXAA0578E naming the package while it is not 1;
 * every other call, and the deploy once admin mode is on, reaches the target unchanged. (The packages of this
 * release carry no structural change, so no target refuses one by itself.)
 */
async function structuralTarget(targetBase: string): Promise<{ base: string; close(): Promise<void> }> {
  const target = new URL(targetBase);
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const body = await readBody(request);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
          headers[name] = value;
      }
      if (
        request.method === 'POST' &&
        /\/dm\/(complete)?deploy$/.test(new URL(request.url!, target).pathname)
      ) {
        const state = await fetch(`${targetBase}/oslc/adminmode/state`, { headers });
        const { state: value } = (await state.json()) as { state: number };
        if (value !== 1) {
          const { dmpackageid } = JSON.parse(body.toString()) as { dmpackageid: number };
          response.writeHead(400, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              Error: {
                errorattrname: 'dmpackageid',
                errattrvalue: String(dmpackageid),
                extendedError: { moreInfo: { href: `${targetBase}/oslc/error/messages/BMXAA0578E` } },
                reasonCode: 'BMXAA0578E',
                message:
                  'BMXAA0578E - You must turn on Admin Mode before performing a structural database configuration.',
                statusCode: '400',
              },
            }),
          );
          return;
        }
      }
      const answer = await fetch(new URL(request.url!, target), {
        method: request.method!,
        headers,
        ...(body.length > 0 && { body: new Uint8Array(body) }),
        redirect: 'manual',
      });
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!['content-encoding', 'transfer-encoding', 'content-length', 'connection'].includes(name))
          out[name] = value;
      });
      response.writeHead(answer.status, out).end(Buffer.from(await answer.arrayBuffer()));
    })().catch((error: unknown) => response.writeHead(502).end(String(error)));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    base: `http://127.0.0.1:${port}${target.pathname}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('eas migrate with a target that needs admin mode', () => {
  let source: ListeningServer;
  let target: ListeningServer;
  let structural: { base: string; close(): Promise<void> };
  let sourceAdmin: EasClient;
  let targetAdmin: EasClient;
  let env: Record<string, string>;

  before(async () => {
    [source, target] = await Promise.all([startListeningServer('AMSRC'), startListeningServer('AMTGT')]);
    structural = await structuralTarget(target.base);
    const login = (server: ListeningServer) =>
      new EasClient({
        baseUrl: server.base,
        credentials: { scheme: 'maxauth', user: 'MAXADMIN', password: ADMIN_PASSWORD },
      });
    sourceAdmin = login(source);
    targetAdmin = login(target);
    env = {
      EAS_SOURCE_APIKEY: await sourceAdmin.apikeys.create(-1),
      EAS_TARGET_APIKEY: await targetAdmin.apikeys.create(-1),
    };
  });
  after(async () => {
    await targetAdmin?.adminMode.off().catch(() => undefined);
    await Promise.all([sourceAdmin?.logout(), targetAdmin?.logout()]);
    await structural?.close();
    await Promise.all([source?.close(), target?.close()]);
  });

  const args = (...more: string[]) => [
    'migrate',
    '--source',
    source.base,
    '--target',
    structural.base,
    '--definition',
    'DEMOSNAP',
    '--poll-interval',
    '1',
    ...more,
  ];

  /** An ordinary user's session on the target: admin mode stays pending (2) until `logoutmin` has passed. */
  async function ordinarySession(): Promise<EasClient> {
    const wilson = new EasClient({
      baseUrl: target.base,
      credentials: { scheme: 'maxauth', user: 'WILSON', password: DEMO_PASSWORD },
    });
    await wilson.login();
    return wilson;
  }

  test('deploy answers BMXAA0578E: admin mode on, countdown until state 1, completedeploy, admin mode off', async () => {
    const [location] = await sourceAdmin
      .query('mxapioperloc', { where: 'siteid="BEDFORD"', select: 'location' })
      .all();
    await sourceAdmin.update(String(location!.href), { description: 'Needs admin mode' });
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

    const [moved] = await targetAdmin
      .query('mxapioperloc', {
        where: `location="${String(location!.location)}" and siteid="BEDFORD"`,
        select: 'description',
      })
      .all();
    assert.equal(moved?.description, 'Needs admin mode');
    assert.equal(await targetAdmin.adminMode.state(), 0);
  });

  test('SIGINT while admin mode is turning on: admin mode is off afterwards, exit 130', async () => {
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
    await ordinarySession();
    const relay = TcpProxy.forUrl(structural.base);
    await relay.up();
    const captured = captureIo(env);
    const running = runCli(
      [
        'migrate',
        '--source',
        source.base,
        '--target',
        relay.rewrite(structural.base).replace(/\/$/, ''),
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

  test('completedeploy failing validation: exit 6 with the reason code, admin mode off', async () => {
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
    assert.match(captured.stdout(), /failed at completedeploy: EAS0165E/);
    assert.match(captured.stderr(), /adminmode-off done/);
    assert.match(captured.stderr(), /cleanup skipped/);
    assert.equal(await targetAdmin.adminMode.state(), 0);
  });
});
