import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetadataRegistry } from '../../metadata/registry.js';
import type { Row } from '../../oslc/repository.js';
import type { StoredValue } from '../../oslc/values.js';
import { driftAttributes, driftHash, driftHasher, EXPECTED_FIELD } from '../drift.js';
import { DELETE_ACTION, jsonValue, type JsonRecord } from '../packages.js';
import { DEPLOYED_FIELD, DEPLOYED_STAMP_FIELD, inverseLine } from './capture.js';
import { exportRow, rowExporter } from './records.js';

/*
 * Inverse lines are stored and read back by later back-outs (docs/migration.md, "Back-out"): the line built field
 * by field must be the same text as the line the capture built before by spreading a guard object, kept here as the
 * reference.
 */

const asset = new MetadataRegistry().object('ASSET');
const names = driftAttributes(asset);

function referenceLine(
  keys: readonly StoredValue[],
  restore: JsonRecord | undefined,
  after: Row | undefined,
) {
  const guard = after
    ? {
        [EXPECTED_FIELD]: driftHash(asset, names, after),
        [DEPLOYED_FIELD]: exportRow(asset, after),
        ...(after.rowstamp !== null &&
          after.rowstamp !== undefined && { [DEPLOYED_STAMP_FIELD]: String(after.rowstamp) }),
      }
    : { [DEPLOYED_FIELD]: null };
  if (!restore) {
    const keyRecord = Object.fromEntries(
      asset.keys.map((name, index) => [name, jsonValue(keys[index] ?? null)]),
    );
    return JSON.stringify({ ...keyRecord, _action: DELETE_ACTION, ...guard });
  }
  return JSON.stringify({ ...restore, ...guard });
}

test('an inverse line is the same text as the reference line', () => {
  const row: Row = {
    assetnum: 'A1',
    siteid: 'BEDFORD',
    orgid: 'EAGLENA',
    description: 'Pump "7" é',
    purchaseprice: '123.50',
    installdate: new Date('2026-11-25T03:00:00.000Z'),
    isrunning: true,
    rowstamp: '1001',
  };
  const keys: StoredValue[] = ['A1', 'BEDFORD'];
  const restores: Array<JsonRecord | undefined> = [
    undefined,
    { assetnum: 'A1', siteid: 'BEDFORD', description: 'before' },
    { ...exportRow(asset, row), description: null, assetspec: [{ assetattrid: 'X', alnvalue: 'y' }] },
  ];
  const afters: Array<Row | undefined> = [
    row,
    { ...row, rowstamp: null },
    Object.fromEntries(Object.entries(row).filter(([name]) => name !== 'rowstamp')),
    undefined,
  ];
  const hash = driftHasher(asset, names);
  const exportOf = rowExporter(asset);
  let compared = 0;
  for (const restore of restores)
    for (const after of afters) {
      if (!restore && !after) continue;
      assert.equal(
        inverseLine(asset, keys, restore, after, hash, exportOf),
        referenceLine(keys, restore, after),
      );
      compared += 1;
    }
  assert.equal(compared, 11);
  assert.equal(
    inverseLine(asset, [null, 'BEDFORD'], undefined, row, hash, exportOf),
    referenceLine([null, 'BEDFORD'], undefined, row),
  );
});
