import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { maxauth, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { splitUrlCredentials } from '../credentials.js';

/**
 * No secret in clear: credentials inside a DATABASE target's URL are moved into the sealed password, and the URL is
 * stored and returned without them (docs/security.md, "URL credentials").
 */
const admin = maxauth('MAXADMIN');

describe('credentials in a DATABASE target URL', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  async function targetsOf(pkgdefname: string): Promise<string> {
    const response = await t.app.inject({
      method: 'GET',
      url: `/maximo/oslc/os/mxapidmpkgdef?lean=1&oslc.select=pkgdefname,dmpkgdsttrgt{*}&oslc.where=${encodeURIComponent(`pkgdefname="${pkgdefname}"`)}`,
      headers: admin,
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.body;
  }

  test('the user and password in the URL are moved out of it: the password sealed, the URL returned without them', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapidmpkgdef',
      headers: admin,
      payload: {
        pkgdefname: 'URLCREDS',
        type: 'SNAPSHOT',
        status: 'APPR',
        dmpkgdefcontent: [{ objectstructure: 'MXAPIITEM', cfgdataorder: 1 }],
        dmpkgdsttrgt: [
          {
            targetname: 'DB1',
            type: 'DATABASE',
            url: 'postgres://root:secret@db.example:5432/db?sslmode=disable',
          },
          { targetname: 'DB2', type: 'DATABASE', url: 'postgres://db.example/db?user=app&password=hidden2' },
        ],
      },
    });
    assert.equal(response.statusCode, 201, response.body);
    const rows = await t.storage.db
      .selectFrom('dmpkgdsttrgt')
      .select(['targetname', 'url', 'username', 'password'])
      .where('pkgdefname', '=', 'URLCREDS')
      .orderBy('targetname')
      .execute();
    assert.deepEqual(
      rows.map(({ targetname, url, username }) => ({ targetname, url, username })),
      [
        { targetname: 'DB1', url: 'postgres://db.example:5432/db?sslmode=disable', username: 'root' },
        { targetname: 'DB2', url: 'postgres://db.example/db', username: 'app' },
      ],
    );
    for (const row of rows) assert.match(String(row.password), /^v1:/, 'sealed at rest');
    const shown = await targetsOf('URLCREDS');
    assert.doesNotMatch(shown, /secret|hidden2/);
    assert.match(shown, /postgres:\/\/db\.example:5432\/db\?sslmode=disable/);
  });

  test('a URL stored with credentials by an earlier release is returned without them', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapidmpkgdef',
      headers: admin,
      payload: {
        pkgdefname: 'OLDCREDS',
        type: 'SNAPSHOT',
        status: 'APPR',
        dmpkgdefcontent: [{ objectstructure: 'MXAPIITEM', cfgdataorder: 1 }],
        dmpkgdsttrgt: [{ targetname: 'DB1', type: 'DATABASE', url: 'postgres://db.example/db' }],
      },
    });
    assert.equal(response.statusCode, 201, response.body);
    await t.storage.db
      .updateTable('dmpkgdsttrgt')
      .set({ url: 'postgres://root:secret@db.example/db' })
      .where('pkgdefname', '=', 'OLDCREDS')
      .execute();
    const shown = await targetsOf('OLDCREDS');
    assert.doesNotMatch(shown, /secret/);
    assert.match(shown, /postgres:\/\/db\.example\/db/);
  });
});

test('splitUrlCredentials: decoded credentials out, everything else kept', () => {
  assert.deepEqual(splitUrlCredentials('postgres://us%40er:p%3Ass@h:5433/d?sslmode=require'), {
    url: 'postgres://h:5433/d?sslmode=require',
    username: 'us@er',
    password: 'p:ss',
  });
  assert.deepEqual(splitUrlCredentials('postgres://h/d'), { url: 'postgres://h/d' });
  assert.deepEqual(splitUrlCredentials('not a url'), { url: 'not a url' });
});
