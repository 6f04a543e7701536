import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetadataRegistry } from '../metadata/registry.js';
import { driftAttributes, driftHash, drifted, EXPECTED_FIELD } from './drift.js';

/** The drift hash (docs/migration.md, "Drift guard"): the same values hash alike however each engine returns them. */
const item = new MetadataRegistry().object('ITEM');
const names = driftAttributes(item);

test('the hash covers what a package migrates: no unique id, no change stamps', () => {
  assert.ok(names.includes('description'));
  assert.ok(!names.includes(item.uniqueId));
  assert.ok(!names.includes('changedate'));
});

test('numbers, dates, empty texts and yes/no values are normalized before hashing', () => {
  const base = { itemnum: 'H1', itemsetid: 'SET1', description: 'x', unitcost: 12.5, rotating: false };
  const hash = (changes: Record<string, unknown>) => driftHash(item, names, { ...base, ...changes });
  assert.equal(hash({ description: '' }), hash({ description: null }));
  assert.equal(hash({}), hash({ unknown: 'not a migrated attribute' }));
  assert.equal(
    driftHash(item, [...names, 'added_later'], { ...base, added_later: null }),
    hash({}),
    'an attribute null everywhere (a custom attribute added since the write was hashed) changes no hash',
  );
  assert.notEqual(driftHash(item, [...names, 'added_later'], { ...base, added_later: 'set' }), hash({}));
  assert.notEqual(hash({}), hash({ description: 'y' }));
  assert.equal(
    hash({ unitcost: '12.50' }),
    hash({}),
    'a numeric as text, as the PostgreSQL driver may return it',
  );
  assert.notEqual(hash({ unitcost: 12.51 }), hash({}));
  assert.equal(hash({ rotating: 'N' }), hash({}));
  assert.notEqual(hash({ rotating: true }), hash({}));
  const dated = ['changedate'];
  const when = new Date('2026-11-25T03:00:00.000Z');
  assert.equal(
    driftHash(item, dated, { changedate: when }),
    driftHash(item, dated, { changedate: '2026-11-25T03:00:00+00:00' }),
  );
  assert.notEqual(
    driftHash(item, dated, { changedate: when }),
    driftHash(item, dated, { changedate: new Date(when.getTime() + 1000) }),
  );
});

test('only a record with an expected hash whose row is here can drift', () => {
  const row = { itemnum: 'H1', itemsetid: 'SET1', description: 'x' };
  const expected = driftHash(item, names, row);
  assert.equal(drifted(item, names, { [EXPECTED_FIELD]: expected }, row), false);
  assert.equal(drifted(item, names, { [EXPECTED_FIELD]: expected }, { ...row, description: 'y' }), true);
  assert.equal(drifted(item, names, { [EXPECTED_FIELD]: expected }, undefined), false, 'absent row: an add');
  assert.equal(drifted(item, names, {}, { ...row, description: 'y' }), false, 'no hash: nothing to check');
  assert.equal(drifted(item, undefined, { [EXPECTED_FIELD]: expected }, { ...row, description: 'y' }), false);
});
