import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../app.js';
import { json, maxauth, patchUser, startTestApp, testConfig, type TestApp } from '../../test/helpers/app.js';
import { heardEverywhere } from '../../test/helpers/processes.js';
import { DEMO_PASSWORD } from '../../test/helpers/storage.js';
import { CookieSeal } from './cookie-seal.js';
import { SessionService } from './sessions.js';

/**
 * Sealed session cookies (docs/compatibility.md, "Sessions"; docs/security.md, "Session cookies"): every answer to
 * `maxauth`, BASIC or an API key with `enablesession=1` carries a `JSESSIONID` that nothing stores until a request
 * replays it. Two app instances on one database stand for two processes (the change bus delivers between them);
 * src/auth/multiprocess.test.ts repeats the cross-process points on real processes on PostgreSQL.
 */
const ROOT = '/maximo/oslc';
const PER_USER = 5;

function setCookies(response: LightMyRequestResponse): string[] {
  return ([] as string[]).concat(response.headers['set-cookie'] ?? []);
}

/** `JSESSIONID=<value>` of the answer, as a client's cookie jar keeps it. */
function sessionCookie(response: LightMyRequestResponse): string {
  const line = setCookies(response).find((cookie) => cookie.startsWith('JSESSIONID='));
  assert.ok(line, `a session cookie: ${response.statusCode} ${response.body.slice(0, 300)}`);
  return line.split(';')[0]!;
}

function reasonCode(response: LightMyRequestResponse): unknown {
  return json(response).Error?.reasonCode;
}

/** Where an absolute href of an answer points, for `inject`. */
function local(href: string): string {
  const url = new URL(href);
  return url.pathname + url.search;
}

describe('sealed session cookies', () => {
  let t: TestApp;
  let other: FastifyInstance;
  let wilsonKey: string;
  let adminKey: string;

  const count = async (table: 'maxsession' | 'maxsessionclaim', userid?: string): Promise<number> => {
    const { rows } =
      userid === undefined
        ? await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(
            t.storage.db,
          )
        : await sql<{
            n: number | string;
          }>`select count(*) as n from maxsession where userid = ${userid}`.execute(t.storage.db);
    return Number(rows[0]!.n);
  };
  const whoami = (app: FastifyInstance, headers: Record<string, string>) =>
    app.inject({ url: `${ROOT}/whoami`, headers });
  const issued = async (headers: Record<string, string>, app: FastifyInstance = t.app): Promise<string> => {
    const response = await whoami(app, headers);
    assert.equal(response.statusCode, 200, response.body);
    return sessionCookie(response);
  };
  const createKey = async (userid: 'MAXADMIN' | 'WILSON'): Promise<string> => {
    const created = await t.app.inject({
      method: 'POST',
      url: `${ROOT}/apitoken/create`,
      headers: { ...maxauth(userid), 'content-type': 'application/json' },
      payload: JSON.stringify({ expiration: -1 }),
    });
    assert.equal(created.statusCode, 200, created.body);
    return String(json(created).apikey);
  };
  const patchSmith = (fields: Record<string, unknown>) => patchUser(t.app, 'SMITH', fields);

  before(async () => {
    t = await startTestApp({ EAS_SESSIONS_PER_USER: String(PER_USER) });
    const built = await buildApp(
      testConfig({ EAS_SERVER_NAME: 'OTHER', EAS_SESSIONS_PER_USER: String(PER_USER) }),
      t.storage,
    );
    other = built.app;
    await other.ready();
    wilsonKey = await createKey('WILSON');
    adminKey = await createKey('MAXADMIN');
  });
  after(async () => {
    await other?.close();
    await t?.close();
  });

  test("IBM's Python client pages with maxauth and stablepaging=1: the first answer's JSESSIONID alone walks every page", async () => {
    // OSResource.fetch_first_page: maxauth and lean=1 on every call, then `resp.cookies['JSESSIONID']`.
    const query = 'lean=1&oslc.pageSize=7&ignorecollectionref=1&oslc.select=assetnum&collectioncount=1';
    const sessions = await count('maxsession');
    const first = await t.app.inject({
      url: `${ROOT}/os/mxapiasset?${query}&stablepaging=1`,
      headers: maxauth('WILSON'),
    });
    assert.equal(first.statusCode, 200, first.body);
    const cookie = sessionCookie(first);
    assert.match(setCookies(first)[0]!, /^JSESSIONID=[^;]+; Path=\/maximo; HttpOnly; SameSite=Lax$/);
    assert.equal(await count('maxsession'), sessions, 'nothing stored for the answer');
    const total = Number(json(first).responseInfo?.totalCount);
    assert.ok(total > 14, `several pages (${total} assets)`);

    const walk = async (firstPage: LightMyRequestResponse, headers: Record<string, string>) => {
      const seen = json(firstPage).member!.map((member) => member.assetnum);
      let next = json(firstPage).responseInfo?.nextPage as { href: string } | undefined;
      for (let page = 0; next !== undefined; page += 1) {
        // Every process serves the session: the pages alternate between the two.
        const response = await (page % 2 === 0 ? other : t.app).inject({ url: local(next.href), headers });
        assert.equal(response.statusCode, 200, response.body);
        seen.push(...json(response).member!.map((member) => member.assetnum));
        next = json(response).responseInfo?.nextPage as { href: string } | undefined;
      }
      return seen;
    };
    // Only the cookie: its first replay stores the session, the later ones run in it (no new cookie).
    const byCookie = await walk(first, { cookie });
    assert.equal(byCookie.length, total);
    assert.equal(new Set(byCookie).size, total, 'every member once');
    assert.equal(await count('maxsession'), sessions + 1, 'the replayed cookie is one stored session');
    const again = await t.app.inject({ url: `${ROOT}/os/mxapiasset?${query}`, headers: { cookie } });
    assert.deepEqual(setCookies(again), [], 'a request in the session gets no new cookie');

    // The client itself (fetch_next_page) sends maxauth and lean=1 again, without the cookie: as good.
    const restart = await t.app.inject({
      url: `${ROOT}/os/mxapiasset?${query}&stablepaging=1`,
      headers: maxauth('WILSON'),
    });
    assert.deepEqual(await walk(restart, maxauth('WILSON')), byCookie);
  });

  test('1,000 such queries whose cookies are never replayed leave the stored session count unchanged', async () => {
    const sessions = await count('maxsession');
    const claims = await count('maxsessionclaim');
    const cookies = new Set<string>();
    for (let call = 0; call < 1000; call += 1) {
      const response = await t.app.inject({
        url: `${ROOT}/os/mxapiasset?lean=1&oslc.pageSize=1&stablepaging=1&oslc.select=assetnum&oslc.where=assetnum="11430"`,
        headers: maxauth('WILSON'),
      });
      assert.equal(response.statusCode, 200, response.body);
      cookies.add(sessionCookie(response));
    }
    assert.equal(cookies.size, 1000);
    assert.equal(await count('maxsession'), sessions);
    assert.equal(await count('maxsessionclaim'), claims, 'nothing claimed either');
  });

  test('1,000 calls with apikey and enablesession=1 never replayed leave the same user’s cookie session working', async () => {
    // A console or Java-client session of the user, opened first.
    const login = await t.app.inject({ method: 'POST', url: `${ROOT}/login`, headers: maxauth('WILSON') });
    const console = sessionCookie(login);
    const before = await count('maxsession', 'WILSON');
    // The Python client with session=True: apikey header, enablesession=1 and lean=1 on every call.
    for (let call = 0; call < 1000; call += 1) {
      const response = await (call % 2 === 0 ? t.app : other).inject({
        url: `${ROOT}/whoami?enablesession=1&lean=1`,
        headers: { apikey: wilsonKey },
      });
      assert.equal(response.statusCode, 200, response.body);
      sessionCookie(response);
    }
    assert.equal(
      await count('maxsession', 'WILSON'),
      before,
      'no session stored for a cookie never replayed',
    );
    for (const app of [t.app, other]) assert.equal((await whoami(app, { cookie: console })).statusCode, 200);
    // A key without enablesession is silent.
    assert.deepEqual(setCookies(await whoami(t.app, { apikey: wilsonKey })), []);
    await t.app.inject({ method: 'POST', url: `${ROOT}/logout`, headers: { cookie: console } });
  });

  test("admin mode's numsessions counts only replayed cookies, and they cannot lock the administrator out", async () => {
    const login = sessionCookie(
      await t.app.inject({ method: 'POST', url: `${ROOT}/login`, headers: maxauth('MAXADMIN') }),
    );
    const on = await t.app.inject({
      method: 'POST',
      url: `${ROOT}/adminmode/on`,
      headers: { cookie: login, 'content-type': 'application/json' },
      payload: JSON.stringify({ numsessions: 2, logoutmin: 0 }),
    });
    assert.equal(on.statusCode, 200, on.body);
    try {
      const state = async (headers: Record<string, string>) => {
        const response = await t.app.inject({ url: `${ROOT}/adminmode/state`, headers });
        assert.equal(response.statusCode, 200, response.body);
        return json(response);
      };
      const keyCookies: string[] = [];
      for (let call = 0; call < 50; call += 1) {
        const response = await other.inject({
          url: `${ROOT}/adminmode/state?enablesession=1`,
          headers: { apikey: adminKey },
        });
        assert.equal(response.statusCode, 200, response.body);
        keyCookies.push(sessionCookie(response));
      }
      assert.equal((await state({ cookie: login })).adminsessions, 1, 'only the login counts');
      // A replayed cookie is a session like a login's: counted, up to numsessions.
      assert.equal((await whoami(t.app, { cookie: keyCookies[0]! })).statusCode, 200);
      assert.equal((await state({ cookie: login })).adminsessions, 2);
      const beyond = await whoami(other, { cookie: keyCookies[1]! });
      assert.equal(beyond.statusCode, 401, 'past numsessions, as a login is');
      assert.equal(reasonCode(beyond), 'BMXAA0021E');
      // A client with a cookie jar and maxauth on every call keeps reaching the state and the off switch.
      let jar = keyCookies[2]!;
      for (let poll = 0; poll < 20; poll += 1) {
        const response = await (poll % 2 === 0 ? t.app : other).inject({
          url: `${ROOT}/adminmode/state`,
          headers: { ...maxauth('MAXADMIN'), cookie: jar },
        });
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(json(response).adminsessions, 2);
        jar = sessionCookie(response);
      }
    } finally {
      const off = await other.inject({
        method: 'POST',
        url: `${ROOT}/adminmode/off`,
        headers: maxauth('MAXADMIN'),
      });
      assert.equal(off.statusCode, 200, off.body);
      // Turned off on the other instance: this one hears it through the bus, before the next test logs in here.
      await heardEverywhere('admin mode off on this instance too', async () => {
        const response = await whoami(t.app, maxauth('WILSON'));
        return response.statusCode === 200;
      });
      await t.app.inject({ method: 'POST', url: `${ROOT}/logout`, headers: { cookie: login } });
    }
  });

  test('a forged or altered cookie is refused and stores nothing', async () => {
    const sessions = await count('maxsession');
    const genuine = await issued(maxauth('WILSON'));
    const value = genuine.slice('JSESSIONID='.length);
    const flip = (text: string, at: number) =>
      text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const forged = new CookieSeal(randomBytes(32)).seal({
      userid: 'MAXADMIN',
      issuedAt: Date.now(),
      credentialStamp: '',
      scheme: 'maxauth',
      lean: null,
      csrfRequired: false,
      withToken: false,
    }).sessionCookie;
    for (const [what, cookie] of [
      ['a byte of the body altered', `JSESSIONID=${flip(value, 40)}`],
      ['the tag altered', `JSESSIONID=${flip(value, 20)}`],
      ['cut short', `JSESSIONID=${value.slice(0, -4)}`],
      ['sealed under another key', `JSESSIONID=${forged}`],
      ['not base64url', `JSESSIONID=s.${'*'.repeat(60)}`],
    ] as const) {
      for (const app of [t.app, other]) {
        const response = await whoami(app, { cookie });
        assert.equal(response.statusCode, 401, `${what}: ${response.body}`);
        assert.equal(reasonCode(response), 'BMXAA0021E', what);
      }
    }
    assert.equal(await count('maxsession'), sessions);
    assert.equal(json(await whoami(other, { cookie: genuine })).userid, 'WILSON', 'the genuine one works');
  });

  test('a never-replayed cookie dies with a password change and with deactivation', async () => {
    const beforeChange = await issued(maxauth('SMITH'));
    await patchSmith({ password: 'a-new-password-1' });
    try {
      await heardEverywhere('the cookie refused after the password change', async () => {
        const response = await whoami(other, { cookie: beforeChange });
        return response.statusCode === 401 && reasonCode(response) === 'BMXAA0021E';
      });
      const fresh = await issued(maxauth('SMITH', 'a-new-password-1'), other);
      assert.equal((await whoami(t.app, { cookie: fresh })).statusCode, 200, 'a cookie issued after works');
      assert.equal(
        (await whoami(t.app, { cookie: beforeChange })).statusCode,
        401,
        'and the old one stays dead',
      );
      await t.app.inject({ method: 'POST', url: `${ROOT}/logout`, headers: { cookie: fresh } });
    } finally {
      await patchSmith({ password: DEMO_PASSWORD });
    }

    const beforeDeactivation = await issued(maxauth('SMITH'));
    await patchSmith({ status: 'INACTIVE' });
    try {
      await heardEverywhere('the cookie refused after the deactivation', async () => {
        return (await whoami(other, { cookie: beforeDeactivation })).statusCode === 401;
      });
      assert.equal(await count('maxsession', 'SMITH'), 0, 'nothing stored for it');
    } finally {
      await patchSmith({ status: 'ACTIVE' });
    }
  });

  test('the first replay stores one session even when both processes receive it at once', async () => {
    const sessions = await count('maxsession', 'WILSON');
    const cookies = await Promise.all(
      Array.from({ length: 4 }, (_, index) => issued(maxauth('WILSON'), index % 2 === 0 ? t.app : other)),
    );
    const answers = await Promise.all(
      cookies.flatMap((cookie) => [whoami(t.app, { cookie }), whoami(other, { cookie })]),
    );
    for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(await count('maxsession', 'WILSON'), sessions + 4, 'one stored session per cookie');
    for (const cookie of cookies)
      await t.app.inject({ method: 'POST', url: `${ROOT}/logout`, headers: { cookie } });
  });

  test('logout of a never-replayed cookie ends it on every process; a logged-out cookie is never stored again', async () => {
    const sessions = await count('maxsession');
    const cookie = await issued(maxauth('WILSON'), other);
    const logout = await t.app.inject({ method: 'POST', url: `${ROOT}/logout`, headers: { cookie } });
    assert.equal(logout.statusCode, 200, logout.body);
    for (const app of [other, t.app]) {
      const refused = await whoami(app, { cookie });
      assert.equal(refused.statusCode, 401);
      assert.equal(reasonCode(refused), 'BMXAA0021E');
    }
    assert.equal(await count('maxsession'), sessions, 'its logout stored no session');

    const used = await issued(maxauth('WILSON'));
    assert.equal((await whoami(other, { cookie: used })).statusCode, 200);
    await other.inject({ method: 'POST', url: `${ROOT}/logout`, headers: { cookie: used } });
    for (const app of [t.app, other]) assert.equal((await whoami(app, { cookie: used })).statusCode, 401);
    assert.equal(await count('maxsession'), sessions);
  });

  test('a replayed cookie is a session like a login’s: its lean default, the per-user bound, no cookie on refusals', async () => {
    const assets = '/maximo/api/os/mxapiasset?oslc.select=assetnum&oslc.pageSize=1';
    const namespaced = sessionCookie(
      await t.app.inject({ url: `${assets}&lean=0`, headers: maxauth('WILSON') }),
    );
    const onApi = json(await other.inject({ url: assets, headers: { cookie: namespaced } }));
    assert.ok(Array.isArray(onApi['rdfs:member']), 'lean=0 of the issuing request: namespaced even on /api');

    // Replayed cookies count against EAS_SESSIONS_PER_USER like logins: the oldest ends.
    const replayed: string[] = [];
    for (let index = 0; index <= PER_USER; index += 1) {
      const cookie = await issued(maxauth('WILSON'));
      assert.equal((await whoami(other, { cookie })).statusCode, 200);
      replayed.push(cookie);
    }
    assert.equal(await count('maxsession', 'WILSON'), PER_USER);
    assert.equal((await whoami(t.app, { cookie: replayed[PER_USER]! })).statusCode, 200);
    for (const cookie of replayed)
      await t.app.inject({ method: 'POST', url: `${ROOT}/logout`, headers: { cookie } });

    // A refused request carries no cookie.
    const missing = await t.app.inject({
      url: `${ROOT}/os/mxapiasset/999999999`,
      headers: maxauth('WILSON'),
    });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(setCookies(missing), []);
  });
});

describe('sealed session cookies: the timeouts', () => {
  let t: TestApp;
  let clock = 0;
  let sessions: SessionService;
  /** Failures of the activity write-back, until the database closes (writes still under way then are moot). */
  const backgroundErrors: unknown[] = [];
  let closing = false;
  const IDLE_MINUTES = 30;
  const MAX_MINUTES = 120;
  const MINUTE = 60_000;

  before(async () => {
    t = await startTestApp();
    clock = Date.now();
    sessions = new SessionService({
      db: t.storage.db,
      bus: t.storage.bus,
      idleMinutes: IDLE_MINUTES,
      maxMinutes: MAX_MINUTES,
      maxPerUser: PER_USER,
      onBackgroundError: (error) => {
        if (!closing) backgroundErrors.push(error);
      },
      now: () => clock,
    });
    sessions.setCookieKey(randomBytes(32));
  });
  after(async () => {
    closing = true;
    await t?.close();
  });

  const issue = () =>
    sessions.issue({
      userid: 'WILSON',
      credentialStamp: 'stamp',
      scheme: 'maxauth',
      lean: null,
      csrfRequired: false,
      withToken: true,
    });

  test('the idle timeout counts from the issue until the first replay, then from the latest activity', async () => {
    const idle = issue();
    clock += IDLE_MINUTES * MINUTE + 1;
    assert.equal(await sessions.resolve('session', idle.sessionCookie), undefined, 'idle before any replay');

    const replayed = issue();
    clock += IDLE_MINUTES * MINUTE - 1;
    const pending = await sessions.resolve('session', replayed.sessionCookie);
    assert.ok(pending?.unreplayed, 'not stored yet');
    const stored = await sessions.materialise(pending, null);
    assert.ok(stored && stored.unreplayed === undefined, 'stored at its first replay');
    clock += IDLE_MINUTES * MINUTE - 1;
    assert.equal(
      (await sessions.resolve('session', replayed.sessionCookie))?.id,
      stored.id,
      'alive by activity',
    );
    assert.equal(
      (await sessions.resolve('token', replayed.tokenCookie!))?.id,
      stored.id,
      'the token cookie too',
    );
    clock += IDLE_MINUTES * MINUTE + 1;
    assert.equal(
      await sessions.resolve('session', replayed.sessionCookie),
      undefined,
      'idle after its last use',
    );
    assert.deepEqual(backgroundErrors, []);
  });

  test('the maximum timeout counts from the issue, replayed or not', async () => {
    const never = issue();
    const used = issue();
    const pending = await sessions.resolve('session', used.sessionCookie);
    assert.ok(pending && (await sessions.materialise(pending, null)));
    for (let elapsed = 0; elapsed + IDLE_MINUTES / 2 < MAX_MINUTES; elapsed += IDLE_MINUTES / 2) {
      clock += (IDLE_MINUTES / 2) * MINUTE;
      assert.ok(await sessions.resolve('session', used.sessionCookie), `alive after ${elapsed} minutes`);
    }
    clock += (IDLE_MINUTES / 2) * MINUTE;
    assert.equal(await sessions.resolve('session', used.sessionCookie), undefined, 'past the maximum');
    assert.equal(await sessions.resolve('session', never.sessionCookie), undefined);
    assert.deepEqual(backgroundErrors, []);
  });
});
