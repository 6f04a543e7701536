import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { ADMIN_PASSWORD, TEST_DATABASE_URL } from '../../test/helpers/storage.js';
import { runAdmin } from '../admin/cli.js';

/**
 * Lockout that cannot be turned against the service: failed logins block a user for EAS_LOCKOUT_MINUTES (15 by
 * default), not until an administrator acts; the block refuses password logins only; and the only administrator,
 * blocked or with a forgotten password, is recovered from the server's shell without SQL (`npm run admin`).
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WHOAMI = '/maximo/oslc/whoami';

function credentials(login: string, password: string): Record<string, string> {
  return { maxauth: Buffer.from(`${login}:${password}`).toString('base64') };
}

function reasonCode(response: LightMyRequestResponse): unknown {
  return json(response).Error?.reasonCode;
}

describe('temporary lockout (the default)', () => {
  let t: TestApp;
  const output: string[] = [];
  const adminWith = (env: NodeJS.ProcessEnv, ...argv: string[]) =>
    runAdmin(argv, t.storage, t.config, {
      out: (text) => void output.push(text),
      err: (text) => void output.push(text),
      env,
    });
  const admin = (...argv: string[]) => adminWith({ EAS_NEW_PASSWORD: 'recovered-password-1' }, ...argv);
  const login = (headers: Record<string, string>) =>
    t.app.inject({ method: 'POST', url: '/maximo/oslc/login', headers });
  const stateOf = (userid: string) =>
    t.storage.db
      .selectFrom('maxuser')
      .select(['status', 'failedlogins', 'blockeduntil'])
      .where('userid', '=', userid)
      .executeTakeFirstOrThrow();

  before(async () => {
    t = await startTestApp({ EAS_MAX_FAILED_LOGINS: '3' });
  });
  after(() => t.close());

  test('failures block a user for EAS_LOCKOUT_MINUTES, then the right password logs in again', async () => {
    // A session opened before the attack.
    const before = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login',
      headers: maxauth('WILSON'),
    });
    assert.equal(before.statusCode, 200);
    const cookie = String(before.headers['set-cookie']).split(';')[0]!;

    const started = Date.now();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      assert.equal((await login(credentials('wilson', 'wrong'))).statusCode, 401);
    }
    const blocked = await stateOf('WILSON');
    assert.equal(blocked.status, 'ACTIVE', 'a temporary block leaves the status alone');
    const until = blocked.blockeduntil!.getTime();
    assert.ok(
      until >= started + 15 * 60_000 - 1000 && until <= Date.now() + 15 * 60_000 + 1000,
      String(blocked.blockeduntil),
    );

    const right = await login(maxauth('WILSON'));
    assert.equal(right.statusCode, 401, 'blocked: the right password does not log in');
    assert.equal(reasonCode(right), 'BMXAA7901E');
    // More failures during the block neither count nor lengthen it.
    await login(credentials('wilson', 'wrong'));
    assert.deepEqual(await stateOf('WILSON'), blocked);
    // The session the user had keeps working: the attacker cannot cut the user off.
    assert.equal((await t.app.inject({ url: WHOAMI, headers: { cookie } })).statusCode, 200);

    // The block's end (moved into the past rather than waited for).
    await t.storage.db
      .updateTable('maxuser')
      .set({ blockeduntil: new Date(Date.now() - 1000) })
      .where('userid', '=', 'WILSON')
      .execute();
    t.services.auth.invalidate();
    assert.equal((await login(maxauth('WILSON'))).statusCode, 200, 'the block has ended');
  });

  test('anyone can block MAXADMIN for a while; `admin unlock MAXADMIN` ends it at once', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) await login(credentials('maxadmin', 'guess'));
    assert.equal((await login(maxauth('MAXADMIN'))).statusCode, 401);
    output.length = 0;
    assert.equal(await admin('unlock', 'maxadmin'), 0, output.join(''));
    assert.match(output.join(''), /MAXADMIN is unblocked/);
    // The command notified the change bus: this process dropped its caches without being told directly.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await login(maxauth('MAXADMIN'))).statusCode, 200);
    assert.deepEqual(await stateOf('MAXADMIN'), { status: 'ACTIVE', failedlogins: 0, blockeduntil: null });
  });

  test('a permanently blocked administrator with a forgotten password: `admin reset-password MAXADMIN`', async () => {
    await t.storage.db
      .updateTable('maxuser')
      .set({ status: 'BLOCKED', failedlogins: 3 })
      .where('userid', '=', 'MAXADMIN')
      .execute();
    t.services.auth.invalidate();
    assert.equal((await login(maxauth('MAXADMIN'))).statusCode, 401);
    output.length = 0;
    assert.equal(await admin('reset-password', 'MAXADMIN'), 0, output.join(''));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await login(maxauth('MAXADMIN'))).statusCode, 401, 'the old password is gone');
    assert.equal((await login(credentials('MAXADMIN', 'recovered-password-1'))).statusCode, 200);
    // Without EAS_NEW_PASSWORD a password is generated and printed once.
    output.length = 0;
    assert.equal(await adminWith({}, 'reset-password', 'MAXADMIN'), 0);
    const generated = /new password: (\S+)/.exec(output.join(''))?.[1];
    assert.ok(generated, output.join(''));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await login(credentials('MAXADMIN', generated))).statusCode, 200);
    await adminWith({ EAS_NEW_PASSWORD: ADMIN_PASSWORD }, 'reset-password', 'MAXADMIN');
  });

  test('the commands refuse what they cannot do', async () => {
    output.length = 0;
    assert.equal(await admin('unlock', 'NOSUCHUSER'), 1);
    assert.match(output.join(''), /No user NOSUCHUSER/);
    assert.equal(await admin('unlock'), 2);
    assert.equal(await admin('frobnicate'), 2);
    assert.equal(await admin('unlock', 'A', '--force'), 2);
    assert.equal(await admin('help'), 0);
  });
});

test('`npm run admin` runs from the shell with the server’s environment', async () => {
  const schema = `eas_admin_${process.pid}`;
  const dataDir = join(root, '.cache', `admin-test-${process.pid}`);
  const env = {
    ...process.env,
    EAS_LOG_LEVEL: 'silent',
    ...(TEST_DATABASE_URL
      ? { DATABASE_URL: TEST_DATABASE_URL, EAS_DB_SCHEMA: schema }
      : { EAS_DATA_DIR: dataDir }),
  };
  const run = (...argv: string[]) =>
    spawnSync('npm', ['run', '--silent', 'admin', '--', ...argv], { cwd: root, env, encoding: 'utf8' });
  try {
    const help = run('help');
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /unlock <userid>/);
    const unknown = run('unlock', 'NOSUCHUSER');
    assert.equal(unknown.status, 1, unknown.stderr + unknown.stdout);
    assert.match(unknown.stderr, /No user NOSUCHUSER/);
  } finally {
    if (TEST_DATABASE_URL) {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    } else {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
});
