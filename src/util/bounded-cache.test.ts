import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedCache } from './bounded-cache.js';

describe('BoundedCache', () => {
  it('forgets the oldest entry beyond its capacity', () => {
    const cache = new BoundedCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10); // a new value keeps the entry's place
    cache.set('c', 3);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.get('b'), 2);
    assert.equal(cache.get('c'), 3);
  });

  it('computes once per key and remembers nothing when the computation throws', () => {
    const cache = new BoundedCache<string, number>(4);
    let calls = 0;
    const compute = () => ++calls;
    assert.equal(cache.getOrCompute('k', compute), 1);
    assert.equal(cache.getOrCompute('k', compute), 1);
    assert.equal(calls, 1);
    assert.throws(() =>
      cache.getOrCompute('bad', () => {
        throw new Error('refused');
      }),
    );
    assert.equal(cache.get('bad'), undefined);
    assert.equal(cache.size, 1);
  });

  it('refuses a capacity that is not a positive integer', () => {
    assert.throws(() => new BoundedCache(0), RangeError);
  });
});
