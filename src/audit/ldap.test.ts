import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import {
  LDAP_PASSWORDS,
  LDAP_PEOPLE,
  LDAP_STRANGER,
  SLAPD,
  slapdForTests,
  startSlapd,
  type Slapd,
} from '../../test/ldap/slapd.js';
import type { AuditRow } from './repository.js';

/**
 * Logins checked against a directory (the `appserver` mode, a real OpenLDAP server) in the audit trail
 * (docs/audit.md, "Events"): BASIC and FORM, success and failure, a directory user without a user record; one
 * record each with the name, the scheme and the address. CI has slapd (.ci/run); without it the runner skips.
 */
const installed = slapdForTests();

const basic = (login: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`,
});

describe(
  'audit trail: directory (LDAP) logins',
  { skip: installed ? false : `${SLAPD} is not installed` },
  () => {
    let slapd: Slapd;
    let t: TestApp;
    before(async () => {
      slapd = await startSlapd();
      t = await startTestApp({
        EAS_AUTH_MODE: 'appserver',
        EAS_LDAP_URL: slapd.url,
        EAS_LDAP_USER_DN_TEMPLATE: `uid={0},${LDAP_PEOPLE}`,
      });
    });
    after(async () => {
      await t?.close();
      await slapd?.stop();
    });

    /** The login records `cause` left (every login written, every record sealed), but the given user's successes. */
    async function loginRecords(cause: () => Promise<unknown>): Promise<AuditRow[]> {
      const last = await t.storage.db
        .selectFrom('easaudit')
        .select((eb) => eb.fn.max('auditid').as('id'))
        .executeTakeFirst();
      await cause();
      await t.services.logins.flush();
      await t.services.audit.seal();
      const rows = await t.storage.db
        .selectFrom('easaudit')
        .selectAll()
        .where('auditid', '>', Number(last?.id ?? 0))
        .orderBy('auditid')
        .execute();
      return rows.filter((row) => row.eventtype.startsWith('login.'));
    }

    const summary = (rows: AuditRow[]) =>
      rows.map((row) => [row.eventtype, row.outcome, row.userid, row.authscheme, row.clientaddr]);
    const login = (headers: Record<string, string>) =>
      t.app.inject({ method: 'POST', url: '/maximo/oslc/login', headers });

    test('BASIC: a wrong password, then the right one; one record each', async () => {
      const failed = await loginRecords(async () => {
        assert.equal((await login(basic('wilson', 'not-the-ldap-pw'))).statusCode, 401);
      });
      assert.deepEqual(summary(failed), [['login.failure', 'FAILURE', 'WILSON', 'BASIC', '127.0.0.1']]);
      const succeeded = await loginRecords(async () => {
        const response = await login(basic('wilson', LDAP_PASSWORDS.wilson));
        assert.equal(response.statusCode, 200, response.body);
      });
      assert.deepEqual(summary(succeeded), [['login.success', 'SUCCESS', 'WILSON', 'BASIC', '127.0.0.1']]);
    });

    test('FORM against the directory, and a directory user with no user record: one record each', async () => {
      const signedIn = await loginRecords(async () => {
        const response = await t.app.inject({
          method: 'POST',
          url: '/maximo/j_security_check',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `j_username=smith&j_password=${encodeURIComponent(LDAP_PASSWORDS.smith)}`,
        });
        assert.equal(response.statusCode, 302, response.body);
      });
      assert.deepEqual(summary(signedIn), [['login.success', 'SUCCESS', 'SMITH', 'FORM', '127.0.0.1']]);
      const stranger = await loginRecords(async () => {
        assert.equal((await login(basic(LDAP_STRANGER.uid, LDAP_STRANGER.password))).statusCode, 401);
      });
      assert.deepEqual(summary(stranger), [['login.failure', 'FAILURE', 'STRANGER', 'BASIC', '127.0.0.1']]);
    });
  },
);
