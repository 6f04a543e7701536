import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { childAnchor, decodeRestId, encodeRestId } from './rest-id.js';

describe('rest ids', () => {
  it('encode the keys as the deployed systems do', () => {
    assert.equal(encodeRestId(['11430', 'BEDFORD']), '_MTE0MzAvQkVERk9SRA--');
    assert.equal(
      childAnchor(['ASSET', 'ASSETMETER', 'RUNHOURS']),
      'http://childkey#QVNTRVQvQVNTRVRNRVRFUi9SVU5IT1VSUw--',
    );
  });

  it('write base64 + / = as _ . - and a null key as ~NULL~', () => {
    const id = encodeRestId(['a/b?>>', null]);
    assert.match(id, /^_[A-Za-z0-9_.-]+$/);
    assert.deepEqual(decodeRestId(id, 2), ['a/b?>>', null]);
  });

  it('decode every encoded key list back to its keys', () => {
    // Key text that spells the markers themselves (~sp~, ~NULL~) is the one thing that does not round-trip.
    const keyPart = fc.oneof(
      fc.constant(null),
      fc.string({ unit: 'grapheme', minLength: 1 }).filter((text) => !text.includes('~')),
    );
    fc.assert(
      fc.property(fc.array(keyPart, { minLength: 1, maxLength: 4 }), (parts) => {
        assert.deepEqual(decodeRestId(encodeRestId(parts), parts.length), parts);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuse ids of another alphabet, another key count or non-canonical base64', () => {
    const id = encodeRestId(['11430', 'BEDFORD']);
    assert.equal(decodeRestId(id, 3), undefined);
    assert.equal(decodeRestId(id.replace('_', ''), 2), undefined);
    assert.equal(decodeRestId('_MTE0MzAvQkVERk9SRA', 2), undefined);
    assert.equal(decodeRestId('_a+b', 2), undefined);
  });
});
