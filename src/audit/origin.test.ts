import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { AuditRow } from './repository.js';
import { lastAuditId } from '../../test/helpers/audit.js';

/**
 * How a record learns who acted and from where (src/audit/README.md, "Request context"): the route hands the
 * request's origin to the service, explicitly. No AsyncLocalStorage: on Node.js 20 it turns on async hooks for every
 * promise of the process, which cost reads that record nothing about a tenth of their throughput.
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** An AsyncLocalStorage imported or made (a comment naming it is no use of it). */
const USES_STORAGE: readonly RegExp[] = [
  /import\s*\{[^}]*\bAsyncLocalStorage\b[^}]*\}\s*from\s*['"](node:)?async_hooks['"]/,
  /new\s+AsyncLocalStorage\b/,
];

function sources(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sources(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

describe('request origin', () => {
  test('no module of the service uses an AsyncLocalStorage (the audit trail included)', () => {
    const users = sources(SRC)
      .filter((file) => USES_STORAGE.some((use) => use.test(readFileSync(file, 'utf8'))))
      .map((file) => relative(SRC, file).split('\\').join('/'));
    assert.deepEqual(users, []);
  });

  describe('concurrent requests', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ EAS_MASTER_KEY: 'origin-test-master-key-0123456789abcdef' });
    });
    after(async () => {
      await t?.close();
    });

    const lastId = (): Promise<number> => lastAuditId(t.storage.db);

    /** The requests of one round: each records one event, from an address and with an id of its own. */
    function round(n: number, keyOwner: 'WILSON' | 'MAXADMIN', failing: 'SMITH' | 'WILSON') {
      return [
        {
          type: 'property.set',
          userid: 'MAXADMIN',
          method: 'POST' as const,
          url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
          headers: maxauth('MAXADMIN'),
          payload: { propName: 'mxe.oslc.maxpagesize', serverName: 'COMMON', propValue: `55${n}` },
          status: 200,
        },
        {
          type: 'group.insert',
          userid: 'MAXADMIN',
          method: 'POST' as const,
          url: '/maximo/oslc/os/mxapigroup?lean=1',
          headers: maxauth('MAXADMIN'),
          payload: { groupname: `ORIGIN${n}`, description: 'Concurrent origins' },
          status: 201,
        },
        {
          type: 'apikey.create',
          userid: keyOwner,
          method: 'POST' as const,
          url: '/maximo/oslc/apitoken/create',
          headers: { ...maxauth(keyOwner), 'content-type': 'application/json' },
          payload: JSON.stringify({ expiration: -1 }),
          status: 200,
        },
        {
          type: 'login.failure',
          userid: failing,
          method: 'POST' as const,
          url: '/maximo/oslc/login',
          headers: maxauth(failing, 'not-the-password-7'),
          status: 401,
        },
      ].map((request, index) => ({
        ...request,
        requestId: `origin-${n}-${index}`,
        remoteAddress: `10.1.${n}.${index + 1}`,
      }));
    }

    test('each record carries the origin of its own request: user, scheme, address, id', async () => {
      const since = await lastId();
      const sent = [...round(0, 'WILSON', 'SMITH'), ...round(1, 'MAXADMIN', 'WILSON')];
      // All at once: the requests' writes and records interleave.
      const responses = await Promise.all(
        sent.map(({ type: _type, userid: _userid, status: _status, requestId, ...request }) =>
          t.app.inject({ ...request, headers: { ...request.headers, 'x-request-id': requestId } }),
        ),
      );
      for (const [index, response] of responses.entries())
        assert.equal(response.statusCode, sent[index]!.status, response.body);
      await t.services.audit.seal();
      const rows: AuditRow[] = await t.storage.db
        .selectFrom('easaudit')
        .selectAll()
        .where('auditid', '>', since)
        .where('eventtype', '!=', 'login.success')
        .orderBy('auditid')
        .execute();
      assert.deepEqual(
        rows.map((row) => row.requestid).sort(),
        sent.map((request) => request.requestId).sort(),
        'one record per request, none without its request',
      );
      for (const request of sent) {
        const row = rows.find((one) => one.requestid === request.requestId)!;
        assert.deepEqual(
          [row.eventtype, row.userid, row.authscheme, row.clientaddr, row.keyid, row.sessiondigest],
          [request.type, request.userid, 'MAXAUTH', request.remoteAddress, null, null],
          request.requestId,
        );
      }
    });
  });
});
