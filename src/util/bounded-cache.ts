import { CacheStatistics } from './cache-statistics.js';

/**
 * A map that keeps at most `capacity` entries, forgetting the oldest first. For memoizing pure work keyed by client
 * input (query texts, cookie values), where an unbounded map would let a client grow the process without limit.
 * Oldest by insertion, not by use: a read costs one lookup, and an entry in use that was forgotten is only
 * computed again.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();
  /** Hits and misses of `getOrCompute` (the metrics read them). */
  readonly statistics = new CacheStatistics();

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('capacity must be a positive integer');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    if (!this.entries.has(key) && this.entries.size >= this.capacity) {
      // A Map iterates in insertion order: its first key is the oldest.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, value);
  }

  /**
   * The cached value, or the computed one, remembered; a computation that throws remembers nothing. `compute` is
   * given the key, so that a path taken on every request can pass a function made once instead of a closure made
   * on each call (bench/README.md, "Cost account").
   */
  getOrCompute(key: K, compute: (key: K) => V): V {
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.statistics.hits += 1;
      return cached;
    }
    this.statistics.misses += 1;
    const value = compute(key);
    this.set(key, value);
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
