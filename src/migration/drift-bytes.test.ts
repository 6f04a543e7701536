import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { MetadataRegistry, type ObjectMeta } from '../metadata/registry.js';
import type { MaxType } from '../metadata/types.js';
import { isDateType, isNumericType, parseIsoDate } from '../oslc/values.js';
import type { Row } from '../oslc/repository.js';
import { exportRow, rowExporter } from './backout/records.js';
import { jsonValue, type JsonRecord } from './packages.js';
import { driftAttributes, driftHash, driftHasher } from './drift.js';

/*
 * Drift hashes and exported rows are stored in packages and inverse packages, and checked against rows long after
 * (docs/migration.md, "Drift guard", "Back-out"): the hashing written for speed must give the same text and hash
 * as the plain form it replaced, which is kept here as the reference.
 */

function referenceNormalize(type: MaxType | undefined, value: unknown): string | boolean | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (type !== undefined && isDateType(type) && typeof value === 'string')
    return parseIsoDate(value)?.toISOString() ?? value;
  if ((type !== undefined && isNumericType(type)) || typeof value === 'number' || typeof value === 'bigint') {
    const number = Number(value);
    return Number.isFinite(number) ? String(number === 0 ? 0 : number) : String(value);
  }
  if (type === 'YORN' || typeof value === 'boolean')
    return value === true || value === 1 || value === '1' || value === 'Y' || value === 'true';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function referenceHash(object: ObjectMeta, names: readonly string[], row: Record<string, unknown>): string {
  const pairs = names
    .map((name) => [name, referenceNormalize(object.attributes.get(name)?.type, row[name])] as const)
    .filter(([, value]) => value !== null);
  return createHash('sha256').update(JSON.stringify(pairs)).digest('hex');
}

function referenceExport(object: ObjectMeta, row: Row): JsonRecord {
  const record: JsonRecord = {};
  for (const attribute of object.attributes.values()) {
    if (attribute.generated || attribute.writeOnly || attribute.name === object.uniqueId) continue;
    const value = row[attribute.name] ?? null;
    record[attribute.name] = value === null ? null : jsonValue(value);
  }
  return record;
}

const registry = new MetadataRegistry();
const asset = registry.object('ASSET');
const item = registry.object('ITEM');

/** Values of every kind a row may hold, from either engine's driver or a package's JSON. */
const samples: unknown[] = [
  null,
  undefined,
  '',
  'plain',
  'quote " backslash \\ newline \n tab \t',
  'unicode é ✓ 𝄞',
  '\u0000\u001f\u2028',
  0,
  -0,
  12.5,
  '12.50',
  '-0',
  'not a number',
  1e21,
  Number.NaN,
  10n,
  true,
  false,
  'Y',
  'N',
  '1',
  1,
  new Date('2026-11-25T03:00:00.000Z'),
  new Date(Number.NaN),
  '2026-11-25T03:00:00+00:00',
  '2026-11-25',
  { nested: ['a', 1] },
];

function fixture(object: ObjectMeta): Array<Record<string, unknown>> {
  const names = [...object.attributes.keys()];
  return samples.flatMap((_, shift) => {
    const row: Record<string, unknown> = {};
    names.forEach((name, index) => {
      row[name] = samples[(index + shift) % samples.length];
    });
    return [row, { ...row, [names[shift % names.length]!]: null }];
  });
}

test('the drift hash is the reference hash on rows of every kind of value', () => {
  for (const object of [asset, item]) {
    const names = driftAttributes(object);
    const variants = [names, [...names, 'added_later'], [names[0]!], []];
    for (const list of variants) {
      const hash = driftHasher(object, list);
      for (const row of fixture(object)) {
        const expected = referenceHash(object, list, row);
        assert.equal(hash(row), expected);
        assert.equal(driftHash(object, list, row), expected);
      }
    }
  }
});

test('a drift hash and an exported row stored before are computed again byte for byte', () => {
  const row = {
    assetnum: 'A1',
    siteid: 'BEDFORD',
    description: 'Pump "7" é',
    purchaseprice: '123.50',
    changedate: new Date('2026-11-25T03:00:00.000Z'),
    rowstamp: '1001',
  };
  const names = driftAttributes(asset);
  // Computed by the code before this file's hashing (integ 7a41574).
  assert.equal(driftHash(asset, names, row), GOLDEN_HASH);
  assert.equal(JSON.stringify(exportRow(asset, row)), GOLDEN_EXPORT);
  const exportOf = rowExporter(asset);
  // An invalid date throws in both.
  const outcome = (make: () => unknown) => {
    try {
      return JSON.stringify(make());
    } catch (error) {
      return error instanceof Error ? error.message : 'thrown';
    }
  };
  for (const sample of fixture(asset))
    assert.equal(
      outcome(() => exportOf(sample as never)),
      outcome(() => referenceExport(asset, sample as never)),
    );
  for (const sample of fixture(item))
    assert.equal(
      outcome(() => exportRow(item, sample as never)),
      outcome(() => referenceExport(item, sample as never)),
    );
});

const GOLDEN_HASH = '29f66ccc100f11167e274cccc7e4141dabdaf8fb9a05c88bd8a4a5a2a60b8b9a';
const GOLDEN_EXPORT =
  '{"assetnum":"A1","siteid":"BEDFORD","orgid":null,"description":"Pump \\"7\\" é","status":null,"assettype":null,"location":null,"parent":null,"serialnum":null,"manufacturer":null,"itemnum":null,"purchaseprice":"123.50","installdate":null,"priority":null,"isrunning":null}';
