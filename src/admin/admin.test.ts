import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { json, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { DEMO_PASSWORD, TEST_DATABASE_URL } from '../../test/helpers/storage.js';
import { lockDataDirectory } from '../db/data-dir-lock.js';
import { openStorage, type Storage } from '../db/database.js';
import { runAdmin, throughRunningServer } from './cli.js';

/**
 * Break-glass from the shell (docs/security.md, "Recovery from the shell"): admin mode off and a user's sessions
 * ended, with the server running or not, through the database and the change bus as the API's changes go.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function capture(): { io: Parameters<typeof runAdmin>[3]; text: () => string } {
  const output: string[] = [];
  return {
    io: { out: (text) => void output.push(text), err: (text) => void output.push(text), env: {} },
    text: () => output.join(''),
  };
}

const basic = (login: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`,
});

describe('npm run admin: adminmode off and sessions end', () => {
  let t: TestApp;
  /** The shell's own connection: on PostgreSQL another pool on the same schema, as another process has. */
  let shell: Storage;
  before(async () => {
    t = await startTestApp();
    if (TEST_DATABASE_URL) {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(t.storage.db);
      shell = await openStorage({
        kind: 'postgres',
        url: TEST_DATABASE_URL,
        schema: rows[0]!.schema,
        poolSize: 1,
      });
    } else {
      shell = t.storage;
    }
  });
  after(async () => {
    if (shell && shell !== t?.storage) await shell.close();
    await t?.close();
  });

  const admin = (...argv: string[]) => {
    const output = capture();
    return runAdmin(argv, shell, t.config, output.io).then((code) => ({ code, text: output.text() }));
  };

  async function sessionOf(userid: string, password: string): Promise<string> {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login',
      headers: basic(userid, password),
    });
    assert.equal(response.statusCode, 200, response.body);
    const cookie = ([] as string[])
      .concat(response.headers['set-cookie'] ?? [])
      .find((line) => line.startsWith('JSESSIONID='));
    assert.ok(cookie, response.body);
    return cookie.split(';')[0]!;
  }

  async function until(what: string, check: () => Promise<boolean>): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail(`${what} did not happen`);
  }

  test('--help, -h and help list the commands', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const { code, text } = await admin(flag);
      assert.equal(code, 0, text);
      for (const command of ['unlock', 'reset-password', 'adminmode off', 'sessions end', 'reseal-keys'])
        assert.ok(text.includes(command), `${flag} lists ${command}`);
    }
    assert.equal((await admin('adminmode', 'on')).code, 2, 'only off is offered');
    assert.equal((await admin('sessions', 'end')).code, 2, 'a user id is needed');
  });

  test('adminmode off: the running server opens logins again at once, and the change is logged', async () => {
    const cookie = await sessionOf('MAXADMIN', 'maxadmin-test-pw');
    const on = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/adminmode/on',
      headers: { cookie, 'content-type': 'application/json' },
      payload: { numsessions: 5, logoutmin: 0 },
    });
    assert.equal(on.statusCode, 200, on.body);
    const wilson = () =>
      t.app.inject({ method: 'POST', url: '/maximo/oslc/login', headers: basic('WILSON', DEMO_PASSWORD) });
    await until('admin mode refusing WILSON', async () => (await wilson()).statusCode !== 200);

    const { code, text } = await admin('adminmode', 'off');
    assert.equal(code, 0, text);
    assert.match(text, /Admin mode is off/);
    await until('the server to hear of it', async () => (await wilson()).statusCode === 200);
    const state = await t.app.inject({ url: '/maximo/oslc/adminmode/state', headers: { cookie } });
    assert.equal(json(state).state, 0, state.body);
    const logged = await t.storage.db
      .selectFrom('adminmodelog')
      .select(['action', 'changeby'])
      .orderBy('adminmodelogid', 'desc')
      .executeTakeFirstOrThrow();
    assert.deepEqual(logged, { action: 'OFF', changeby: 'ADMIN-CLI' });
  });

  test('sessions end <user>: the running server refuses the cookies of the user at once; others keep theirs', async () => {
    const wilson = await sessionOf('WILSON', DEMO_PASSWORD);
    const smith = await sessionOf('SMITH', DEMO_PASSWORD);
    const whoami = (cookie: string) => t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } });
    assert.equal((await whoami(wilson)).statusCode, 200);

    const { code, text } = await admin('sessions', 'end', 'wilson');
    assert.equal(code, 0, text);
    assert.match(text, /Ended [1-9]\d* session\(s\) of WILSON/);
    await until('the server to drop the session', async () => (await whoami(wilson)).statusCode === 401);
    assert.equal((await whoami(smith)).statusCode, 200, 'another user keeps its session');
    const unknown = await admin('sessions', 'end', 'NOBODY');
    assert.equal(unknown.code, 1);
    assert.match(unknown.text, /No user NOBODY/);
  });
});

describe(
  'npm run admin on a PGlite directory a server holds',
  { skip: TEST_DATABASE_URL !== undefined && 'PGlite only' },
  () => {
    let dataDir: string;
    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'eas-admin-'));
    });
    after(() => rm(dataDir, { recursive: true, force: true }));

    test('the command says a server holds it, and how to make the change instead', async () => {
      // This test process plays the running server: it holds the directory's lock.
      const lock = await lockDataDirectory(dataDir);
      try {
        const env: NodeJS.ProcessEnv = {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          EAS_DATA_DIR: dataDir,
        };
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/admin/main.ts', 'adminmode', 'off'], {
          cwd: root,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.stdout.resume();
        const [code] = (await once(child, 'close')) as [number | null];
        assert.equal(code, 1, stderr);
        assert.match(stderr, new RegExp(`pid ${process.pid}`));
        assert.match(stderr, /Stop that server/);
        assert.match(stderr, /npx eas adminmode off/);
      } finally {
        await lock.release();
      }
    });
  },
);

test('a held data directory: each command is told its own way through the running server', () => {
  assert.match(throughRunningServer(['adminmode', 'off']), /npx eas adminmode off/);
  const unlock = throughRunningServer(['unlock', 'maxadmin']);
  assert.doesNotMatch(unlock, /adminmode/, 'unlocking has nothing to do with admin mode');
  assert.match(unlock, /unlock MAXADMIN .*status back to ACTIVE/);
  assert.match(throughRunningServer(['sessions', 'end', 'wilson']), /sessions of WILSON/);
  assert.doesNotMatch(throughRunningServer(['reset-password', 'smith']), /adminmode/);
});
