import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { AuditRow } from './repository.js';

/**
 * People, users, package definitions, their contents and targets written through object structures, in the audit
 * trail (docs/audit.md, "Events"): one record per record written, in the request's transaction, with its key; a
 * password or a target's password never in it.
 */
const TARGET_PASSWORD = 'target-password-not-recorded';

describe('audit trail: people, users and package definitions written through object structures', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  const admin = maxauth('MAXADMIN');

  /** The records of `cause` (without the batched logins of the administrator's credentials), sealed. */
  async function recordsOf(cause: () => Promise<unknown>): Promise<AuditRow[]> {
    await t.services.logins.flush();
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
    return rows.filter((row) => !row.eventtype.startsWith('login.'));
  }

  const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: `/maximo/oslc${url}`, headers: { ...admin, ...headers }, payload });

  test('a person with its user: one record per record, with its key', async () => {
    const created = await recordsOf(async () => {
      const response = await post('/os/mxapiperuser?lean=1', {
        personid: 'AUDOBJ',
        displayname: 'Audited person',
        maxuser: [{ userid: 'AUDOBJ', loginid: 'AUDOBJ', status: 'ACTIVE' }],
      });
      assert.equal(response.statusCode, 201, response.body);
    });
    assert.deepEqual(
      created.map((row) => [row.eventtype, row.objectname, row.objectkey, row.userid, row.authscheme]),
      [
        ['person.insert', 'PERSON', 'AUDOBJ', 'MAXADMIN', 'MAXAUTH'],
        ['user.insert', 'MAXUSER', 'AUDOBJ', 'MAXADMIN', 'MAXAUTH'],
      ],
    );
    assert.equal(JSON.parse(created[1]!.aftervalue!).status, 'ACTIVE');
  });

  test('a package definition with its content and target: one record each; the target password never', async () => {
    const rows = await recordsOf(async () => {
      const response = await post('/os/mxapidmpkgdef?lean=1', {
        pkgdefname: 'AUDOBJPKG',
        type: 'SNAPSHOT',
        status: 'APPR',
        dmpkgdefcontent: [{ objectstructure: 'MXAPIASSET', cfgdataorder: 1 }],
        dmpkgdsttrgt: [
          {
            targetname: 'AUDOBJDB',
            type: 'DATABASE',
            url: 'postgres://127.0.0.1:1/nowhere',
            password: TARGET_PASSWORD,
          },
        ],
      });
      assert.equal(response.statusCode, 201, response.body);
    });
    assert.deepEqual(
      rows.map((row) => [row.eventtype, row.objectname]),
      [
        ['packagedef.insert', 'DMPACKAGEDEF'],
        ['packagedef.content.insert', 'DMPKGDEFCONTENT'],
        ['packagetarget.insert', 'DMPKGDSTTRGT'],
      ],
    );
    assert.equal(rows[0]!.objectkey, 'AUDOBJPKG');
    assert.match(String(rows[2]!.objectkey), /AUDOBJDB/);
    assert.ok(!JSON.stringify(rows).includes(TARGET_PASSWORD), 'the target password is not recorded');
  });
});
