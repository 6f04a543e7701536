import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  startServer,
  stopServersAndDropSchema,
  whileStopped,
  within,
  type ServerProcess,
} from '../../test/helpers/processes.js';

/**
 * Sessions and login blocks across two real server processes (`src/server.ts`) on one PostgreSQL schema. PGlite is
 * one process by design (src/auth/login.test.ts runs two app instances on one database instead), so without
 * EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'multiprocess-admin-pw';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };

/** `name=value` of the first `Set-Cookie` naming the cookie. */
function cookieOf(response: Response, name: string): string {
  const line = response.headers.getSetCookie().find((cookie) => cookie.startsWith(`${name}=`));
  assert.ok(line, `${name} is set`);
  return line.split(';')[0]!;
}

async function reasonCode(response: Response): Promise<unknown> {
  return ((await response.json()) as { Error?: { reasonCode?: unknown } }).Error?.reasonCode;
}

if (url) {
  describe('sessions across two server processes on one PostgreSQL', () => {
    const schema = `eas_test_auth_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;

    before(async () => {
      // One after the other: the first creates the schema, migrates it and creates the administrator.
      first = await startServer({ name: 'AUTHA', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
      second = await startServer({ name: 'AUTHB', databaseUrl: url, schema, adminPassword: ADMIN_PASSWORD });
    });

    after(() => stopServersAndDropSchema([first, second], url, schema));

    test('a session made on one process works on the other; logout on one is refused on the other at once', async () => {
      const login = await fetch(`${first.base}/oslc/login`, { method: 'POST', headers: admin });
      assert.equal(login.status, 200);
      const cookie = cookieOf(login, 'JSESSIONID');
      const whoami = await fetch(`${second.base}/oslc/whoami`, { headers: { cookie } });
      assert.equal(whoami.status, 200);
      assert.equal(((await whoami.json()) as { userid: string }).userid, 'MAXADMIN');

      const logout = await fetch(`${first.base}/oslc/logout`, { method: 'POST', headers: { cookie } });
      assert.equal(logout.status, 200);
      await logout.arrayBuffer();
      const refused = await fetch(`${second.base}/oslc/whoami`, { headers: { cookie } });
      assert.equal(refused.status, 401, 'the other process dropped the session when the logout committed');
      assert.equal(await reasonCode(refused), 'BMXAA0021E');
    });

    test('a logout is answered only once a process that hears it late has dropped the session', async () => {
      const cookie = cookieOf(
        await fetch(`${first.base}/oslc/login`, { method: 'POST', headers: admin }),
        'JSESSIONID',
      );
      const known = await fetch(`${second.base}/oslc/whoami`, { headers: { cookie } });
      assert.equal(known.status, 200, 'the second process holds the session in memory');
      await known.arrayBuffer();

      const { response: logout, afterResume } = await whileStopped(second, 500, () =>
        fetch(`${first.base}/oslc/logout`, { method: 'POST', headers: { cookie } }),
      );
      assert.equal(logout.status, 200);
      await logout.arrayBuffer();
      assert.ok(afterResume, 'answered after the stopped process resumed');
      const refused = await fetch(`${second.base}/oslc/whoami`, { headers: { cookie } });
      assert.equal(refused.status, 401);
      assert.equal(await reasonCode(refused), 'BMXAA0021E');
    });

    test('the token cookie of a FORM login on one process restores the session on the other', async () => {
      const form = await fetch(`${second.base}/j_security_check`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `j_username=maxadmin&j_password=${encodeURIComponent(ADMIN_PASSWORD)}`,
        redirect: 'manual',
      });
      assert.equal(form.status, 302);
      assert.ok(form.headers.getSetCookie()[0]!.startsWith('JSESSIONID='), 'the session cookie first');
      const token = cookieOf(form, 'LtpaToken2');
      const whoami = await fetch(`${first.base}/oslc/whoami`, { headers: { cookie: token } });
      assert.equal(whoami.status, 200);
      await whoami.arrayBuffer();
    });

    test('an address blocked on one process is refused on the other, until the window ends', async () => {
      const session = cookieOf(await fetch(`${first.base}/oslc`, { headers: admin }), 'JSESSIONID');
      const setProperty = async (propName: string, propValue: string) => {
        const response = await fetch(`${first.base}/oslc/service/system?action=wsmethod:setProperty`, {
          method: 'POST',
          headers: { cookie: session, 'content-type': 'application/json' },
          body: JSON.stringify({ propName, propValue }),
        });
        assert.equal(response.status, 200, await response.text());
      };
      const windowSeconds = 3;
      await setProperty('mxe.sec.IPblock.sec', String(windowSeconds));
      await setProperty('mxe.sec.IPblock.num', '3');
      // Live properties reach the other process through the change bus too: wait until it reads both (a fixed pause
      // is too short on a loaded machine).
      const seenElsewhere = async (propName: string) => {
        const address = `${second.base}/oslc/service/system?action=wsmethod:getProperty&propName=${propName}`;
        const response = await fetch(address, { headers: admin });
        return ((await response.json()) as { return?: string }).return;
      };
      await within(
        10_000,
        async () =>
          (await seenElsewhere('mxe.sec.IPblock.sec')) === String(windowSeconds) &&
          (await seenElsewhere('mxe.sec.IPblock.num')) === '3',
      );
      const wrong = { maxauth: Buffer.from('MAXADMIN:wrong-password').toString('base64') };
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const response = await fetch(`${first.base}/oslc/login`, { method: 'POST', headers: wrong });
        assert.equal(response.status, 401);
        await response.arrayBuffer();
      }
      // The block runs for the window from the failure that caused it, at the latest this one.
      const blockedAt = Date.now();
      const elsewhere = await fetch(`${second.base}/oslc/login`, { method: 'POST', headers: admin });
      assert.equal(
        elsewhere.status,
        401,
        'the right password, from the blocked address, on the other process',
      );
      assert.equal(await reasonCode(elsewhere), 'BMXAA7901E');

      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, blockedAt + windowSeconds * 1000 + 300 - Date.now())),
      );
      const lifted = await fetch(`${second.base}/oslc/login`, { method: 'POST', headers: admin });
      assert.equal(lifted.status, 200, 'lifted after the window');
      await lifted.arrayBuffer();
      await setProperty('mxe.sec.IPblock.num', '50');
      await setProperty('mxe.sec.IPblock.sec', '30');
    });

    test("a per-request maxauth answer's cookie is stored only when replayed, on any process; its logout on one ends it on the other", async () => {
      const whoami = (base: string, cookie: string) => fetch(`${base}/oslc/whoami`, { headers: { cookie } });
      const sealed = async (base: string) => {
        const response = await fetch(`${base}/oslc/whoami`, { headers: admin });
        assert.equal(response.status, 200);
        await response.arrayBuffer();
        return cookieOf(response, 'JSESSIONID');
      };
      // Issued by one process, replayed first on the other: opened there with the key both derive.
      const replayed = await sealed(first.base);
      for (const base of [second.base, first.base, second.base]) {
        const response = await whoami(base, replayed);
        assert.equal(response.status, 200);
        assert.deepEqual(response.headers.getSetCookie(), [], 'a request in the session gets no new cookie');
        await response.arrayBuffer();
      }
      // Never replayed, logged out on one process: refused on the other at once.
      const neverReplayed = await sealed(second.base);
      const logout = await fetch(`${first.base}/oslc/logout`, {
        method: 'POST',
        headers: { cookie: neverReplayed },
      });
      assert.equal(logout.status, 200);
      await logout.arrayBuffer();
      for (const base of [second.base, first.base]) {
        const refused = await whoami(base, neverReplayed);
        assert.equal(refused.status, 401);
        assert.equal(await reasonCode(refused), 'BMXAA0021E');
      }
      const end = await fetch(`${second.base}/oslc/logout`, {
        method: 'POST',
        headers: { cookie: replayed },
      });
      assert.equal(end.status, 200);
      await end.arrayBuffer();
      assert.equal(
        (await whoami(first.base, replayed)).status,
        401,
        'a logged-out cookie is not stored again',
      );
    });

    test('per-request maxauth answers a sealed cookie each time, repeated on a kept-alive connection; a password changed on one process refuses the old value and its cookies on the other within 1 s', async () => {
      const property = '/oslc/service/system?action=wsmethod:getProperty&propName=mxe.oslc.maxpagesize';
      const cookies = new Set<string>();
      for (let call = 0; call < 20; call += 1) {
        const response = await fetch(`${second.base}${property}`, { headers: admin });
        assert.equal(response.status, 200);
        cookies.add(cookieOf(response, 'JSESSIONID'));
        await response.arrayBuffer();
      }
      // fetch keeps its connection alive: its answers repeat the cookie within a second (docs/security.md).
      assert.ok(cookies.size < 20, `answers on one connection repeat their cookie (${cookies.size} cookies)`);
      for (const cookie of cookies) assert.match(cookie, /^JSESSIONID=s\./);
      const unreplayed = [...cookies][0]!;
      const person = (await (
        await fetch(
          `${first.base}/oslc/os/mxapiperuser?lean=1&oslc.select=personid&oslc.where=personid="MAXADMIN"`,
          {
            headers: admin,
          },
        )
      ).json()) as { member: Array<{ href: string }> };
      const changePassword = async (from: Record<string, string>, password: string) => {
        const response = await fetch(
          `${first.base}${new URL(person.member[0]!.href).pathname.replace(/^\/maximo/, '')}`,
          {
            method: 'POST',
            headers: {
              ...from,
              'x-method-override': 'PATCH',
              patchtype: 'MERGE',
              'content-type': 'application/json',
            },
            body: JSON.stringify({ maxuser: [{ userid: 'MAXADMIN', password }] }),
          },
        );
        assert.equal(response.status, 204, await response.text());
      };
      const changed = 'multiprocess-admin-pw-2';
      const fresh = { maxauth: Buffer.from(`MAXADMIN:${changed}`).toString('base64') };
      await changePassword(admin, changed);
      try {
        const started = Date.now();
        let status = 200;
        while (status !== 401 && Date.now() - started <= 1000) {
          const response = await fetch(`${second.base}${property}`, { headers: admin });
          status = response.status;
          await response.arrayBuffer();
        }
        assert.equal(status, 401, 'the old maxauth refused on the other process within 1 s');
        const oldCookie = await fetch(`${second.base}${property}`, { headers: { cookie: unreplayed } });
        assert.equal(oldCookie.status, 401, 'a cookie issued before the change is refused');
        await oldCookie.arrayBuffer();
        assert.equal((await fetch(`${second.base}${property}`, { headers: fresh })).status, 200);
      } finally {
        await changePassword(fresh, ADMIN_PASSWORD);
      }
    });
  });
}
