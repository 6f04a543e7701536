import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Command } from 'commander';
import { captureIo } from '../../test/helpers/cli-io.js';
import { startListeningServer, type ListeningServer } from '../../test/helpers/http-server.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD } from '../../test/helpers/storage.js';
import { EXIT } from './exit-codes.js';
import { buildProgram, runCli } from './program.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

// Anything a terminal would interpret: every C0 and C1 control character except line feed.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

function assertPlain(text: string, what: string): void {
  const match = CONTROL.exec(text);
  assert.equal(match, null, `${what} holds control character ${JSON.stringify(match?.[0])}`);
}

/** Every command path of the tree: [], ['apikey'], ['apikey', 'create'], ... */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return [prefix, ...command.commands.flatMap((child) => commandPaths(child, [...prefix, child.name()]))];
}

describe('eas --help', () => {
  test('every command and subcommand prints its usage and exits 0', async () => {
    const paths = commandPaths(buildProgram(captureIo({}).io));
    assert.ok(paths.length >= 17, `${paths.length} commands`);
    for (const path of paths) {
      const captured = captureIo({});
      assert.equal(await runCli([...path, '--help'], captured.io), EXIT.ok, path.join(' '));
      assert.match(captured.stdout(), new RegExp(`^Usage: eas${path.map((name) => ` ${name}`).join('')}\\b`));
      assertPlain(captured.stdout(), `${path.join(' ')} --help`);
    }
  });

  test('the bin launcher runs: npx eas --help and eas migrate --help exit 0 with usage', async () => {
    for (const args of [['--help'], ['migrate', '--help']]) {
      const { stdout } = await run(process.execPath, [join(root, 'bin', 'eas.js'), ...args], { cwd: root });
      assert.match(stdout, /^Usage: eas/);
      assertPlain(stdout, args.join(' '));
    }
  });

  test('a reader that stops early (eas --help | head -1) ends nothing badly: exit 0, no EPIPE trace', async () => {
    const child = spawn(process.execPath, [join(root, 'bin', 'eas.js'), '--help'], { cwd: root });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Close the reading end before the usage is written, as `head` does once it has its line.
    child.stdout.destroy();
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /EPIPE/);
  });

  test('a wrong argument is a usage error (exit 2)', async () => {
    const captured = captureIo({});
    assert.equal(await runCli(['query'], captured.io), EXIT.usage);
    assert.match(captured.stderr(), /missing required argument 'os'/);
    assert.equal(await runCli(['query', 'mxapiasset', '--format', 'xml'], captureIo({}).io), EXIT.usage);
    const noCredentials = captureIo({ EAS_URL: 'http://127.0.0.1:1/maximo' });
    assert.equal(await runCli(['prop', 'get', 'x'], noCredentials.io), EXIT.usage);
    assert.match(noCredentials.stderr(), /No credentials/);
  });
});

describe('eas commands against a listening server (a server process on PostgreSQL)', () => {
  let server: ListeningServer;
  let adminEnv: Record<string, string>;
  const outputs: string[] = [];

  before(async () => {
    server = await startListeningServer('CLISRV');
    adminEnv = { EAS_URL: server.base, EAS_USER: 'MAXADMIN', EAS_PASSWORD: ADMIN_PASSWORD };
  });
  after(async () => {
    await server?.close();
  });

  /** Runs `eas` in-process, not on a terminal; every output is kept and checked for control characters. */
  async function eas(
    args: string[],
    env = adminEnv,
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const captured = captureIo(env);
    const code = await runCli(args, captured.io);
    const result = { code, stdout: captured.stdout(), stderr: captured.stderr() };
    outputs.push(result.stdout, result.stderr);
    assertPlain(result.stdout + result.stderr, `eas ${args.join(' ')}`);
    return result;
  }

  async function easJson(args: string[], env = adminEnv): Promise<unknown> {
    const result = await eas([...args, '--json'], env);
    assert.equal(result.code, EXIT.ok, result.stderr);
    return JSON.parse(result.stdout) as unknown;
  }

  test('query: table, CSV over every page, JSON of the first page', async () => {
    const table = await eas([
      'query',
      'mxapiasset',
      '--select',
      'assetnum,siteid,status',
      '--page-size',
      '3',
    ]);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^assetnum\s+siteid\s+status$/);
    assert.equal(lines.length, 2 + 3);

    const csv = await eas([
      'query',
      'mxapiasset',
      '--where',
      'siteid="NASHUA"',
      '--select',
      'assetnum,siteid',
      '--order-by',
      '+assetnum',
      '--page-size',
      '30',
      '--all',
      '--format',
      'csv',
    ]);
    assert.equal(csv.code, 0, csv.stderr);
    const rows = csv.stdout.trimEnd().split('\n');
    assert.equal(rows[0], 'assetnum,siteid');
    assert.equal(rows.length - 1, 100, 'every NASHUA asset, over four pages');
    assert.ok(rows.slice(1).every((row) => row.endsWith(',NASHUA')));
    assert.equal(new Set(rows).size, rows.length);

    const members = (await easJson([
      'query',
      'mxapiasset',
      '--select',
      'assetnum',
      '--page-size',
      '5',
    ])) as unknown[];
    assert.equal(members.length, 5);
  });

  test('lookup with --setupdata and --record', async () => {
    const values = (await easJson([
      'lookup',
      'mxapiasset',
      'location',
      '--setupdata',
      '{"siteid":"NASHUA"}',
      '--select',
      'location,siteid',
      '--all',
    ])) as Array<Record<string, unknown>>;
    assert.ok(values.length > 0);
    assert.ok(values.every((value) => value.siteid === 'NASHUA'));
    const newRecord = await eas([
      'lookup',
      'mxapiasset',
      'status',
      '--record',
      'newmbo',
      '--select',
      'value',
    ]);
    assert.equal(newRecord.code, 0, newRecord.stderr);
    assert.match(newRecord.stdout, /OPERATING/);
  });

  test('prop set, get, describe; control characters of a value are not passed to the output', async () => {
    const set = (await easJson(['prop', 'set', 'mxe.oslc.maxpagesize', '800'])) as Record<string, unknown>;
    assert.equal(set.propValue, '800');
    assert.equal((await eas(['prop', 'get', 'mxe.oslc.maxpagesize'])).stdout, '800\n');
    assert.deepEqual(await easJson(['prop', 'get', 'mxe.oslc.maxpagesize', 'mxe.apikeyforloggedinuser']), {
      'mxe.oslc.maxpagesize': '800',
      'mxe.apikeyforloggedinuser': '0',
    });
    const described = await eas(['prop', 'describe', 'mxe.oslc.maxpagesize']);
    assert.match(described.stdout, /maxtype\s+INTEGER/);
    assert.match(described.stdout, /maxpropvalue:\nservername/);

    await easJson(['prop', 'set', 'mxe.apikeysysusers', 'A\u001b[31mB\rC']);
    const shown = await eas(['prop', 'get', 'mxe.apikeysysusers']);
    assert.equal(shown.stdout, 'A [31mB C\n');
    const json = (await easJson(['prop', 'get', 'mxe.apikeysysusers'])) as Record<string, string>;
    assert.equal(json['mxe.apikeysysusers'], 'A\u001b[31mB\rC', 'JSON carries the value escaped, unchanged');
    await easJson(['prop', 'set', 'mxe.apikeysysusers', '']);
    await easJson(['prop', 'set', 'mxe.oslc.maxpagesize', '1000']);
  });

  test('apikey create, use through --apikey-env, list, delete, revoke; keys and passwords never echoed', async () => {
    const created = (await easJson(['apikey', 'create', '--user', 'wilson'])) as { apikey: string };
    assert.match(created.apikey, /^[0-9a-f]{48}$/);
    // Printing the new key is what `create` is for; from here on it is a credential that must not show.
    const afterCreate = outputs.length;
    const keyEnv = { EAS_URL: server.base, WILSON_KEY: created.apikey };
    const asWilson = await eas(
      ['--apikey-env', 'WILSON_KEY', 'query', 'mxapiasset', '--select', 'assetnum', '--page-size', '1'],
      keyEnv,
    );
    assert.equal(asWilson.code, 0, asWilson.stderr);
    const listed = (await easJson(['apikey', 'list', '--user', 'WILSON'])) as Array<Record<string, unknown>>;
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.userid, 'WILSON');
    assert.equal(listed[0]!.status, 'active', 'a live key is not marked expired');
    const table = await eas(['apikey', 'list']);
    assert.match(table.stdout, /^userid\s+apikeytokenid\s+status/);
    assert.ok(!table.stdout.includes(created.apikey));
    assert.equal((await eas(['apikey', 'delete', 'WILSON'])).code, 0);
    const refused = await eas(['--apikey-env', 'WILSON_KEY', 'query', 'mxapiasset'], keyEnv);
    assert.equal(refused.code, EXIT.authentication);
    assert.match(refused.stderr, /BMXAA9549E/);
    assert.ok(!refused.stderr.includes(created.apikey));

    const smithEnv = {
      EAS_URL: server.base,
      EAS_USER: 'SMITH',
      EAS_PASSWORD: DEMO_PASSWORD,
      EAS_AUTH: 'basic',
    };
    const own = await eas(['apikey', 'create', '--expiration', '30'], smithEnv);
    assert.match(own.stdout, /^[0-9a-f]{48}\n$/);
    assert.deepEqual(await easJson(['apikey', 'revoke'], smithEnv), { revoked: true });
    assert.deepEqual(await easJson(['apikey', 'revoke'], smithEnv), { revoked: false });

    const wrong = await eas(['query', 'mxapiasset', '--json'], {
      ...adminEnv,
      EAS_PASSWORD: 'wrong-password-123',
    });
    assert.equal(wrong.code, EXIT.authentication);
    const error = JSON.parse(wrong.stdout) as { error: { reasonCode: string; status: number } };
    assert.equal(error.error.reasonCode, 'BMXAA7901E');
    assert.equal(error.error.status, 401);
    for (const secret of [ADMIN_PASSWORD, DEMO_PASSWORD, 'wrong-password-123']) {
      assert.ok(!outputs.some((output) => output.includes(secret)), 'a password was printed');
    }
    assert.ok(
      !outputs.slice(afterCreate).some((output) => output.includes(created.apikey)),
      'the key was printed',
    );
  });

  test('adminmode on, state, off with user and password (numsessions 1): no session left behind', async () => {
    assert.deepEqual(await easJson(['adminmode', 'state']), { state: 0 });
    const on = (await easJson(['adminmode', 'on', '--numsessions', '1', '--logoutmin', '0'])) as {
      state: number;
    };
    assert.ok(on.state === 1 || on.state === 2);
    for (let poll = 0; poll < 5; poll += 1) {
      const text = await eas(['adminmode', 'state']);
      assert.equal(text.code, EXIT.ok, text.stderr);
      assert.match(text.stdout, /^admin mode: (on \(1\)|turning on \(2\))\n$/);
    }
    const status = await fetch(`${server.base}/oslc/adminmode/state`, {
      headers: { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') },
    });
    assert.equal(status.status, 200);
    // The answer's cookie is sealed, stored only if replayed (docs/security.md, "Session cookies"): none is.
    assert.ok(
      status.headers.getSetCookie().every((cookie) => cookie.startsWith('JSESSIONID=s.')),
      String(status.headers.getSetCookie()),
    );
    assert.equal(
      ((await status.json()) as { adminsessions: number }).adminsessions,
      0,
      'no CLI session left',
    );
    assert.deepEqual(await easJson(['adminmode', 'off']), { state: 0 });
  });

  test('exit codes: refused request 4, no connection 5; --json errors parse', async () => {
    const unknown = await eas(['query', 'nosuchstructure', '--json']);
    assert.equal(unknown.code, EXIT.refused);
    assert.equal(
      (JSON.parse(unknown.stdout) as { error: { reasonCode: string } }).error.reasonCode,
      'EAS0002E',
    );
    const down = await eas(['prop', 'get', 'x', '--json'], {
      ...adminEnv,
      EAS_URL: 'http://127.0.0.1:1/maximo',
    });
    assert.equal(down.code, EXIT.connection);
    assert.equal((JSON.parse(down.stdout) as { error: { kind: string } }).error.kind, 'connection');
  });

  test('migrate --dry-run prints the steps and calls nothing', async () => {
    const plan = (await easJson(
      ['migrate', '--definition', 'ASSETCFG', '--dry-run', '--target-type', 'database'],
      {
        EAS_URL: 'http://127.0.0.1:1/maximo',
      },
    )) as { steps: Array<{ step: string }> };
    assert.deepEqual(
      plan.steps.map((step) => step.step),
      ['check-target', 'create', 'distribute', 'preview', 'confirm', 'deploy', 'adminmode-on', 'cleanup'],
    );
    const text = await eas(['migrate', '--definition', 'ASSETCFG', '--dry-run'], {});
    assert.match(text.stdout, /^check-target: .*\ncreate: .*\ndistribute: .*\ndownload: /);
  });
});
