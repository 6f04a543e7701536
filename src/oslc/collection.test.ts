import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';

describe('collection GET', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('the README query answers two members with application/json exactly', async () => {
    const response = await t.app.inject({
      url: '/maximo/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,status&oslc.pageSize=2',
      headers: maxauth('MAXADMIN'),
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json');
    const body = json(response);
    assert.equal(body.member?.length, 2);
    for (const member of body.member ?? []) {
      assert.equal(typeof member.assetnum, 'string');
      assert.equal(typeof member.status, 'string');
      assert.equal(typeof member._rowstamp, 'string');
      assert.match(
        String(member.href),
        /^http:\/\/localhost(:80)?\/maximo\/oslc\/os\/mxapiasset\/_[A-Za-z0-9_.-]+$/,
      );
    }
  });

  test('member hrefs are dereferenceable and give the same record', async () => {
    const list = json(
      await t.app.inject({
        url: '/maximo/api/os/MXASSET?oslc.select=assetnum,siteid&oslc.pageSize=3&relativeuri=1',
        headers: maxauth('MAXADMIN'),
      }),
    );
    for (const member of list.member ?? []) {
      const href = String(member.href);
      assert.match(href, /^api\/os\/mxasset\/_/);
      const one = json(await t.app.inject({ url: `/maximo/${href}?lean=1`, headers: maxauth('MAXADMIN') }));
      assert.equal(one.assetnum, member.assetnum);
      assert.equal(one.siteid, member.siteid);
    }
  });
});
