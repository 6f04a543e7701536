import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startServer, stopServersAndDropSchema, type ServerProcess } from '../../test/helpers/processes.js';

/**
 * The console's endpoints across two server processes on one PostgreSQL schema: each lists the other's sessions and
 * the two processes, and a session ended through one is refused by the other on the very next request. PGlite is
 * one process by design: without EAS_TEST_DATABASE_URL this file registers nothing (the single-process case is in
 * src/console/console.test.ts).
 */
const url = process.env.EAS_TEST_DATABASE_URL;
const ADMIN_PASSWORD = 'multiprocess-admin-pw';
const admin = {
  maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64'),
  accept: 'application/json',
};

/** A FORM login on `server`: its session cookie. */
async function formLogin(server: ServerProcess): Promise<string> {
  const response = await fetch(`${server.base}/j_security_check`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ j_username: 'MAXADMIN', j_password: ADMIN_PASSWORD }),
  });
  assert.equal(response.status, 302);
  return response.headers.getSetCookie()[0]!.split(';')[0]!;
}

if (url) {
  describe('sessions and server processes across two processes', () => {
    const schema = `eas_test_actsess_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;

    before(async () => {
      first = await startServer({ name: 'SRVA', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
      second = await startServer({ name: 'SRVB', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
    });
    after(() => stopServersAndDropSchema([first, second], url, schema));

    test('both processes are listed with their acknowledgements', async () => {
      const response = await fetch(`${first.base}/oslc/servers`, { headers: admin });
      const members = ((await response.json()) as { member: Array<Record<string, unknown>> }).member;
      assert.deepEqual(
        members.map((member) => [member.servername, member.thisserver]),
        [
          ['SRVA', true],
          ['SRVB', false],
        ],
      );
      assert.ok(members.every((member) => Number(member.applied) > 10));
    });

    test('a session opened on one process, ended through the other, is refused at once everywhere', async () => {
      const cookie = await formLogin(first);
      const whoami = (server: ServerProcess) =>
        fetch(`${server.base}/oslc/whoami`, { headers: { cookie, accept: 'application/json' } });
      // Both processes know the session (the second reads it from the database and keeps it in memory).
      assert.equal((await whoami(first)).status, 200);
      assert.equal((await whoami(second)).status, 200);
      const listed = await fetch(`${second.base}/oslc/sessions`, { headers: admin });
      const sessions = ((await listed.json()) as { member: Array<Record<string, unknown>> }).member;
      const form = sessions.find((session) => session.scheme === 'FORM')!;
      const ended = await fetch(`${second.base}/oslc/sessions/${String(form.sessionid)}`, {
        method: 'DELETE',
        headers: admin,
      });
      assert.equal(ended.status, 204);
      assert.equal((await whoami(first)).status, 401);
      assert.equal((await whoami(second)).status, 401);
    });
  });
}
