/**
 * Hits and misses of an in-memory cache, counted where the cache is read: two integer increments, nothing
 * allocated, so the request path can afford them. The metrics read them when scraped (docs/operations.md, "Metrics").
 */
export class CacheStatistics {
  hits = 0;
  misses = 0;
}
