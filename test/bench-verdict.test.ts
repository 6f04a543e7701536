// The arithmetic behind every figure of `npm run bench` (bench/lib/verdict.ts, bench/README.md "Reading the table").
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { median, pairVerdict, roundRatios, rssSlopeMiBPerHour, sliceOrder } from '../bench/lib/verdict.js';

const slices = (...values: number[]) => values.map((requestsPerSecond) => ({ requestsPerSecond }));

describe('benchmark verdicts', () => {
  test('median: the middle value, or the mean of the two middle ones; never of nothing', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(median([7]), 7);
    assert.throws(() => median([]));
  });

  test('slices alternate ABBA: baseline first in even rounds, the service first in odd ones', () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((round) => sliceOrder(round)),
      [
        [0, 1],
        [1, 0],
        [0, 1],
        [1, 0],
      ],
    );
  });

  test('round ratios divide each service slice by the baseline slice of the same round', () => {
    assert.deepEqual(roundRatios(slices(800, 900, 1000), slices(1000, 1000, 1250)), [0.8, 0.9, 0.8]);
    assert.throws(() => roundRatios(slices(1, 2), slices(1)));
  });

  test('one round hit by a burst on one side does not move the verdict; a ratio of totals would', () => {
    const subject = slices(850, 850, 850, 850, 200);
    const baseline = slices(1000, 1000, 1000, 1000, 1000);
    const ratios = roundRatios(subject, baseline);
    assert.deepEqual(pairVerdict(ratios, 0.8), { ratio: 0.85, verdict: 'PASS' });
    const totals = subject.reduce((sum, slice) => sum + slice.requestsPerSecond, 0) / 5000;
    assert.ok(totals < 0.8, 'the totals would have failed it');
  });

  test('PASS at or above the target, FAIL below, INFO without one', () => {
    assert.equal(pairVerdict([0.8], 0.8).verdict, 'PASS');
    assert.equal(pairVerdict([0.7996], 0.8).verdict, 'PASS', 'rounded to three places first');
    assert.equal(pairVerdict([0.79], 0.8).verdict, 'FAIL');
    assert.deepEqual(pairVerdict([0.4, 0.6], undefined), { ratio: 0.5, verdict: 'INFO' });
  });

  test('the RSS slope of the soak: least squares over the samples after the warm-up, in MiB per hour', () => {
    const samples = [
      { second: 0, rssMiB: 100 },
      { second: 60, rssMiB: 180 },
      { second: 120, rssMiB: 181 },
      { second: 180, rssMiB: 182 },
      { second: 240, rssMiB: 183 },
    ];
    assert.equal(rssSlopeMiBPerHour(samples, 120), 60, 'one MiB a minute once warm');
    assert.equal(rssSlopeMiBPerHour(samples, 240), undefined, 'one sample is no slope');
    assert.equal(
      rssSlopeMiBPerHour(
        [
          { second: 5, rssMiB: 1 },
          { second: 5, rssMiB: 2 },
        ],
        0,
      ),
      undefined,
    );
  });
});
