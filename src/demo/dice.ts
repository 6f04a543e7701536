/** Deterministic randomness of the demo data: the same seed gives the same rows. */

/** mulberry32: a tiny, well-distributed 32-bit generator; enough for demo data, not for anything secret. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export class Dice {
  constructor(private readonly random: () => number) {}

  /** Clamped because a caller-supplied generator may return exactly 1. */
  private unit(): number {
    return Math.min(Math.max(this.random(), 0), 0.999_999_999);
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.unit() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.unit() < probability;
  }

  amount(min: number, max: number): number {
    return Math.round((min + this.unit() * (max - min)) * 100) / 100;
  }

  pick<T>(list: readonly T[]): T {
    const value = list[Math.floor(this.unit() * list.length)];
    if (value === undefined) throw new Error('Demo data: picked from an empty list');
    return value;
  }

  weighted<T>(entries: ReadonlyArray<readonly [T, number]>): T {
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let point = this.unit() * total;
    for (const [value, weight] of entries) {
      point -= weight;
      if (point < 0) return value;
    }
    return this.pick(entries)[0];
  }
}
