// How a pair's measurements become its ratio and verdict (bench/README.md, "Reading the table"): pure, so that
// test/bench-verdict.test.ts checks the arithmetic every benchmark figure rests on.

export type PairVerdict = 'PASS' | 'FAIL' | 'INFO';

const round3 = (value: number): number => Number(value.toFixed(3));

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('The median of no values');
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Which scenario measures first in a round (0 the baseline, 1 the service): ABBA, so that a machine slowing down
 * or speeding up over the run weighs on both sides alike.
 */
export function sliceOrder(round: number): readonly [number, number] {
  return round % 2 === 0 ? [0, 1] : [1, 0];
}

/**
 * Per round, the service slice's requests per second over the baseline slice's. The two slices of a round are taken
 * one after the other, so a burst of background load that hit one side only moves one round, which the median of
 * the rounds then ignores (a ratio of totals would not).
 */
export function roundRatios(
  subject: readonly { requestsPerSecond: number }[],
  baseline: readonly { requestsPerSecond: number }[],
): number[] {
  if (subject.length !== baseline.length) throw new Error('Both sides must have one slice per round');
  return subject.map((slice, index) => round3(slice.requestsPerSecond / baseline[index]!.requestsPerSecond));
}

/** The pair's ratio (median of its rounds, to three places) and its verdict against the target, if any. */
export function pairVerdict(
  ratios: readonly number[],
  target: number | undefined,
): { ratio: number; verdict: PairVerdict } {
  const ratio = round3(median(ratios));
  return { ratio, verdict: target === undefined ? 'INFO' : ratio >= target ? 'PASS' : 'FAIL' };
}

/**
 * The least-squares slope of resident memory over time, in MiB per hour, of the samples after `warmupSeconds` (the
 * caches and the JIT fill first; what grows after them is what a leak looks like). Undefined with fewer than two
 * samples after the warm-up.
 */
export function rssSlopeMiBPerHour(
  samples: ReadonlyArray<{ second: number; rssMiB: number }>,
  warmupSeconds: number,
): number | undefined {
  const after = samples.filter((sample) => sample.second >= warmupSeconds);
  if (after.length < 2) return undefined;
  const meanX = after.reduce((sum, sample) => sum + sample.second, 0) / after.length;
  const meanY = after.reduce((sum, sample) => sum + sample.rssMiB, 0) / after.length;
  let covariance = 0;
  let variance = 0;
  for (const sample of after) {
    covariance += (sample.second - meanX) * (sample.rssMiB - meanY);
    variance += (sample.second - meanX) ** 2;
  }
  if (variance === 0) return undefined;
  return (covariance / variance) * 3600;
}
