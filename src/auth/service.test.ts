import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * The in-memory user profiles every authenticated request reads (cached, dropped on security writes:
 * src/auth/README.md).
 */
describe('user profiles', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t.close();
  });

  async function personOf(userid: string): Promise<string> {
    const row = await t.storage.db
      .selectFrom('maxuser')
      .select('personid')
      .where('userid', '=', userid)
      .executeTakeFirstOrThrow();
    return row.personid;
  }

  test('a loaded profile is answered from memory, without waiting', async () => {
    t.services.auth.invalidate();
    const first = t.services.auth.profile('WILSON');
    assert.ok(first instanceof Promise, 'the first read loads from the database');
    const loaded = await first;
    assert.equal(loaded?.userid, 'WILSON');
    assert.equal(t.services.auth.profile('WILSON'), loaded, 'the next read is the same profile, at once');
    assert.equal(await t.services.auth.profile('NOBODY'), undefined);
    assert.equal(t.services.auth.profile('NOBODY'), undefined, 'an unknown user is remembered as such');
  });

  test('a change that arrives while a profile loads is not hidden by that load', async () => {
    const personid = await personOf('SMITH');
    const renamed = 'Smith, renamed while loading';
    t.services.auth.invalidate();
    const loading = t.services.auth.profile('SMITH');
    await t.storage.db
      .updateTable('person')
      .set({ displayname: renamed })
      .where('personid', '=', personid)
      .execute();
    // The write's notification, before the load that started earlier has finished.
    t.services.auth.invalidate();
    await loading;
    const next = await t.services.auth.profile('SMITH');
    assert.equal(next?.displayname, renamed);
  });
});
