import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { readCollectionParams } from './collection-params.js';

// Plans are kept by the texts of the request; this file grows the metadata, so it has an app of its own.
describe('reuse of query plans', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const planOf = (query: Record<string, string>) => {
    const { metadata, resources } = t.services;
    const params = readCollectionParams(query);
    return resources.plan(metadata.findObjectStructure('MXAPIASSET')!, params.query, params.planKey);
  };

  test('the same texts give the same plan; other texts or another structure give another', () => {
    const query = { 'oslc.where': 'status="OPERATING"', 'oslc.select': 'assetnum,status' };
    const first = planOf(query);
    assert.equal(planOf({ ...query }), first);
    assert.notEqual(planOf({ ...query, 'oslc.orderBy': '-assetnum' }), first);
    assert.notEqual(planOf({ ...query, opmodeor: '1' }), first);
    const { metadata, resources } = t.services;
    const params = readCollectionParams(query);
    assert.notEqual(
      resources.plan(metadata.findObjectStructure('MXAPIOPERLOC')!, params.query, params.planKey),
      first,
    );
  });

  test('a time line is relative to the moment of the request: its plan is never kept', () => {
    const params = readCollectionParams({ tlrange: '-1d', tlattribute: 'changedate' });
    assert.equal(params.planKey, undefined);
  });

  test('parsed clauses are frozen, so a kept plan cannot be changed through them', () => {
    const { query } = readCollectionParams({ 'oslc.where': 'status="OPERATING"' });
    assert.ok(Object.isFrozen(query.where));
  });

  test('an attribute added at run time reaches the next plan of the same texts', () => {
    const query = { 'oslc.select': '*' };
    const before = planOf(query);
    assert.ok(!before.root.attributes.some(({ attribute }) => attribute.name === 'plancachetest'));
    t.services.metadata.addAttribute('ASSET', {
      name: 'plancachetest',
      type: 'ALN',
      title: 'Test',
      length: 10,
    });
    const after = planOf(query);
    assert.notEqual(after, before);
    assert.ok(after.root.attributes.some(({ attribute }) => attribute.name === 'plancachetest'));
  });
});
