import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { within } from '../../test/helpers/processes.js';
import { DEMO_PASSWORD } from '../../test/helpers/storage.js';
import { runAdmin } from '../admin/cli.js';
import type { AuditRow } from './repository.js';
import { lastAuditId } from '../../test/helpers/audit.js';

/**
 * Logins and the shell's recoveries in the audit trail (docs/audit.md, "Events"): a failure, the lockout it leads to,
 * a refusal while blocked, the shell's unlock and password reset, the login after them, FORM sign-ins
 * (j_security_check) and the logout, API keys refused, an address blocked, a login refused by admin mode; admin
 * mode's pending state and database configuration applied. Each leaves exactly one record of its type, with the
 * user, the scheme and the address.
 */
const MAX_FAILURES = 3;
const WRONG = 'not-the-password-7';

describe('audit trail: logins, lockout, unlock, logout, pending admin mode, database configuration', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ EAS_MAX_FAILED_LOGINS: String(MAX_FAILURES) });
  });
  after(() => t?.close());

  const admin = maxauth('MAXADMIN');

  const lastId = (): Promise<number> => lastAuditId(t.storage.db);

  /**
   * The records `cause` left, of the types asked for (others, such as the batched successes of the administrator's
   * own per-request credentials, are not this test's), once every login is written and every record sealed.
   */
  async function recordsOf(types: readonly string[], cause: () => Promise<unknown>): Promise<AuditRow[]> {
    await t.services.logins.flush();
    const since = await lastId();
    await cause();
    await t.services.logins.flush();
    await t.services.audit.seal();
    const rows = await t.storage.db
      .selectFrom('easaudit')
      .selectAll()
      .where('auditid', '>', since)
      .orderBy('auditid')
      .execute();
    const found = rows.filter(
      (row) =>
        types.includes(row.eventtype) && !(row.eventtype === 'login.success' && row.userid === 'MAXADMIN'),
    );
    for (const row of found) assert.ok(row.chainseq !== null && row.digest !== null, 'sealed');
    return found;
  }

  async function oneRecord(type: string, cause: () => Promise<unknown>): Promise<AuditRow> {
    const rows = await recordsOf([type], cause);
    assert.equal(rows.length, 1, `one ${type} record, got ${JSON.stringify(rows)}`);
    return rows[0]!;
  }

  const inject = (options: InjectOptions) => t.app.inject(options);
  const login = (headers: Record<string, string>) =>
    inject({ method: 'POST', url: '/maximo/oslc/login', headers });
  const form = (username: string, password: string) =>
    inject({
      method: 'POST',
      url: '/maximo/j_security_check',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `j_username=${encodeURIComponent(username)}&j_password=${encodeURIComponent(password)}`,
    });

  async function shell(env: NodeJS.ProcessEnv, ...argv: string[]): Promise<void> {
    const output: string[] = [];
    const code = await runAdmin(argv, t.storage, t.config, {
      out: (text) => void output.push(text),
      err: (text) => void output.push(text),
      env,
    });
    assert.equal(code, 0, output.join(''));
  }

  function assertLogin(row: AuditRow, userid: string, scheme: string): void {
    assert.equal(row.userid, userid);
    assert.equal(row.authscheme, scheme);
    assert.equal(row.clientaddr, '127.0.0.1');
    assert.equal(row.objectname, 'MAXUSER');
    assert.equal(row.servername, 'TESTSERVER');
  }

  test('failures, the lockout, a refusal while blocked, the shell’s unlock and reset, then a login', async () => {
    const failures = await recordsOf(['login.failure', 'login.lockout'], async () => {
      for (let attempt = 0; attempt < MAX_FAILURES; attempt += 1) {
        assert.equal((await login(maxauth('SMITH', WRONG))).statusCode, 401);
      }
    });
    assert.deepEqual(
      failures.map((row) => [row.eventtype, row.outcome]),
      [
        ['login.failure', 'FAILURE'],
        ['login.failure', 'FAILURE'],
        ['login.failure', 'FAILURE'],
        ['login.lockout', 'REFUSED'],
      ],
    );
    for (const row of failures.slice(0, MAX_FAILURES)) assertLogin(row, 'SMITH', 'MAXAUTH');
    assert.equal(failures[MAX_FAILURES]!.objectkey, 'SMITH');
    assert.equal(failures[MAX_FAILURES]!.clientaddr, '127.0.0.1');

    // Blocked: the right password is a failure too, and the block is not recorded twice.
    const whileBlocked = await recordsOf(['login.failure', 'login.lockout', 'login.success'], async () => {
      assert.equal((await login(maxauth('SMITH'))).statusCode, 401);
    });
    assert.deepEqual(
      whileBlocked.map((row) => row.eventtype),
      ['login.failure'],
    );

    const unlocked = await oneRecord('login.unlock', () => shell({}, 'unlock', 'smith'));
    assert.deepEqual(
      [unlocked.userid, unlocked.authscheme, unlocked.objectkey, unlocked.requestid],
      ['ADMIN-CLI', 'SHELL', 'SMITH', null],
    );
    const reset = await oneRecord('user.password.reset', () =>
      shell({ EAS_NEW_PASSWORD: DEMO_PASSWORD }, 'reset-password', 'smith'),
    );
    assert.deepEqual([reset.userid, reset.authscheme, reset.objectkey], ['ADMIN-CLI', 'SHELL', 'SMITH']);
    assert.ok(!JSON.stringify(reset).includes(DEMO_PASSWORD), 'the new password is not recorded');

    // The shell's change reached the process through the change bus: SMITH logs in again, once recorded.
    await within(5_000, async () => (await login(maxauth('SMITH'))).statusCode === 200);
    const success = await oneRecord('login.success', async () => {
      assert.equal((await login(maxauth('SMITH'))).statusCode, 200);
    });
    assertLogin(success, 'SMITH', 'MAXAUTH');
  });

  test('FORM sign-in (j_security_check): a failure and a success; the logout ends it with one record', async () => {
    const failed = await oneRecord('login.failure', async () => {
      assert.equal((await form('wilson', WRONG)).statusCode, 401);
    });
    assertLogin(failed, 'WILSON', 'FORM');
    let cookie = '';
    const signedIn = await oneRecord('login.success', async () => {
      const response = await form('wilson', DEMO_PASSWORD);
      assert.equal(response.statusCode, 302, response.body);
      cookie = ([] as string[])
        .concat(response.headers['set-cookie'] ?? [])
        .find((line) => line.startsWith('JSESSIONID='))!
        .split(';')[0]!;
    });
    assertLogin(signedIn, 'WILSON', 'FORM');

    const loggedOut = await oneRecord('logout', async () => {
      const response = await inject({ method: 'POST', url: '/maximo/oslc/logout', headers: { cookie } });
      assert.equal(response.statusCode, 200, response.body);
    });
    assert.equal(loggedOut.userid, 'WILSON');
    assert.equal(loggedOut.outcome, 'SUCCESS');
    assert.equal(loggedOut.clientaddr, '127.0.0.1');
    // The ended session's cookie is refused, and its refusal is no second logout.
    const again = await recordsOf(['logout'], async () => {
      const response = await inject({ method: 'POST', url: '/maximo/oslc/logout', headers: { cookie } });
      assert.notEqual(response.statusCode, 500, response.body);
    });
    assert.deepEqual(again, []);
  });

  test('a key that is refused (unknown, revoked) is a failed login named by its fingerprint; a valid one is none', async () => {
    const unknown = 'f'.repeat(48);
    const refused = await oneRecord('login.failure', async () => {
      const response = await inject({ url: '/maximo/oslc/whoami', headers: { apikey: unknown } });
      assert.equal(json(response).Error?.reasonCode, 'BMXAA9549E', response.body);
    });
    assert.deepEqual(
      [refused.outcome, refused.userid, refused.authscheme, refused.clientaddr, refused.objectname],
      ['FAILURE', null, 'APIKEY', '127.0.0.1', 'APIKEYTOKEN'],
    );
    assert.equal(refused.keyid, t.services.apiKeys.keyFingerprint(unknown));
    assert.ok(!JSON.stringify(refused).includes(unknown), 'never the value');

    const created = await inject({
      method: 'POST',
      url: '/maximo/oslc/apitoken/create',
      headers: { ...maxauth('SMITH'), 'content-type': 'application/json' },
      payload: { expiration: -1 },
    });
    assert.equal(created.statusCode, 200, created.body);
    const apikey = String(json(created).apikey);
    const valid = await recordsOf(['login.failure', 'login.success'], async () => {
      for (let call = 0; call < 3; call += 1) {
        const response = await inject({ url: '/maximo/oslc/whoami', headers: { apikey } });
        assert.equal(response.statusCode, 200, response.body);
      }
    });
    assert.deepEqual(valid, [], 'a key that works is not a login');
    const revoke = await inject({ method: 'POST', url: '/maximo/oslc/apitoken/revoke', headers: { apikey } });
    assert.equal(revoke.statusCode, 200, revoke.body);
    const revoked = await oneRecord('login.failure', async () => {
      const response = await inject({ url: '/maximo/oslc/whoami', headers: { apikey } });
      assert.equal(json(response).Error?.reasonCode, 'BMXAA9549E', response.body);
    });
    assert.equal(revoked.keyid, t.services.apiKeys.keyFingerprint(apikey));
  });

  test('admin mode on with a logout period: pending, then on by its timer, then off; one record each', async () => {
    // An ordinary user's session: admin mode waits for it (pending) instead of turning on at once.
    const wilson = await login(maxauth('WILSON'));
    assert.equal(wilson.statusCode, 200, wilson.body);
    const pending = await oneRecord('adminmode.pending', async () => {
      const response = await inject({
        method: 'POST',
        url: '/maximo/oslc/adminmode/on',
        headers: admin,
        payload: { numsessions: 5, logoutmin: 0.01 },
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(json(response).state, 2, response.body);
    });
    assert.deepEqual(JSON.parse(pending.aftervalue!), { state: 2, numsessions: 5, logoutmin: 0.01 });
    const on = await oneRecord('adminmode.on', () =>
      within(10_000, async () => t.services.adminMode.current().state === 1),
    );
    const states = [on.beforevalue, on.aftervalue].map(
      (value) => (JSON.parse(value!) as { state: number }).state,
    );
    assert.deepEqual(states, [2, 1]);
    // While on, an ordinary user's right password is refused, and recorded as such (once).
    const refused = await oneRecord('login.refused', async () => {
      const response = await login(maxauth('WILSON'));
      assert.notEqual(response.statusCode, 200, response.body);
    });
    assert.deepEqual(
      [refused.outcome, refused.userid, refused.authscheme, refused.clientaddr],
      ['REFUSED', 'WILSON', 'MAXAUTH', '127.0.0.1'],
    );
    await oneRecord('adminmode.off', async () => {
      const response = await inject({ method: 'POST', url: '/maximo/oslc/adminmode/off', headers: admin });
      assert.equal(response.statusCode, 200, response.body);
    });
  });

  test('an address blocked after failures: the next attempt is one login.blocked record', async () => {
    const setProperty = async (propName: string, propValue: string) => {
      const response = await inject({
        method: 'POST',
        url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
        headers: admin,
        payload: { propName, serverName: 'COMMON', propValue },
      });
      assert.equal(response.statusCode, 200, response.body);
    };
    const stranger = { maxauth: Buffer.from(`NOSUCHUSER:${WRONG}`).toString('base64') };
    await setProperty('mxe.sec.IPblock.sec', '2');
    await setProperty('mxe.sec.IPblock.num', '2');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      assert.equal((await login(stranger)).statusCode, 401);
    }
    const blocked = await oneRecord('login.blocked', async () => {
      assert.equal((await login(stranger)).statusCode, 401);
    });
    assert.deepEqual(
      [blocked.outcome, blocked.userid, blocked.authscheme, blocked.clientaddr],
      ['REFUSED', 'NOSUCHUSER', 'MAXAUTH', '127.0.0.1'],
    );
    // The block ends with its period; the defaults back for the tests after this one.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await setProperty('mxe.sec.IPblock.num', '50');
    await setProperty('mxe.sec.IPblock.sec', '30');
  });

  test('database configuration applied: one record with every change applied', async () => {
    const on = await inject({
      method: 'POST',
      url: '/maximo/oslc/adminmode/on',
      headers: admin,
      payload: { numsessions: 5, logoutmin: 0 },
    });
    assert.equal(on.statusCode, 200, on.body);
    await within(10_000, async () => t.services.adminMode.current().state === 1);
    const staged = await inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapimaxattributecfg',
      headers: admin,
      payload: {
        objectname: 'ASSET',
        attributename: 'XAUDITED',
        changetype: 'ADD',
        maxtype: 'INTEGER',
        title: 'Audited',
      },
    });
    assert.equal(staged.statusCode, 201, staged.body);
    const applied = await oneRecord('dbconfig.apply', async () => {
      const response = await inject({ method: 'POST', url: '/maximo/oslc/dbconfig/apply', headers: admin });
      assert.equal(response.statusCode, 200, response.body);
    });
    assert.equal(applied.objectname, 'MAXATTRIBUTECFG');
    assert.equal(applied.authscheme, 'MAXAUTH');
    const after = JSON.parse(applied.aftervalue!) as Array<Record<string, unknown>>;
    assert.deepEqual(
      after.map((change) => [change.objectname, change.attributename, change.changetype]),
      [['ASSET', 'XAUDITED', 'ADD']],
    );
    assert.deepEqual(JSON.parse(applied.detail!), { structural: true, count: 1 });
    // Nothing left to apply: no second record.
    const nothing = await recordsOf(['dbconfig.apply'], () =>
      inject({ method: 'POST', url: '/maximo/oslc/dbconfig/apply', headers: admin }),
    );
    assert.deepEqual(nothing, []);
    const off = await inject({ method: 'POST', url: '/maximo/oslc/adminmode/off', headers: admin });
    assert.equal(off.statusCode, 200, off.body);
  });
});
