import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { runAdmin } from '../admin/cli.js';
import type { AuditRow } from './repository.js';
import { lastAuditId } from '../../test/helpers/audit.js';

/**
 * Sessions ended by someone else (docs/audit.md, "Events"): by an administrator through the API the console calls,
 * by `npm run admin -- sessions end`, and by admin mode. Each ending is one `session.end` record naming who ended
 * them and the sessions ended (their id digests and users, never a cookie).
 */
const admin = maxauth('MAXADMIN');

describe('audit trail: sessions ended by an administrator or by admin mode', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  /** A new session of WILSON: its cookie. */
  async function wilsonSession(): Promise<string> {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login',
      headers: maxauth('WILSON'),
    });
    const cookie = ([] as string[])
      .concat(response.headers['set-cookie'] ?? [])
      .find((line) => line.startsWith('JSESSIONID='));
    assert.ok(cookie, response.body);
    return cookie.split(';')[0]!;
  }

  const lastId = (): Promise<number> => lastAuditId(t.storage.db);

  /** Exactly one `session.end` record caused by `cause`. */
  async function oneEnding(cause: () => Promise<void>): Promise<AuditRow> {
    const since = await lastId();
    await cause();
    await t.services.audit.seal();
    const rows = await t.storage.db
      .selectFrom('easaudit')
      .selectAll()
      .where('auditid', '>', since)
      .where('eventtype', '=', 'session.end')
      .execute();
    assert.equal(rows.length, 1, `one session.end record, got ${JSON.stringify(rows)}`);
    assert.ok(rows[0]!.chainseq !== null, 'sealed');
    return rows[0]!;
  }

  type Ended = { by: string; ended: number; sessions: Array<{ session: string; user?: string }> };

  test('the console ends a session: one record with the administrator, the session digest and its user', async () => {
    const cookie = await wilsonSession();
    const listed = await t.app.inject({ method: 'GET', url: '/maximo/oslc/sessions', headers: admin });
    assert.equal(listed.statusCode, 200, listed.body);
    const wilson = (json(listed).member as Array<{ sessionid: number; userid: string }>).find(
      (session) => session.userid === 'WILSON',
    );
    assert.ok(wilson, listed.body);
    const row = await oneEnding(async () => {
      const ended = await t.app.inject({
        method: 'DELETE',
        url: `/maximo/oslc/sessions/${wilson.sessionid}`,
        headers: { ...admin, 'x-request-id': 'end-wilson' },
      });
      assert.equal(ended.statusCode, 204, ended.body);
    });
    assert.equal(row.userid, 'MAXADMIN');
    assert.equal(row.authscheme, 'MAXAUTH');
    assert.equal(row.requestid, 'end-wilson');
    assert.equal(row.objectname, 'MAXSESSION');
    assert.equal(row.objectkey, 'WILSON');
    const detail = JSON.parse(row.detail!) as Ended;
    assert.equal(detail.by, 'administrator');
    assert.equal(detail.ended, 1);
    assert.equal(detail.sessions[0]!.user, 'WILSON');
    assert.match(detail.sessions[0]!.session, /^[0-9a-f]{16}$/);
    const cookieValue = cookie.split('=')[1]!;
    assert.ok(!JSON.stringify(row).includes(cookieValue), 'never the cookie');
  });

  test('`sessions end` from the shell: one record for all the user’s sessions, by ADMIN-CLI', async () => {
    await wilsonSession();
    await wilsonSession();
    const row = await oneEnding(async () => {
      const output: string[] = [];
      const code = await runAdmin(['sessions', 'end', 'WILSON'], t.storage, t.config, {
        out: (text) => void output.push(text),
        err: (text) => void output.push(text),
        env: {},
      });
      assert.equal(code, 0, output.join(''));
    });
    assert.equal(row.userid, 'ADMIN-CLI');
    assert.equal(row.authscheme, 'SHELL');
    assert.equal(row.objectkey, 'WILSON');
    const detail = JSON.parse(row.detail!) as Ended;
    assert.deepEqual([detail.by, detail.ended], ['administrator', 2]);
    assert.deepEqual(
      detail.sessions.map((session) => session.user),
      ['WILSON', 'WILSON'],
    );
  });

  test('admin mode on ends ordinary sessions: one record of them beside the transition', async () => {
    await wilsonSession();
    const row = await oneEnding(async () => {
      const on = await t.app.inject({
        method: 'POST',
        url: '/maximo/oslc/adminmode/on',
        headers: admin,
        payload: { logoutmin: 0 },
      });
      assert.equal(on.statusCode, 200, on.body);
    });
    const detail = JSON.parse(row.detail!) as Ended;
    assert.equal(detail.by, 'adminmode');
    assert.ok(detail.ended >= 1);
    assert.ok(detail.sessions.some((session) => session.user === 'WILSON'));
    assert.equal(row.userid, 'MAXADMIN');
    const off = await t.app.inject({ method: 'POST', url: '/maximo/oslc/adminmode/off', headers: admin });
    assert.equal(off.statusCode, 200, off.body);
  });
});
