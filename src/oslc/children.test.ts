import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import type { DynamicDatabase } from '../db/schema.js';
import { baseObjectStructures } from '../metadata/object-structures.js';

/**
 * Child collections as resources (`<resource>/<child>`, localrefs, nested children, writes through the parent's
 * write path) and MERGE of children by key (docs/compatibility.md, "Child collections" and "Writes").
 */

type Body = Record<string, unknown>;
type Member = Record<string, unknown>;

let ctx: TestApp;
let db: Kysely<DynamicDatabase>;
const admin = maxauth('MAXADMIN');

before(async () => {
  ctx = await startTestApp();
  db = ctx.storage.db as unknown as Kysely<DynamicDatabase>;
});
after(async () => ctx.close());

async function get(url: string, headers: Record<string, string> = admin) {
  return ctx.app.inject({ method: 'GET', url, headers });
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return ctx.app.inject({ method: 'POST', url, headers: { ...admin, ...headers }, payload: body as Body });
}

/** The path of an absolute href, for inject. */
const pathOf = (href: string): string => {
  const url = new URL(href);
  return `${url.pathname}${url.search}`;
};

async function groupId(groupname: string): Promise<number> {
  const response = await get(
    `/maximo/api/os/mxapigroup?oslc.select=maxgroupid&oslc.where=groupname="${groupname}"`,
  );
  const member = json(response).member?.[0];
  assert.ok(member, `group ${groupname}`);
  return Number(member.maxgroupid);
}

async function memberships(groupname: string): Promise<string[]> {
  const rows = await db
    .selectFrom('groupuser')
    .select('userid')
    .where('groupname', '=', groupname)
    .orderBy('userid')
    .execute();
  return rows.map((row) => String(row.userid));
}

describe('the group-membership flow', () => {
  test('look a member up in the group child collection, add one with MERGE, delete it by localref', async () => {
    const id = await groupId('VIEWER');
    const lookup = `/maximo/api/os/mxapigroup/${id}/groupuser?lean=1&oslc.where=userid="WILSON"`;
    const before = await get(lookup);
    assert.equal(before.statusCode, 200, before.body);
    assert.deepEqual(json(before).member, []);
    assert.equal(json(before).href, `http://localhost:80/maximo/api/os/mxapigroup/${id}/groupuser`);

    const merged = await post(
      `/maximo/api/os/mxapigroup/${id}`,
      { groupuser: [{ userid: 'WILSON' }] },
      { 'x-method-override': 'PATCH', patchtype: 'MERGE' },
    );
    assert.equal(merged.statusCode, 204, merged.body);
    assert.deepEqual(await memberships('VIEWER'), ['SMITH', 'WILSON']);

    const found = json(await get(lookup)).member ?? [];
    assert.equal(found.length, 1);
    assert.equal(found[0]!.userid, 'WILSON');
    assert.equal(found[0]!.groupname, 'VIEWER');
    const localref = String(found[0]!.localref);
    assert.match(localref, new RegExp(`/api/os/mxapigroup/${id}/groupuser/0-\\d+$`));
    assert.match(String(found[0]!.href), /^http:\/\/childkey#/);

    const read = await get(pathOf(localref));
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(json(read).userid, 'WILSON');
    assert.equal(json(read).localref, localref);

    const removed = await ctx.app.inject({ method: 'DELETE', url: pathOf(localref), headers: admin });
    assert.equal(removed.statusCode, 204, removed.body);
    assert.deepEqual(await memberships('VIEWER'), ['SMITH']);
    assert.deepEqual(json(await get(lookup)).member, []);
    assert.equal((await get(pathOf(localref))).statusCode, 404);
  });

  test('the group is addressed by rest id as well as by unique id, the child name in any case', async () => {
    const listed = json(await get('/maximo/oslc/os/mxapigroup?lean=1&oslc.where=groupname="MAINT"'));
    const href = String(listed.member?.[0]?.href);
    const response = await get(`${pathOf(href)}/GROUPUSER?lean=1&oslc.select=userid`);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(
      json(response).member?.map((member) => member.userid),
      ['WILSON'],
    );
  });
});

describe('child collections are collections', () => {
  test("every *_collectionref of every structure's first member, and every localref below, dereferences", async () => {
    let walked = 0;
    const visit = async (collectionHref: string, depth: number): Promise<void> => {
      const response = await get(`${pathOf(collectionHref)}?lean=1`);
      assert.equal(response.statusCode, 200, `${collectionHref}: ${response.body}`);
      walked += 1;
      for (const member of json(response).member ?? []) {
        const localref = String(member.localref);
        const read = await get(`${pathOf(localref)}?lean=1`);
        assert.equal(read.statusCode, 200, `${localref}: ${read.body}`);
        assert.ok(read.headers.etag);
        for (const [name, value] of Object.entries(member)) {
          if (name.endsWith('_collectionref') && depth < 4) await visit(String(value), depth + 1);
        }
      }
    };
    for (const def of baseObjectStructures) {
      if (!def.children?.length) continue;
      const os = def.name.toLowerCase();
      const first = json(await get(`/maximo/oslc/os/${os}?lean=1&oslc.pageSize=1&oslc.select=*`)).member?.[0];
      // A structure without members emits no collectionref to walk.
      if (!first) continue;
      const refs = Object.entries(first).filter(([name]) => name.endsWith('_collectionref'));
      assert.equal(refs.length, def.children.length, `collectionrefs of ${def.name}`);
      for (const [, href] of refs) await visit(String(href), 1);
      // The localrefs a resource GET writes into its child arrays dereference too.
      const resource = json(await get(`${pathOf(String(first.href))}?lean=1`));
      for (const child of def.children) {
        for (const entry of (resource[child.name] as Member[] | undefined) ?? []) {
          const read = await get(pathOf(String(entry.localref)));
          assert.equal(read.statusCode, 200, `${String(entry.localref)}: ${read.body}`);
        }
      }
    }
    assert.ok(walked >= 5);
  });

  test('the full query language applies: where, select, orderBy, paging, count, collectioncount, lean both ways', async () => {
    const domain = json(await get('/maximo/oslc/os/mxapidomain?lean=1&oslc.where=domainid="LOCASSETSTATUS"'));
    const base = `${pathOf(String(domain.member?.[0]?.href))}/synonymdomain`;
    const all = json(await get(`${base}?lean=1&oslc.select=value&oslc.orderBy=-value`)).member ?? [];
    assert.ok(all.length >= 3);
    const values = all.map((member) => String(member.value));
    assert.deepEqual(values, [...values].sort().reverse());
    assert.deepEqual(Object.keys(all[0]!).sort(), ['_rowstamp', 'href', 'localref', 'value']);

    const paged = json(
      await get(`${base}?lean=1&oslc.select=value&oslc.orderBy=-value&oslc.pageSize=2&collectioncount=1`),
    );
    assert.deepEqual(
      paged.member?.map((member) => member.value),
      values.slice(0, 2),
    );
    assert.equal(paged.responseInfo?.totalCount, all.length);
    assert.equal(paged.responseInfo?.totalPages, Math.ceil(all.length / 2));
    const next = paged.responseInfo?.nextPage as { href: string };
    assert.match(next.href, /\/synonymdomain\?pageno=2&/);
    const second = json(await get(pathOf(next.href)));
    assert.deepEqual(
      second.member?.map((member) => member.value),
      values.slice(2, 4),
    );

    const filtered = json(
      await get(`${base}?lean=1&oslc.where=maxvalue="OPERATING"&oslc.select=value,maxvalue`),
    );
    assert.ok((filtered.member ?? []).length >= 1);
    for (const member of filtered.member ?? []) assert.equal(member.maxvalue, 'OPERATING');

    const counted = json(await get(`${base}?count=1`));
    assert.equal(counted.totalCount, all.length);

    const namespaced = json(await get(`${base}?oslc.select=value`));
    const members = namespaced['rdfs:member'] as Member[];
    assert.equal(members.length, all.length);
    assert.ok('spi:value' in members[0]!);
    assert.match(String(members[0]!['rdf:about']), /^http:\/\/childkey#/);

    const relative = json(await get(`${base}?lean=1&relativeuri=1&oslc.select=value`));
    assert.match(
      String(relative.member?.[0]?.localref),
      /^oslc\/os\/mxapidomain\/[^/]+\/synonymdomain\/0-\d+$/,
    );
    assert.equal(relative.href, `${base.replace('/maximo/', '')}`);

    const refused = await get(`${base}?lean=1&oslc.where=nosuch="X"`);
    assert.equal(refused.statusCode, 400);
    assert.equal(json(refused).Error?.reasonCode, 'EAS0020E');
  });

  test('an unknown child, a member of another parent, or a malformed localref is 404', async () => {
    const id = await groupId('VIEWER');
    const other = await groupId('MAINT');
    const unknown = await get(`/maximo/api/os/mxapigroup/${id}/nosuchchild`);
    assert.equal(unknown.statusCode, 404);
    // The group exists: the refusal names the child collection, not a missing record (docs/errors.md, EAS0024E).
    assert.equal(json(unknown).Error?.reasonCode, 'EAS0024E');
    const maint = json(await get(`/maximo/api/os/mxapigroup/${other}/groupuser`)).member ?? [];
    const uid = /-(\d+)$/.exec(String(maint[0]!.localref))![1];
    assert.equal((await get(`/maximo/api/os/mxapigroup/${id}/groupuser/0-${uid}`)).statusCode, 404);
    assert.equal((await get(`/maximo/api/os/mxapigroup/${id}/groupuser/abc`)).statusCode, 404);
    assert.equal((await get(`/maximo/api/os/mxapigroup/${id}/groupuser/0-999999999999999`)).statusCode, 404);
  });
});

describe('writes at child addresses', () => {
  test('POST to a child collection adds a child; PATCH and DELETE work on its localref', async () => {
    const created = await post('/maximo/oslc/os/mxapidomain', {
      domainid: 'CHILDW',
      domaintype: 'ALN',
      maxtype: 'UPPER',
      length: 10,
      description: 'Child writes',
    });
    assert.equal(created.statusCode, 201, created.body);
    const domain = pathOf(String(created.headers.location));

    const added = await post(
      `${domain}/alndomain`,
      { value: 'RED', description: 'Red' },
      { properties: 'value,description' },
    );
    assert.equal(added.statusCode, 201, added.body);
    assert.equal(json(added)['spi:value'] ?? json(added).value, 'RED');
    const location = String(added.headers.location);
    assert.match(location, /\/alndomain\/0-\d+$/);

    const changed = await post(
      pathOf(location),
      { description: 'Crimson' },
      { 'x-method-override': 'PATCH' },
    );
    assert.equal(changed.statusCode, 204, changed.body);
    const row = await db
      .selectFrom('alndomain')
      .selectAll()
      .where('domainid', '=', 'CHILDW')
      .executeTakeFirst();
    assert.equal(row?.description, 'Crimson');
    assert.equal(row?.value, 'RED');

    const refused = await post(`${domain}/alndomain`, { value: 'X'.repeat(60) });
    assert.equal(refused.statusCode, 400);
    assert.equal(json(refused).Error?.errorattrname, 'value');

    const viaOverride = await post(pathOf(location), {}, { 'x-method-override': 'DELETE' });
    assert.equal(viaOverride.statusCode, 204, viaOverride.body);
    const left = await db.selectFrom('alndomain').select('value').where('domainid', '=', 'CHILDW').execute();
    assert.deepEqual(left, []);
  });

  test('nested children: read, add and delete a grandchild through its parent child member', async () => {
    const person = json(await get('/maximo/oslc/os/mxapiperuser?lean=1&oslc.where=personid="SMITH"'));
    const personHref = pathOf(String(person.member?.[0]?.href));
    const users = json(await get(`${personHref}/maxuser?lean=1`)).member ?? [];
    assert.equal(users.length, 1);
    assert.equal(users[0]!.userid, 'SMITH');
    const userLocalref = String(users[0]!.localref);
    const groupsHref = String(users[0]!.groupuser_collectionref);
    assert.equal(groupsHref, `${userLocalref}/groupuser`);

    const groups = json(await get(`${pathOf(groupsHref)}?lean=1`)).member ?? [];
    assert.deepEqual(
      groups.map((group) => group.groupname),
      ['VIEWER'],
    );

    const added = await post(pathOf(groupsHref), { groupname: 'MAINT' });
    assert.equal(added.statusCode, 201, added.body);
    assert.deepEqual(await memberships('MAINT'), ['SMITH', 'WILSON']);
    const grandchild = String(added.headers.location);
    assert.match(grandchild, /\/maxuser\/0-\d+\/groupuser\/0-\d+$/);
    const read = await get(`${pathOf(grandchild)}?lean=1`);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(json(read).groupname, 'MAINT');

    const removed = await ctx.app.inject({ method: 'DELETE', url: pathOf(grandchild), headers: admin });
    assert.equal(removed.statusCode, 204, removed.body);
    assert.deepEqual(await memberships('MAINT'), ['WILSON']);
  });

  test('child writes need the update right on the object structure', async () => {
    const id = await groupId('VIEWER');
    const response = await post(
      `/maximo/api/os/mxapigroup/${id}/groupuser`,
      { userid: 'WILSON' },
      maxauth('SMITH'),
    );
    assert.equal(response.statusCode, 400);
    assert.equal(json(response).Error?.reasonCode, 'BMXAA9301E');
    assert.deepEqual(await memberships('VIEWER'), ['SMITH']);
  });

  test('unsupported overrides at child addresses are 405', async () => {
    const id = await groupId('VIEWER');
    const collection = await post(`/maximo/api/os/mxapigroup/${id}/groupuser`, [], {
      'x-method-override': 'BULK',
    });
    assert.equal(collection.statusCode, 405);
    assert.equal(json(collection).Error?.reasonCode, 'EAS0007E');
    const remove = await ctx.app.inject({
      method: 'DELETE',
      url: `/maximo/api/os/mxapigroup/${id}/groupuser`,
      headers: admin,
    });
    assert.equal(remove.statusCode, 405);
  });
});

describe('MERGE of children by key', () => {
  test('update by key, _action Delete by key, add; read back', async () => {
    const created = await post('/maximo/oslc/os/mxapidomain', {
      domainid: 'MERGEKEY',
      domaintype: 'ALN',
      maxtype: 'UPPER',
      length: 10,
      alndomain: [
        { value: 'RED', description: 'Red' },
        { value: 'GREEN', description: 'Green' },
      ],
    });
    assert.equal(created.statusCode, 201, created.body);
    const href = pathOf(String(created.headers.location));
    const merge = { 'x-method-override': 'PATCH', patchtype: 'MERGE' };

    const updated = await post(href, { alndomain: [{ value: 'RED', description: 'Scarlet' }] }, merge);
    assert.equal(updated.statusCode, 204, updated.body);
    const deleted = await post(href, { alndomain: [{ value: 'GREEN', _action: 'Delete' }] }, merge);
    assert.equal(deleted.statusCode, 204, deleted.body);
    const added = await post(href, { alndomain: [{ value: 'BLUE', description: 'Blue' }] }, merge);
    assert.equal(added.statusCode, 204, added.body);

    const read = json(await get(`${href}?lean=1`));
    const values = (read.alndomain as Member[]).map((entry) => [entry.value, entry.description]);
    assert.deepEqual(values.sort(), [
      ['BLUE', 'Blue'],
      ['RED', 'Scarlet'],
    ]);
    const rows = await db
      .selectFrom('alndomain')
      .select(['value', 'description'])
      .where('domainid', '=', 'MERGEKEY')
      .orderBy('value')
      .execute();
    assert.deepEqual(rows, [
      { value: 'BLUE', description: 'Blue' },
      { value: 'RED', description: 'Scarlet' },
    ]);
  });

  test('by anchored href, and a delete that matches nothing or lacks its key is refused without a write', async () => {
    const read = json(
      await get('/maximo/oslc/os/mxapidomain?lean=1&oslc.where=domainid="MERGEKEY"&oslc.select=*'),
    );
    const href = pathOf(String(read.member?.[0]?.href));
    const merge = { 'x-method-override': 'PATCH', patchtype: 'MERGE' };
    const resource = json(await get(`${href}?lean=1`));
    const blue = (resource.alndomain as Member[]).find((entry) => entry.value === 'BLUE')!;
    const byHref = await post(href, { alndomain: [{ href: blue.href, description: 'Azure' }] }, merge);
    assert.equal(byHref.statusCode, 204, byHref.body);

    const nothing = await post(
      href,
      { description: 'must not be written', alndomain: [{ value: 'PURPLE', _action: 'Delete' }] },
      merge,
    );
    assert.equal(nothing.statusCode, 400);
    assert.equal(json(nothing).Error?.reasonCode, 'EAS0091E');
    const noKey = await post(href, { alndomain: [{ description: 'x', _action: 'Delete' }] }, merge);
    assert.equal(noKey.statusCode, 400);
    assert.equal(json(noKey).Error?.reasonCode, 'EAS0090E');
    assert.equal(json(noKey).Error?.errorattrname, 'value');
    const badAction = await post(href, { alndomain: [{ value: 'RED', _action: 'Explode' }] }, merge);
    assert.equal(badAction.statusCode, 400);
    assert.equal(json(badAction).Error?.errorattrname, '_action');

    const rows = await db
      .selectFrom('alndomain')
      .select(['value', 'description'])
      .where('domainid', '=', 'MERGEKEY')
      .orderBy('value')
      .execute();
    assert.deepEqual(rows, [
      { value: 'BLUE', description: 'Azure' },
      { value: 'RED', description: 'Scarlet' },
    ]);
    const domain = await db
      .selectFrom('maxdomain')
      .select('description')
      .where('domainid', '=', 'MERGEKEY')
      .executeTakeFirst();
    assert.notEqual(domain?.description, 'must not be written');
  });

  test('the group-membership MERGE adds a member named by key and deletes it by key', async () => {
    const id = await groupId('VIEWER');
    const merge = { 'x-method-override': 'PATCH', patchtype: 'MERGE' };
    const add = await post(`/maximo/api/os/mxapigroup/${id}`, { groupuser: [{ userid: 'wilson' }] }, merge);
    assert.equal(add.statusCode, 204, add.body);
    const again = await post(`/maximo/api/os/mxapigroup/${id}`, { groupuser: [{ userid: 'WILSON' }] }, merge);
    assert.equal(again.statusCode, 204, again.body);
    assert.deepEqual(await memberships('VIEWER'), ['SMITH', 'WILSON']);
    const remove = await post(
      `/maximo/api/os/mxapigroup/${id}`,
      { groupuser: [{ userid: 'WILSON', _action: 'Delete' }] },
      merge,
    );
    assert.equal(remove.statusCode, 204, remove.body);
    assert.deepEqual(await memberships('VIEWER'), ['SMITH']);
  });
});
