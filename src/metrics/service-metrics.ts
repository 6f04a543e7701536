import type { Storage } from '../db/database.js';
import type { CacheStatistics } from '../util/cache-statistics.js';
import type { Metrics } from './service.js';

export interface ObservedServices {
  storage: Storage;
  /** Live sessions of every process (a count in the database, read when scraped). */
  liveSessions: () => Promise<number>;
  /** The in-memory caches of the request path, by the name they are labelled with. */
  caches: Readonly<Record<string, CacheStatistics>>;
}

/**
 * The metrics of the services (docs/operations.md, "Metrics"): connection pool, caches, sessions. Every value is
 * read when scraped, from what the services already hold; the request path pays only the caches' two counters.
 */
export function observeServices(metrics: Metrics, services: ObservedServices): void {
  const { storage, caches, liveSessions } = services;
  const poolUsage = storage.poolUsage;
  if (poolUsage) {
    metrics.gauge({
      name: 'eas_db_pool_connections',
      help: 'Connections of the database pool: max (the limit), total (open), idle, waiting (queries queued).',
      labelNames: ['state'],
      collect() {
        const usage = poolUsage();
        this.set({ state: 'max' }, usage.max);
        this.set({ state: 'total' }, usage.total);
        this.set({ state: 'idle' }, usage.idle);
        this.set({ state: 'waiting' }, usage.waiting);
      },
    });
  }
  metrics.counter({
    name: 'eas_cache_hits_total',
    help: 'Lookups answered from memory, per cache.',
    labelNames: ['cache'],
    collect() {
      this.reset();
      for (const [cache, statistics] of Object.entries(caches)) this.inc({ cache }, statistics.hits);
    },
  });
  metrics.counter({
    name: 'eas_cache_misses_total',
    help: 'Lookups that had to read the database or compute, per cache.',
    labelNames: ['cache'],
    collect() {
      this.reset();
      for (const [cache, statistics] of Object.entries(caches)) this.inc({ cache }, statistics.misses);
    },
  });
  metrics.gauge({
    name: 'eas_cache_hit_ratio',
    help: 'Hits over lookups since start, per cache (0 before the first lookup).',
    labelNames: ['cache'],
    collect() {
      for (const [cache, { hits, misses }] of Object.entries(caches)) {
        this.set({ cache }, hits + misses === 0 ? 0 : hits / (hits + misses));
      }
    },
  });
  metrics.gauge({
    name: 'eas_sessions_live',
    help: 'Live login sessions, of every server process sharing the database.',
    async collect() {
      this.set(await liveSessions());
    },
  });
}
