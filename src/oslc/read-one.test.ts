import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { isMaximoError } from '../errors.js';
import { parseSelect, parseWhere } from './query/index.js';

/** `ResourceService.readResource`: one resource at its own address, as the routes read it before shaping it. */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

async function someAsset(): Promise<{ uniqueId: number; assetnum: string }> {
  const row = await t.storage.db
    .selectFrom('asset' as never)
    .select(['assetuid as uniqueId', 'assetnum'] as never)
    .orderBy('assetuid' as never)
    .executeTakeFirstOrThrow();
  return row as { uniqueId: number; assetnum: string };
}

test('reads the selected attributes of one resource, whatever the where clause of the request', async () => {
  const asset = await someAsset();
  const structure = t.services.metadata.findObjectStructure('MXAPIASSET')!;
  const { member, domains } = await t.services.resources.readResource(structure, asset.uniqueId, {
    query: { where: parseWhere('assetnum="NO-SUCH-ASSET"') },
    select: parseSelect('assetnum,description'),
    reader: null,
  });
  assert.equal(member.values.assetnum, asset.assetnum);
  assert.ok('description' in member.values);
  assert.equal('location' in member.values, false);
  assert.ok(domains);
});

test('a missing resource is not found, with the structure and id in the error', async () => {
  const structure = t.services.metadata.findObjectStructure('MXAPIASSET')!;
  await assert.rejects(
    t.services.resources.readResource(structure, 2_000_000_000, {
      query: {},
      select: parseSelect('assetnum'),
    }),
    (error: unknown) => isMaximoError(error) && error.status === 404 && error.message.includes('2000000000'),
  );
});
