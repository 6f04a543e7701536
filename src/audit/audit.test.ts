import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { within } from '../../test/helpers/processes.js';
import { ADMIN_PASSWORD, DEMO_PASSWORD, TEST_DATABASE_URL } from '../../test/helpers/storage.js';
import { runAdmin } from '../admin/cli.js';
import { loadMasterKey } from '../apikeys/vault.js';
import { openStorage, type Storage } from '../db/database.js';
import { preparedName } from '../db/prepared-statements.js';
import type { Database } from '../db/schema.js';
import { historyInsert, insertHistory } from '../properties/repository.js';
import type { AuditRow } from './repository.js';
import { AuditTrail } from './service.js';
import { lastAuditId } from '../../test/helpers/audit.js';

/**
 * The audit trail (docs/audit.md): one record per event with who, how, from where and what, written in the change's
 * transaction; read by administrators only through MXAPIAUDIT; a chain that `audit verify` checks; retention and
 * export; no secret in any of it.
 */
const MASTER_KEY = 'audit-test-master-key-0123456789abcdefgh';
const SECURE_VALUE = 'SECRETSYSUSERVALUE';
const AUDIT = '/maximo/oslc/os/mxapiaudit';

describe('audit trail', () => {
  let t: TestApp;
  let db: Kysely<Database>;
  /** The shell's own connection: on PostgreSQL another pool on the same schema, as another process has. */
  let shell: Storage;
  /** Every secret the test sends: none may appear in a record or an export. */
  const secrets = new Set<string>([ADMIN_PASSWORD, DEMO_PASSWORD, MASTER_KEY, SECURE_VALUE]);
  let exportDir: string;

  before(async () => {
    t = await startTestApp({ EAS_MASTER_KEY: MASTER_KEY });
    db = t.storage.db;
    exportDir = await mkdtemp(join(tmpdir(), 'eas-audit-'));
    if (TEST_DATABASE_URL) {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
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
    await rm(exportDir, { recursive: true, force: true });
  });

  let requestCounter = 0;
  /** A request with a request id of its own, which its record must carry. */
  async function call(options: InjectOptions & { headers?: Record<string, string> }) {
    requestCounter += 1;
    const requestId = `audit-test-${requestCounter}`;
    const response = await t.app.inject({
      ...options,
      headers: { ...options.headers, 'x-request-id': requestId },
    });
    return { response, requestId };
  }

  const admin = maxauth('MAXADMIN');

  /**
   * The records after `since` (an audit id), once every committed record is sealed. Without the batched login
   * successes of the fixtures' per-request credentials, written whenever their batch is (docs/audit.md, "Logins").
   */
  async function recordsAfter(since: number): Promise<AuditRow[]> {
    await t.services.audit.seal();
    const rows = await db
      .selectFrom('easaudit')
      .selectAll()
      .where('auditid', '>', since)
      .orderBy('auditid')
      .execute();
    return rows.filter((row) => row.eventtype !== 'login.success');
  }

  const lastId = (): Promise<number> => lastAuditId(db);

  /** Exactly one new record, of `type`, caused by `cause`; answers it. */
  async function oneRecord(type: string, cause: () => Promise<unknown>, userid?: string): Promise<AuditRow> {
    const since = await lastId();
    await cause();
    await t.services.audit.seal();
    const all = await db.selectFrom('easaudit').selectAll().where('auditid', '>', since).execute();
    const rows = all.filter(
      (row) => row.eventtype === type && (userid === undefined || row.userid === userid),
    );
    assert.equal(rows.length, 1, `one ${type} record, got ${JSON.stringify(rows)}`);
    return rows[0]!;
  }

  async function setProperty(propName: string, propValue: string | null) {
    const result = await call({
      method: 'POST',
      url: '/maximo/oslc/service/system?action=wsmethod:setProperty',
      headers: admin,
      payload: { propName, serverName: 'COMMON', propValue },
    });
    assert.equal(result.response.statusCode, 200, result.response.body);
    return result;
  }

  function assertRequestFields(row: AuditRow, requestId: string, userid: string, scheme: string): void {
    assert.equal(row.userid, userid);
    assert.equal(row.authscheme, scheme);
    assert.equal(row.requestid, requestId);
    assert.equal(row.clientaddr, '127.0.0.1');
    assert.equal(row.servername, 'TESTSERVER');
    assert.ok(row.eventtime instanceof Date && Date.now() - row.eventtime.getTime() < 60_000);
    assert.ok(row.chainseq !== null && row.digest !== null, 'sealed');
  }

  let wilsonKey = '';

  test('a key created, regenerated and revoked by its owner: one record each, with who, how and from where', async () => {
    let requestId = '';
    const created = await oneRecord('apikey.create', async () => {
      const result = await call({
        method: 'POST',
        url: '/maximo/oslc/apitoken/create',
        headers: { ...maxauth('WILSON'), 'content-type': 'application/json' },
        payload: JSON.stringify({ expiration: -1 }),
      });
      assert.equal(result.response.statusCode, 200, result.response.body);
      requestId = result.requestId;
      secrets.add(String(json(result.response).apikey));
    });
    assertRequestFields(created, requestId, 'WILSON', 'MAXAUTH');
    assert.equal(created.outcome, 'SUCCESS');
    assert.equal(created.objectname, 'APIKEYTOKEN');
    assert.equal(created.objectkey, 'WILSON');
    assert.equal(created.keyid, null);

    const regenerated = await oneRecord('apikey.regenerate', async () => {
      const result = await call({
        method: 'POST',
        url: '/maximo/oslc/apitoken/create',
        headers: maxauth('WILSON'),
        payload: '{"expiration": 60}',
      });
      assert.equal(result.response.statusCode, 200);
      wilsonKey = String(json(result.response).apikey);
      secrets.add(wilsonKey);
      requestId = result.requestId;
    });
    assertRequestFields(regenerated, requestId, 'WILSON', 'MAXAUTH');

    // A key sent in the URL is marked once, recorded once; the caller is named by the key's fingerprint.
    const exposed = await oneRecord('apikey.exposed', async () => {
      const result = await call({ method: 'GET', url: `/maximo/oslc/whoami?apikey=${wilsonKey}` });
      assert.equal(result.response.statusCode, 200, result.response.body);
      requestId = result.requestId;
      const again = await call({ method: 'GET', url: `/maximo/oslc/whoami?apikey=${wilsonKey}` });
      assert.equal(again.response.statusCode, 200);
    });
    assert.equal(exposed.authscheme, 'APIKEY');
    assert.equal(exposed.requestid, requestId);
    assert.equal(exposed.objectkey, 'WILSON');
    const stored = await db
      .selectFrom('apikeytoken')
      .select('apikeydigest')
      .where('userid', '=', 'WILSON')
      .executeTakeFirstOrThrow();
    assert.equal(
      exposed.keyid,
      stored.apikeydigest!.slice(0, 16),
      'the key is named by its digest, not its value',
    );

    const revoked = await oneRecord('apikey.revoke', async () => {
      const result = await call({
        method: 'POST',
        url: '/maximo/oslc/apitoken/revoke',
        headers: { apikey: wilsonKey },
      });
      assert.equal(result.response.statusCode, 200, result.response.body);
      requestId = result.requestId;
    });
    assert.equal(revoked.authscheme, 'APIKEY');
    assert.equal(revoked.userid, 'WILSON');
  });

  test('keys made and deleted by an administrator for a user, and a key refused by a property rule', async () => {
    let requestId = '';
    let smithKey = '';
    const created = await oneRecord('apikey.admin.insert', async () => {
      const result = await call({
        method: 'POST',
        url: '/maximo/oslc/os/mxapiapikey?lean=1&properties=*',
        headers: admin,
        payload: { userid: 'SMITH', expiration: -1 },
      });
      assert.equal(result.response.statusCode, 201, result.response.body);
      smithKey = String(json(result.response).apikey);
      secrets.add(smithKey);
      requestId = result.requestId;
    });
    assertRequestFields(created, requestId, 'MAXADMIN', 'MAXAUTH');
    assert.equal(created.objectkey, 'SMITH');
    assert.ok(!created.aftervalue?.includes(smithKey));

    const deleted = await oneRecord('apikey.admin.delete', async () => {
      const list = await call({
        method: 'GET',
        url: '/maximo/oslc/os/mxapiapikey?lean=1&oslc.where=userid="SMITH"',
        headers: admin,
      });
      const href = String(json(list.response).member?.[0]?.href);
      const path = new URL(href).pathname;
      const result = await call({ method: 'DELETE', url: path, headers: admin });
      assert.equal(result.response.statusCode, 204, result.response.body);
    });
    assert.equal(deleted.objectkey, 'SMITH');

    // mxe.apikeysysusers is a secure (masked) property: its set is recorded, its value never.
    const set = await oneRecord('property.set', () =>
      setProperty('mxe.apikeysysusers', `SMITH,${SECURE_VALUE}`),
    );
    assert.equal(set.objectkey, 'mxe.apikeysysusers/COMMON');
    assert.ok(!JSON.stringify(set).includes(SECURE_VALUE));
    assert.deepEqual(JSON.parse(set.aftervalue!), { value: '********' });

    const refused = await oneRecord('apikey.refused', async () => {
      const result = await call({
        method: 'POST',
        url: '/maximo/oslc/os/mxapiapikey?lean=1',
        headers: admin,
        payload: { userid: 'SMITH', expiration: -1 },
      });
      assert.equal(result.response.statusCode, 400, result.response.body);
      // The refusal is recorded after the writer's transaction rolled back, in one of its own.
      await new Promise((resolve) => setTimeout(resolve, 100));
    });
    assert.equal(refused.outcome, 'REFUSED');
    assert.equal(refused.objectkey, 'SMITH');
    assert.deepEqual(JSON.parse(refused.detail!), { reasonCode: 'EAS0070E' });
    assert.equal((await recordsAfter(refused.auditid)).length, 0);
    await setProperty('mxe.apikeysysusers', null);
  });

  test('a system property set: old and new values; CORS settings as such', async () => {
    const before = await call({
      method: 'GET',
      url: '/maximo/oslc/service/system?action=wsmethod:getProperty&propName=mxe.oslc.maxpagesize',
      headers: admin,
    });
    const old = String(json(before.response).return ?? JSON.parse(before.response.body));
    let requestId = '';
    const set = await oneRecord('property.set', async () => {
      requestId = (await setProperty('mxe.oslc.maxpagesize', '777')).requestId;
    });
    assertRequestFields(set, requestId, 'MAXADMIN', 'MAXAUTH');
    assert.equal(JSON.parse(set.aftervalue!).value, '777');
    assert.notEqual(JSON.parse(set.beforevalue!).value, '777');
    assert.ok(old !== '');
    const cors = await oneRecord('cors.set', () =>
      setProperty('mxe.oslc.aclalloworigin', 'https://app.example.com'),
    );
    assert.equal(JSON.parse(cors.aftervalue!).value, 'https://app.example.com');
  });

  test('admin mode on and off through the API, and forced off from the shell', async () => {
    const on = await oneRecord('adminmode.on', async () => {
      const result = await call({
        method: 'POST',
        url: '/maximo/oslc/adminmode/on',
        headers: admin,
        payload: { logoutmin: 0 },
      });
      assert.equal(result.response.statusCode, 200, result.response.body);
    });
    assert.equal(on.userid, 'MAXADMIN');
    assert.deepEqual(JSON.parse(on.aftervalue!).state, 1);
    const off = await oneRecord('adminmode.off', async () => {
      const result = await call({ method: 'POST', url: '/maximo/oslc/adminmode/off', headers: admin });
      assert.equal(result.response.statusCode, 200, result.response.body);
    });
    assert.equal(off.authscheme, 'MAXAUTH');
    const onAgain = await call({
      method: 'POST',
      url: '/maximo/oslc/adminmode/on',
      headers: admin,
      payload: { logoutmin: 0 },
    });
    assert.equal(onAgain.response.statusCode, 200);
    const forced = await oneRecord('adminmode.off', async () => {
      const output: string[] = [];
      const code = await runAdmin(['adminmode', 'off'], shell, t.config, {
        out: (text) => void output.push(text),
        err: (text) => void output.push(text),
        env: {},
      });
      assert.equal(code, 0, output.join(''));
    });
    await within(5_000, async () => t.services.adminMode.current().state === 0);
    assert.equal(forced.userid, 'ADMIN-CLI');
    assert.equal(forced.authscheme, 'SHELL');
    assert.equal(forced.requestid, null);
  });

  test('groups, memberships and rights written: a record per record; a rolled-back write leaves none', async () => {
    const since = await lastId();
    const result = await call({
      method: 'POST',
      url: '/maximo/oslc/os/mxapigroup?lean=1',
      headers: admin,
      payload: {
        groupname: 'AUDITORS',
        description: 'Audit readers',
        groupuser: [{ userid: 'WILSON' }],
        osauth: [{ objectstructure: 'MXAPIASSET', canread: true }],
      },
    });
    assert.equal(result.response.statusCode, 201, result.response.body);
    const rows = await recordsAfter(since);
    assert.deepEqual(
      rows.map((row) => [row.eventtype, row.objectkey]),
      [
        ['group.insert', 'AUDITORS'],
        ['membership.insert', 'AUDITORS/WILSON'],
        ['rights.insert', 'AUDITORS/MXAPIASSET'],
      ],
    );
    for (const row of rows) assert.equal(row.requestid, result.requestId);

    // The same group with a right on a structure that does not exist: the group's row was written (and its record),
    // then the write rolled back, and the record with it.
    const failedSince = await lastId();
    const failed = await call({
      method: 'POST',
      url: '/maximo/oslc/os/mxapigroup?lean=1',
      headers: admin,
      payload: { groupname: 'ROLLEDBACK', osauth: [{ objectstructure: 'NOSUCHSTRUCTURE', canread: true }] },
    });
    assert.ok(failed.response.statusCode >= 400, failed.response.body);
    assert.deepEqual(await recordsAfter(failedSince), []);
    assert.equal(
      (await db.selectFrom('maxgroup').select('groupname').where('groupname', '=', 'ROLLEDBACK').execute())
        .length,
      0,
    );
  });

  test('logins: a failure and a success, each one record with the name, scheme and address', async () => {
    const wrong = 'not-the-password-9';
    secrets.add(wrong);
    let requestId = '';
    const failed = await oneRecord('login.failure', async () => {
      const result = await call({
        method: 'POST',
        url: '/maximo/oslc/login',
        headers: maxauth('SMITH', wrong),
      });
      assert.equal(result.response.statusCode, 401, result.response.body);
      requestId = result.requestId;
    });
    assert.equal(failed.outcome, 'FAILURE');
    assert.equal(failed.userid, 'SMITH');
    assert.equal(failed.authscheme, 'MAXAUTH');
    assert.equal(failed.clientaddr, '127.0.0.1');
    assert.equal(failed.requestid, requestId);
    const succeeded = await oneRecord(
      'login.success',
      async () => {
        const result = await call({ method: 'POST', url: '/maximo/oslc/login', headers: maxauth('SMITH') });
        assert.equal(result.response.statusCode, 200, result.response.body);
        await t.services.logins.flush();
      },
      'SMITH',
    );
    assert.equal(succeeded.userid, 'SMITH');
    assert.equal(succeeded.authscheme, 'MAXAUTH');
    assert.equal(succeeded.clientaddr, '127.0.0.1');
  });

  test('a record written in a transaction that rolls back is gone with it', async () => {
    const since = await lastId();
    await assert.rejects(
      db.transaction().execute(async (transaction) => {
        await t.services.audit.record(transaction, { type: 'test.rollback', object: 'MAXPROP', key: 'x' });
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.deepEqual(await recordsAfter(since), []);
  });

  test("a record written by the change's own statement commits and rolls back with it", async () => {
    const since = await lastId();
    const history = {
      propname: 'mxe.oslc.maxpagesize',
      servername: 'COMMON',
      oldvalue: '1',
      newvalue: '2',
      changeby: 'MAXADMIN',
      changedate: new Date(),
    };
    const event = { type: 'test.along', object: 'MAXPROP', key: 'mxe.oslc.maxpagesize/COMMON' };
    await assert.rejects(
      db.transaction().execute(async (transaction) => {
        await insertHistory(transaction, history, t.services.audit.recordOf(event));
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.deepEqual(await recordsAfter(since), []);
    await db
      .transaction()
      .execute((transaction) => insertHistory(transaction, history, t.services.audit.recordOf(event)));
    const written = await recordsAfter(since);
    assert.deepEqual(
      written.map((row) => [row.eventtype, row.objectkey, row.chainseq !== null]),
      [['test.along', 'mxe.oslc.maxpagesize/COMMON', true]],
    );
    // Sent by name: PostgreSQL plans it once per connection, not inside every set's row lock.
    const text = historyInsert(db, history, t.services.audit.recordOf(event)).compile().sql;
    assert.match(text, /^with "easaudit_record" as \(insert into "easaudit"/);
    assert.ok(preparedName(text) !== undefined, 'the history row and its record are a prepared statement');
  });

  test('MXAPIAUDIT: the whole query language for administrators; refused to users, keys and sessions', async () => {
    const where = encodeURIComponent('eventtype="apikey.create" and userid="WILSON"');
    const page = await call({
      method: 'GET',
      url: `${AUDIT}?lean=1&oslc.select=auditid,eventtype,userid,authscheme,requestid&oslc.where=${where}&oslc.orderBy=-auditid&oslc.pageSize=5&collectioncount=1`,
      headers: admin,
    });
    assert.equal(page.response.statusCode, 200, page.response.body);
    const body = json(page.response);
    assert.equal(body.member?.length, 1);
    assert.equal(body.member?.[0]?.authscheme, 'MAXAUTH');
    assert.equal((body.responseInfo as Record<string, unknown>).totalCount, 1);

    const paged = await call({
      method: 'GET',
      url: `${AUDIT}?lean=1&oslc.pageSize=2&oslc.orderBy=%2Bauditid`,
      headers: admin,
    });
    assert.equal(json(paged.response).member?.length, 2);
    assert.ok((json(paged.response).responseInfo as Record<string, unknown>).nextPage);

    const tracking = await call({
      method: 'GET',
      url: '/maximo/oslc/os/mxapilogintracking?lean=1&oslc.select=*&oslc.where=loginid="WILSON"',
      headers: admin,
    });
    assert.equal(tracking.response.statusCode, 200, tracking.response.body);
    assert.ok((json(tracking.response).member?.length ?? 0) > 0);

    // Writes are refused even to administrators.
    const write = await call({
      method: 'POST',
      url: `${AUDIT}?lean=1`,
      headers: admin,
      payload: { eventtype: 'x' },
    });
    assert.equal(write.response.statusCode >= 400, true, write.response.body);

    // WILSON, even in a group granted the structure, by password, by key and in a session.
    await call({
      method: 'POST',
      url: '/maximo/oslc/os/mxapigroup?lean=1',
      headers: admin,
      payload: {
        groupname: 'AUDITPEEK',
        groupuser: [{ userid: 'WILSON' }],
        osauth: [{ objectstructure: 'MXAPIAUDIT', canread: true }],
      },
    });
    const key = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/apitoken/create',
      headers: maxauth('WILSON'),
      payload: '{}',
    });
    const wilsonKeyNow = String(json(key).apikey);
    secrets.add(wilsonKeyNow);
    const login = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login',
      headers: maxauth('WILSON'),
    });
    const cookie = [login.headers['set-cookie']]
      .flat()
      .filter(Boolean)
      .map((c) => String(c).split(';')[0])
      .join('; ');
    for (const cookiePart of cookie.split('; ')) secrets.add(cookiePart.split('=')[1] ?? '');
    for (const headers of [maxauth('WILSON'), { apikey: wilsonKeyNow }, { cookie }]) {
      // Refusals as the deployed systems answer them (docs/compatibility.md): 400 BMXAA9301E on a structure.
      for (const [url, code] of [
        [AUDIT, 'BMXAA9301E'],
        ['/maximo/oslc/os/mxapilogintracking', 'BMXAA9301E'],
        ['/maximo/oslc/audit/verify', 'BMXAA0024E'],
      ] as const) {
        const refused = await t.app.inject({ method: 'GET', url: `${url}?lean=1`, headers });
        assert.equal(refused.statusCode, 400, `${url} ${refused.body}`);
        assert.equal(json(refused).Error?.reasonCode, code);
      }
    }
  });

  test('the OpenAPI document lists MXAPIAUDIT and MXAPILOGINTRACKING', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/maximo/oslc/oas/api.json', headers: admin });
    assert.equal(response.statusCode, 200);
    assert.match(response.body, /mxapiaudit/i);
    assert.match(response.body, /mxapilogintracking/i);
  });

  test('audit verify: the chain holds; a record edited, deleted or inserted by SQL is named, exit 1', async () => {
    const verifyOk = await call({ method: 'GET', url: '/maximo/oslc/audit/verify?lean=1', headers: admin });
    assert.equal(verifyOk.response.statusCode, 200);
    assert.equal(json(verifyOk.response).ok, true, verifyOk.response.body);
    const shellRun = async (...argv: string[]) => {
      const output: string[] = [];
      const code = await runAdmin(argv, shell, t.config, {
        out: (text) => void output.push(text),
        err: (text) => void output.push(text),
        env: {},
      });
      return { code, text: output.join('') };
    };
    assert.equal((await shellRun('audit', 'verify')).code, 0);

    const sealed = await db
      .selectFrom('easaudit')
      .selectAll()
      .where('chainseq', 'is not', null)
      .orderBy('chainseq')
      .execute();
    assert.ok(sealed.length > 10);
    const victim = sealed[4]!;
    // Edited.
    await db
      .updateTable('easaudit')
      .set({ userid: 'SOMEONEELSE' })
      .where('auditid', '=', victim.auditid)
      .execute();
    let run = await shellRun('audit', 'verify');
    assert.equal(run.code, 1, run.text);
    assert.match(
      run.text,
      new RegExp(`record ${victim.auditid} \\(position ${victim.chainseq}\\) was altered`),
    );
    const report = json(
      (await call({ method: 'GET', url: '/maximo/oslc/audit/verify', headers: admin })).response,
    );
    assert.equal(report.ok, false);
    assert.equal((report.problem as Record<string, unknown>).auditid, victim.auditid);
    await db
      .updateTable('easaudit')
      .set({ userid: victim.userid })
      .where('auditid', '=', victim.auditid)
      .execute();
    assert.equal((await shellRun('audit', 'verify')).code, 0);

    // Deleted: the next record is named.
    const removed = sealed[6]!;
    const next = sealed[7]!;
    await db.deleteFrom('easaudit').where('auditid', '=', removed.auditid).execute();
    run = await shellRun('audit', 'verify');
    assert.equal(run.code, 1);
    assert.match(
      run.text,
      new RegExp(
        `record ${next.auditid} \\(position ${next.chainseq}\\) follows position ${removed.chainseq! - 1}`,
      ),
    );
    const { auditid: _id, rowstamp: _rowstamp, ...restored } = removed;
    await sql`insert into easaudit overriding system value select * from json_populate_record(null::easaudit, ${JSON.stringify({ ...restored, auditid: removed.auditid, rowstamp: 0 })}::json)`.execute(
      db,
    );
    assert.equal((await shellRun('audit', 'verify')).code, 0, 'restored exactly, it verifies again');

    // Inserted: a forged record (no MAC the service made), unsealed or placed in the chain.
    const forged = await db
      .insertInto('easaudit')
      .values({
        eventtime: new Date(),
        eventtype: 'apikey.create',
        outcome: 'SUCCESS',
        userid: 'MALLORY',
        mac: 'f'.repeat(64),
      })
      .returning('auditid')
      .executeTakeFirstOrThrow();
    run = await shellRun('audit', 'verify');
    assert.equal(run.code, 1);
    assert.match(run.text, new RegExp(`record ${forged.auditid} was not written by the service`));
    await db.deleteFrom('easaudit').where('auditid', '=', forged.auditid).execute();
    // A copy of a real record moved to another place in the chain.
    const head = sealed[sealed.length - 1]!;
    await db
      .updateTable('easaudit')
      .set({ chainseq: -1 })
      .where('auditid', '=', sealed[2]!.auditid)
      .execute();
    await db
      .updateTable('easaudit')
      .set({ chainseq: sealed[2]!.chainseq })
      .where('auditid', '=', sealed[3]!.auditid)
      .execute();
    await db
      .updateTable('easaudit')
      .set({ chainseq: sealed[3]!.chainseq })
      .where('auditid', '=', sealed[2]!.auditid)
      .execute();
    run = await shellRun('audit', 'verify');
    assert.equal(run.code, 1);
    assert.match(
      run.text,
      new RegExp(`record ${sealed[3]!.auditid} \\(position ${sealed[2]!.chainseq}\\) does not follow`),
    );
    await db
      .updateTable('easaudit')
      .set({ chainseq: -1 })
      .where('auditid', '=', sealed[2]!.auditid)
      .execute();
    await db
      .updateTable('easaudit')
      .set({ chainseq: sealed[3]!.chainseq })
      .where('auditid', '=', sealed[3]!.auditid)
      .execute();
    await db
      .updateTable('easaudit')
      .set({ chainseq: sealed[2]!.chainseq })
      .where('auditid', '=', sealed[2]!.auditid)
      .execute();
    assert.equal((await shellRun('audit', 'verify')).code, 0);
    assert.ok(head.chainseq! > 0);

    const metrics = await t.app.inject({ method: 'GET', url: '/maximo/metrics', headers: admin });
    assert.match(metrics.body, /eas_audit_records_total\{type="apikey.create",outcome="SUCCESS"\} [1-9]/);
    assert.match(metrics.body, /eas_audit_verification_failures_total [1-9]/);
  });

  test('retention: older records swept, the sweep recorded, the chain verifiable from its new start', async () => {
    // Records of 500 days ago, written by a trail whose clock says so (same key, same chain).
    const past = new AuditTrail({
      storage: t.storage,
      masterKey: await loadMasterKey(MASTER_KEY, t.config.dataDir),
      serverName: 'TESTSERVER',
      now: () => Date.now() - 500 * 86_400_000,
    });
    const oldest = await db
      .selectFrom('easaudit')
      .select((eb) => eb.fn.min('chainseq').as('first'))
      .executeTakeFirstOrThrow();
    for (let i = 0; i < 3; i += 1)
      await past.recordAlone({ type: 'test.old', object: 'MAXPROP', key: `old${i}` });
    await past.seal();
    await past.close();
    // Move the old ones to the chain's front by making every earlier record old too: sweep removes a prefix only.
    const before = await db
      .selectFrom('easaudit')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const removed = await t.services.audit.sweep();
    // Records of today come first in the chain, so nothing may be removed before them: the prefix is empty.
    assert.equal(removed, 0);
    assert.ok(Number(oldest.first) >= 1);
    assert.ok(Number(before.n) > 3);

    // A fresh database's chain: only old records, then a sweep.
    const retention = await setProperty('eas.audit.retentiondays', '30');
    assert.equal(retention.response.statusCode, 200);
    // The login batch of that request written first: nothing new may enter the chain before the old records.
    await t.services.logins.flush();
    await t.services.audit.seal();
    await db.deleteFrom('easaudit').execute();
    const old = new AuditTrail({
      storage: t.storage,
      masterKey: await loadMasterKey(MASTER_KEY, t.config.dataDir),
      serverName: 'TESTSERVER',
      now: () => Date.now() - 40 * 86_400_000,
    });
    for (let i = 0; i < 4; i += 1)
      await old.recordAlone({ type: 'test.old', object: 'MAXPROP', key: `old${i}` });
    await old.seal();
    await old.close();
    await t.services.audit.recordAlone({ type: 'test.new', object: 'MAXPROP', key: 'new' });
    assert.equal(await t.services.audit.sweep(), 4);
    const rows = await recordsAfter(0);
    assert.deepEqual(
      rows.map((row) => row.eventtype),
      ['test.new', 'audit.retention'],
    );
    assert.equal(JSON.parse(rows[1]!.detail!).removed, 4);
    assert.equal(JSON.parse(rows[1]!.detail!).retentionDays, 30);
    const report = await t.services.audit.verify();
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.equal(report.firstSeq, 5);
    // The first kept record removed as well: named.
    await db.deleteFrom('easaudit').where('eventtype', '=', 'test.new').execute();
    const broken = await t.services.audit.verify();
    assert.equal(broken.ok, false);
    assert.match(broken.problem!.reason, /follows position 4/);
  });

  test('export: JSON lines since a date; no secret in any record or export', async () => {
    await t.services.audit.recordAlone({ type: 'test.export', object: 'MAXPROP', key: 'e' });
    const file = join(exportDir, 'audit.jsonl');
    const output: string[] = [];
    const code = await runAdmin(
      ['audit', 'export', '--since', '2000-01-01', '--out', file],
      shell,
      t.config,
      {
        out: (text) => void output.push(text),
        err: (text) => void output.push(text),
        env: {},
      },
    );
    assert.equal(code, 0, output.join(''));
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.ok(records.some((record) => record.eventtype === 'test.export'));
    const future = await runAdmin(['audit', 'export', '--since', '2999-01-01'], shell, t.config, {
      out: (text) => void output.push(`OUT${text}`),
      err: () => undefined,
      env: {},
    });
    assert.equal(future, 0);
    assert.ok(!output.some((text) => text.startsWith('OUT')));
    const bad = await runAdmin(['audit', 'export', '--since', 'yesterday-ish'], shell, t.config, {
      out: () => undefined,
      err: () => undefined,
      env: {},
    });
    assert.equal(bad, 2);

    const everything =
      JSON.stringify(await db.selectFrom('easaudit').selectAll().execute()) + lines.join('\n');
    for (const secret of secrets) {
      if (secret.length < 6) continue;
      assert.ok(!everything.includes(secret), `a secret appears in the trail: ${secret.slice(0, 4)}…`);
      assert.ok(
        !everything.includes(Buffer.from(secret).toString('base64')),
        'a secret appears base64-encoded',
      );
    }
  });
});
