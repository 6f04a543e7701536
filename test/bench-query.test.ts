// The query section's answer checks (bench/sections/query.ts, bench/README.md "query"): a pair is only measured when
// both sides answer the same page, and the page with its count the same total.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkCountedPage, checkPage, sameAnswer } from '../bench/sections/query.js';

const member = (index: number) => ({
  assetnum: `A${String(index).padStart(7, '0')}`,
  description: `asset ${index}`,
  status: 'OPERATING',
  siteid: 'BEDFORD',
  _rowstamp: String(1000 + index),
  href: `http://127.0.0.1:1/maximo/oslc/os/mxapiasset/_${index}`,
});

const page = (responseInfo: Record<string, unknown> = {}, count = 10) =>
  JSON.stringify({
    member: Array.from({ length: count }, (_, index) => member(index)),
    href: 'http://127.0.0.1:1/maximo/oslc/os/mxapiasset',
    responseInfo: { ...responseInfo, pagenum: 1 },
  });

describe('bench query section checks', () => {
  test('a page without a count gives its keys in order, and refuses a total it did not ask for', () => {
    const keys = checkPage(200, page());
    assert.equal(keys.length, 10);
    assert.equal(keys[0], 'A0000000/BEDFORD');
    assert.throws(() => checkPage(200, page({ totalCount: 720_000, totalPages: 72_000 })), /without a count/);
    assert.throws(() => checkPage(500, page()), /HTTP 200/);
    assert.throws(() => checkPage(200, page({}, 9)), /10 members/);
  });

  test('a page with its count gives the total and the keys; the total must be whole and fit totalPages', () => {
    const answer = checkCountedPage(200, page({ totalCount: 720_001, totalPages: 72_001 }));
    assert.equal(answer.totalCount, 720_001);
    assert.deepEqual(answer.keys, checkPage(200, page()));
    assert.throws(() => checkCountedPage(200, page()), /totalCount/);
    assert.throws(
      () => checkCountedPage(200, page({ totalCount: '720001', totalPages: 72_001 })),
      /totalCount/,
    );
    assert.throws(() => checkCountedPage(200, page({ totalCount: 3, totalPages: 1 })), /at least 10/);
    assert.throws(
      () => checkCountedPage(200, page({ totalCount: 720_001, totalPages: 72_000 })),
      /totalPages/,
    );
  });

  test('the cross-check refuses another total or other members, and accepts the same answer', () => {
    const service = checkCountedPage(200, page({ totalCount: 720_001, totalPages: 72_001 }));
    const baseline = checkCountedPage(200, page({ totalCount: 720_001, totalPages: 72_001 }));
    assert.doesNotThrow(() => sameAnswer(service, baseline));
    const otherTotal = checkCountedPage(200, page({ totalCount: 720_000, totalPages: 72_000 }));
    assert.throws(() => sameAnswer(service, otherTotal), /answer differently/);
    const reordered = { ...baseline, keys: [...baseline.keys].reverse() };
    assert.throws(() => sameAnswer(service, reordered), /answer differently/);
  });
});
