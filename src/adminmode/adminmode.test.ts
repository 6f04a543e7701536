import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../app.js';
import { isMaximoError } from '../errors.js';
import { json, maxauth, startTestApp, testConfig, type TestApp } from '../../test/helpers/app.js';
import { DEMO_PASSWORD } from '../../test/helpers/storage.js';
import type { AdminModeService } from './service.js';

/**
 * Admin mode on one database served by two app instances (the cross-process points on real server processes are in
 * multiprocess.test.ts, on PostgreSQL): who may change it, the pending state and its end after `logoutmin`, who may
 * log in meanwhile, `numsessions`, off, the record of changes, and a restart.
 */
const ROOT = '/maximo/oslc';

function sessionCookie(response: LightMyRequestResponse): string {
  const line = ([] as string[])
    .concat(response.headers['set-cookie'] ?? [])
    .find((cookie) => cookie.startsWith('JSESSIONID='));
  assert.ok(line, `a session cookie: ${response.statusCode} ${response.body}`);
  return line.split(';')[0]!;
}

function reasonCode(response: LightMyRequestResponse): unknown {
  return json(response).Error?.reasonCode;
}

async function login(app: FastifyInstance, headers: Record<string, string>): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: `${ROOT}/login`, headers });
}

function basic(userid: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${userid}:${password}`).toString('base64')}` };
}

function formLogin(app: FastifyInstance, userid: string, password: string): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: '/maximo/j_security_check',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `j_username=${userid}&j_password=${encodeURIComponent(password)}`,
  });
}

async function until(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) assert.fail(`${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

function structuralRefusal(adminMode: AdminModeService): unknown {
  try {
    adminMode.assertStructuralChangesAllowed();
    return undefined;
  } catch (error) {
    assert.ok(isMaximoError(error));
    return error.reasonCode;
  }
}

describe('admin mode', () => {
  let t: TestApp;
  let other: FastifyInstance;
  let otherAdminMode: AdminModeService;
  let adminCookie: string;
  let wilsonKey: string;

  const post = (app: FastifyInstance, path: string, cookie: string, body?: unknown) =>
    app.inject({
      method: 'POST',
      url: `${ROOT}${path}`,
      headers: { cookie, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
  const get = (app: FastifyInstance, path: string, headers: Record<string, string>) =>
    app.inject({ method: 'GET', url: `${ROOT}${path}`, headers });
  const state = async (app: FastifyInstance) => {
    const response = await get(app, '/adminmode/state', { cookie: adminCookie });
    assert.equal(response.statusCode, 200, response.body);
    return json(response);
  };

  before(async () => {
    t = await startTestApp();
    const built = await buildApp(testConfig({ EAS_SERVER_NAME: 'OTHER' }), t.storage);
    other = built.app;
    otherAdminMode = built.services.adminMode;
    await other.ready();
    adminCookie = sessionCookie(await login(t.app, maxauth('MAXADMIN')));
    const wilson = sessionCookie(await login(t.app, maxauth('WILSON')));
    const created = await post(t.app, '/apitoken/create', wilson, { expiration: -1 });
    assert.equal(created.statusCode, 200, created.body);
    wilsonKey = String(json(created).apikey);
    await post(t.app, '/logout', wilson);
  });
  after(async () => {
    await other.close();
    await t.close();
  });

  test('only administrators read or change it', async () => {
    const wilson = sessionCookie(await login(t.app, maxauth('WILSON')));
    for (const response of [
      await post(t.app, '/adminmode/on', wilson, { numsessions: 1, logoutmin: 0 }),
      await post(t.app, '/adminmode/off', wilson),
      await get(t.app, '/adminmode/state', { cookie: wilson }),
      await get(t.app, '/adminmode/history', { cookie: wilson }),
      await t.app.inject({ method: 'POST', url: '/maximo/api/adminmode/on', headers: { apikey: wilsonKey } }),
    ]) {
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(reasonCode(response), 'BMXAA0024E');
    }
    const body = await state(t.app);
    assert.equal(body.state, 0);
    assert.equal(t.services.adminMode.current().state, 0);
    await post(t.app, '/logout', wilson);
  });

  test('the body is validated', async () => {
    for (const body of [
      { numsessions: 0 },
      { logoutmin: -1 },
      { numsessions: 1.5 },
      { numsessions: 'many' },
    ]) {
      const response = await post(t.app, '/adminmode/on', adminCookie, body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(reasonCode(response), 'EAS0004E');
    }
    assert.equal((await state(t.app)).state, 0);
  });

  test('structural changes are refused while admin mode is off', () => {
    assert.equal(structuralRefusal(t.services.adminMode), 'BMXAA0578E');
  });

  test('on: pending on the other instance; ordinary users are warned, refused new logins and keys, then logged out after logoutmin', async () => {
    // A session of an ordinary user, on the other instance, before admin mode is turned on.
    const wilson = sessionCookie(await login(other, maxauth('WILSON')));
    const logoutmin = 0.04; // 2.4 s
    const on = await post(t.app, '/adminmode/on', adminCookie, { numsessions: 2, logoutmin });
    assert.equal(on.statusCode, 200, on.body);
    const turnedOn = json(on);
    assert.equal(turnedOn.state, 2);
    assert.equal(turnedOn.changeby, 'MAXADMIN');
    assert.equal(turnedOn.logoutmin, logoutmin);
    const logoutAt = Date.parse(String(turnedOn.logoutdate));
    assert.ok(Math.abs(logoutAt - (Date.now() + logoutmin * 60_000)) < 2000, String(turnedOn.logoutdate));

    await until(
      () => otherAdminMode.current().state === 2,
      1000,
      'the other instance sees the pending state',
    );
    const pending = await state(other);
    assert.equal(pending.state, 2);
    assert.equal(pending.numsessions, 2);
    assert.equal(pending.remainingsessions, 1, 'WILSON');
    assert.equal(pending.servername, 'TESTSERVER');
    assert.equal(structuralRefusal(otherAdminMode), 'BMXAA0578E', 'pending is not on');

    const warned = await get(other, '/whoami', { cookie: wilson });
    assert.equal(warned.statusCode, 200);
    assert.match(String(warned.headers.warning), /^199 eas "BMXAA4030I - .*Your session ends at /);
    const admins = await get(other, '/whoami', { cookie: adminCookie });
    assert.equal(admins.headers.warning, undefined, 'no warning for users who may stay');

    for (const app of [t.app, other]) {
      for (const refused of [
        await login(app, maxauth('WILSON')),
        await login(app, basic('WILSON', DEMO_PASSWORD)),
        await formLogin(app, 'WILSON', DEMO_PASSWORD),
        await get(app, '/whoami', { apikey: wilsonKey }),
        await app.inject({ method: 'GET', url: '/maximo/api/whoami', headers: { apikey: wilsonKey } }),
      ]) {
        assert.equal(refused.statusCode, 401, refused.body);
        assert.equal(reasonCode(refused), 'BMXAA7901E');
        assert.equal(refused.headers['set-cookie'], undefined, 'no session for a refused login');
      }
    }

    // The session ends at logoutAt (timers of both instances; one of them makes the transition).
    await until(
      async () => (await get(other, '/whoami', { cookie: wilson })).statusCode === 401,
      logoutmin * 60_000 + 3000,
      'the ordinary session ends',
    );
    const endedAfter = Date.now() - logoutAt;
    assert.ok(endedAfter > -200, `not before logoutmin (${endedAfter} ms)`);
    const ended = await get(other, '/whoami', { cookie: wilson });
    assert.equal(reasonCode(ended), 'BMXAA0021E');
    const onNow = await state(t.app);
    assert.equal(onNow.state, 1);
    assert.equal(onNow.remainingsessions, 0);
    assert.ok(onNow.ondate);
    await until(
      () => otherAdminMode.current().state === 1 && t.services.adminMode.current().state === 1,
      1000,
      'both instances see state 1',
    );
    assert.equal(structuralRefusal(t.services.adminMode), undefined);
    assert.equal(structuralRefusal(otherAdminMode), undefined);
    for (const app of [t.app, other]) {
      const refused = await login(app, maxauth('WILSON'));
      assert.equal(reasonCode(refused), 'BMXAA7901E');
      assert.equal(reasonCode(await get(app, '/whoami', { apikey: wilsonKey })), 'BMXAA7901E');
    }
  });

  test('an allowed administrator logs in until numsessions sessions are live', async () => {
    // The administrator's first session (adminCookie) is one of the two.
    const second = await login(other, maxauth('MAXADMIN'));
    assert.equal(second.statusCode, 200, second.body);
    const third = await login(t.app, maxauth('MAXADMIN'));
    assert.equal(third.statusCode, 401, third.body);
    assert.equal(reasonCode(third), 'BMXAA7901E');
    const form = await formLogin(other, 'MAXADMIN', 'maxadmin-test-pw');
    assert.equal(form.statusCode, 401);
    assert.equal((await state(t.app)).adminsessions, 2);
    // A session ends: a login fits again. API keys open no session and are not counted.
    await post(other, '/logout', sessionCookie(second));
    const again = await login(t.app, maxauth('MAXADMIN'));
    assert.equal(again.statusCode, 200, again.body);
    await post(t.app, '/logout', sessionCookie(again));
  });

  test('turning on again changes nothing; off opens logins on both instances at once', async () => {
    const repeated = await post(t.app, '/adminmode/on', adminCookie, { numsessions: 9 });
    assert.equal(json(repeated).state, 1);
    assert.equal(json(repeated).numsessions, 2);

    const off = await post(other, '/adminmode/off', adminCookie);
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(json(off).state, 0);
    await until(() => t.services.adminMode.current().state === 0, 1000, 'the other instance sees off');
    for (const app of [t.app, other]) {
      const wilson = await login(app, maxauth('WILSON'));
      assert.equal(wilson.statusCode, 200, wilson.body);
      await post(app, '/logout', sessionCookie(wilson));
      assert.equal((await get(app, '/whoami', { apikey: wilsonKey })).statusCode, 200);
    }
    assert.equal(structuralRefusal(t.services.adminMode), 'BMXAA0578E');
  });

  test('every change is recorded: who, when, which process, what', async () => {
    const response = await get(t.app, '/adminmode/history', { cookie: adminCookie });
    assert.equal(response.statusCode, 200);
    const changes = json(response).member!;
    assert.deepEqual(
      changes.map((change) => [change.action, change.fromstate, change.tostate, change.changeby]),
      [
        ['OFF', 1, 0, 'MAXADMIN'],
        ['ACTIVE', 2, 1, null],
        ['ON', 0, 2, 'MAXADMIN'],
      ],
    );
    assert.equal(changes[0]!.servername, 'OTHER');
    assert.equal(changes[2]!.servername, 'TESTSERVER');
    assert.ok(['TESTSERVER', 'OTHER'].includes(String(changes[1]!.servername)));
    assert.equal(changes[1]!.endedsessions, 1, 'the session of WILSON');
    assert.ok(
      changes.every((change) => Math.abs(Date.parse(String(change.changedate)) - Date.now()) < 60_000),
    );
  });

  test('pending turns on as soon as no ordinary session remains; the state survives a restart', async () => {
    const wilson = sessionCookie(await login(t.app, maxauth('WILSON')));
    const on = await post(t.app, '/adminmode/on', adminCookie, {});
    assert.equal(json(on).state, 2);
    assert.equal(json(on).numsessions, 5, 'mxe.adminmode.numsessions');
    assert.equal(json(on).logoutmin, 5, 'mxe.adminmode.logoutmin');
    await post(t.app, '/logout', wilson);
    await until(
      () => t.services.adminMode.current().state === 1,
      3000,
      'on once the last ordinary session ended',
    );

    const restarted = await buildApp(testConfig({ EAS_SERVER_NAME: 'RESTARTED' }), t.storage);
    try {
      assert.equal(restarted.services.adminMode.current().state, 1);
      assert.equal(reasonCode(await login(restarted.app, maxauth('WILSON'))), 'BMXAA7901E');
    } finally {
      await restarted.app.close();
    }
    await post(t.app, '/adminmode/off', adminCookie);
  });

  test('with no ordinary session, on is at once; logoutmin 0 ends ordinary sessions at once', async () => {
    const at0 = await post(t.app, '/adminmode/on', adminCookie, { logoutmin: 3 });
    assert.equal(json(at0).state, 1, at0.body);
    await post(t.app, '/adminmode/off', adminCookie);

    const wilson = sessionCookie(await login(t.app, maxauth('WILSON')));
    const immediate = await t.app.inject({
      method: 'POST',
      url: '/maximo/api/adminmode/on',
      headers: { cookie: adminCookie, 'content-type': 'application/json' },
      payload: '{"logoutmin": "0"}',
    });
    assert.equal(json(immediate).state, 1, immediate.body);
    assert.equal(reasonCode(await get(t.app, '/whoami', { cookie: wilson })), 'BMXAA0021E');
    await post(t.app, '/adminmode/off', adminCookie);
  });
});
