import assert from 'node:assert/strict';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { ConnectionCookies, REPEAT_MS } from './connection-cookies.js';
import type { CookieClaims, SealedCookies } from './cookie-seal.js';

/**
 * A connection's answers to per-request credentials repeat the sealed cookie it was handed last, for the same claims
 * and for at most `REPEAT_MS` (docs/security.md, "Session cookies"). Over real keep-alive connections: `inject()`
 * gives every request a socket of its own.
 */
const ROOT = '/maximo/oslc';

const WILSON: Omit<CookieClaims, 'issuedAt'> = {
  userid: 'WILSON',
  credentialStamp: 'stamp-1',
  scheme: 'MAXAUTH',
  lean: null,
  csrfRequired: false,
  withToken: false,
};

describe('ConnectionCookies', () => {
  let sealed = 0;
  const seal = {
    seal: (claims: CookieClaims): SealedCookies => {
      sealed += 1;
      return { sessionCookie: `s.${claims.issuedAt}.${sealed}`, tokenCookie: undefined };
    },
  };

  test('repeats a cookie for the same connection, address and claims within the window, and only then', () => {
    const cookies = new ConnectionCookies();
    const connection = {};
    const first = cookies.cookiesFor(connection, '10.0.0.1', WILSON, 1000, seal);
    assert.equal(
      cookies.cookiesFor(connection, '10.0.0.1', { ...WILSON }, 1000 + REPEAT_MS - 1, seal),
      first,
    );

    const others: Array<[string, SealedCookies]> = [
      ['another connection', cookies.cookiesFor({}, '10.0.0.1', WILSON, 1001, seal)],
      ['another address', cookies.cookiesFor(connection, '10.0.0.2', WILSON, 1001, seal)],
    ];
    const changed: Array<[string, Partial<CookieClaims>]> = [
      ['another user', { userid: 'SMITH' }],
      ['a new password', { credentialStamp: 'stamp-2' }],
      ['another scheme', { scheme: 'BASIC' }],
      ['lean', { lean: true }],
      ['csrf', { csrfRequired: true }],
      ['the token cookie', { withToken: true }],
    ];
    for (const [what, change] of changed) {
      const fresh = new ConnectionCookies();
      const base = fresh.cookiesFor(connection, '10.0.0.1', WILSON, 1000, seal);
      const other = fresh.cookiesFor(connection, '10.0.0.1', { ...WILSON, ...change }, 1001, seal);
      assert.notEqual(other.sessionCookie, base.sessionCookie, what);
    }
    for (const [what, other] of others) assert.notEqual(other.sessionCookie, first.sessionCookie, what);
  });

  test('seals anew once the window has passed, when the clock went back, and after forgetAll', () => {
    const cookies = new ConnectionCookies();
    const connection = {};
    const first = cookies.cookiesFor(connection, 'a', WILSON, 5000, seal);
    const later = cookies.cookiesFor(connection, 'a', WILSON, 5000 + REPEAT_MS, seal);
    assert.notEqual(later, first, 'past the window');
    assert.equal(later.sessionCookie.split('.')[1], String(5000 + REPEAT_MS), 'issued at its own time');
    assert.notEqual(cookies.cookiesFor(connection, 'a', WILSON, 4000, seal), later, 'a clock that went back');
    const kept = cookies.cookiesFor(connection, 'a', WILSON, 4001, seal);
    cookies.forgetAll();
    assert.notEqual(cookies.cookiesFor(connection, 'a', WILSON, 4002, seal), kept, 'forgotten');
  });
});

interface Answer {
  status: number;
  cookie: string | undefined;
  localPort: number | undefined;
}

describe('cookies repeated on keep-alive connections', () => {
  let t: TestApp;
  let base: string;
  const agents: Agent[] = [];

  const agent = (): Agent => {
    // One socket: every request of the agent goes over the same connection.
    const made = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(made);
    return made;
  };
  const get = (via: Agent, path: string, headers: Record<string, string>, method = 'GET'): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const sent = httpRequest(`${base}${path}`, { agent: via, headers, method }, (response) => {
        // Read now: a kept-alive socket leaves the answer once it has ended.
        const localPort = response.socket.localPort;
        response.resume();
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, cookie: sessionCookieOf(response.headers), localPort }),
        );
      });
      sent.on('error', reject);
      sent.end();
    });
  const storedSessions = async (): Promise<number> => {
    const { rows } = await sql<{ n: string | number }>`select count(*) as n from maxsession`.execute(
      t.storage.db,
    );
    return Number(rows[0]!.n);
  };

  before(async () => {
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const made of agents) made.destroy();
    await t?.close();
  });

  test('one connection is answered one cookie; another connection, user or lean gets its own', async () => {
    const one = agent();
    const first = await get(one, `${ROOT}/whoami`, maxauth('WILSON'));
    const second = await get(one, `${ROOT}/whoami`, maxauth('WILSON'));
    assert.equal(first.status, 200);
    assert.ok(first.cookie?.startsWith('JSESSIONID=s.'), String(first.cookie));
    assert.equal(second.localPort, first.localPort, 'the same connection');
    assert.equal(second.cookie, first.cookie);

    const elsewhere = await get(agent(), `${ROOT}/whoami`, maxauth('WILSON'));
    assert.notEqual(elsewhere.localPort, first.localPort);
    assert.notEqual(elsewhere.cookie, first.cookie);
    const smith = await get(one, `${ROOT}/whoami`, maxauth('SMITH'));
    assert.notEqual(smith.cookie, first.cookie);
    const lean = await get(one, `${ROOT}/whoami?lean=1`, maxauth('WILSON'));
    assert.notEqual(lean.cookie, first.cookie);
    // A balancer that pools connections forwards each client's address.
    const forwarded = { ...maxauth('WILSON'), 'x-forwarded-for': '192.0.2.7' };
    const proxied = await get(one, `${ROOT}/whoami`, forwarded);
    assert.notEqual(proxied.cookie, first.cookie);
    assert.equal((await get(one, `${ROOT}/whoami`, forwarded)).cookie, proxied.cookie);
    const otherClient = await get(one, `${ROOT}/whoami`, { ...forwarded, 'x-forwarded-for': '192.0.2.8' });
    assert.notEqual(otherClient.cookie, proxied.cookie);
    for (const answer of [smith, lean, proxied, otherClient])
      assert.equal(answer.localPort, first.localPort, 'the same connection');
  });

  test('a repeated cookie replayed is one session; once it is logged out, the connection is handed a new one', async () => {
    const one = agent();
    const sessions = await storedSessions();
    const handed = await get(one, `${ROOT}/whoami`, maxauth('WILSON'));
    const repeated = await get(one, `${ROOT}/whoami`, maxauth('WILSON'));
    assert.equal(repeated.cookie, handed.cookie);
    const cookie = handed.cookie!;
    assert.equal((await get(one, `${ROOT}/whoami`, { cookie })).status, 200);
    assert.equal((await get(agent(), `${ROOT}/whoami`, { cookie })).status, 200);
    assert.equal(await storedSessions(), sessions + 1, 'one session for both answers');

    assert.equal((await get(one, `${ROOT}/logout`, { cookie }, 'POST')).status, 200);
    assert.equal((await get(one, `${ROOT}/whoami`, { cookie })).status, 401, 'logged out');
    const after = await get(one, `${ROOT}/whoami`, maxauth('WILSON'));
    assert.equal(after.localPort, handed.localPort, 'the same connection');
    assert.notEqual(after.cookie, cookie, 'not the ended cookie');
    assert.equal((await get(one, `${ROOT}/whoami`, { cookie: after.cookie! })).status, 200);
  });
});

/** `JSESSIONID=<value>` of an answer's `Set-Cookie`, as a cookie jar keeps it. */
function sessionCookieOf(headers: IncomingHttpHeaders): string | undefined {
  const line = (headers['set-cookie'] ?? []).find((cookie) => cookie.startsWith('JSESSIONID='));
  return line?.split(';')[0];
}
