/**
 * A value now, or later. The request path returns what it has in memory (a cached session, key or profile) as a
 * plain value: each promise it does not make is a microtask and an allocation less on every request. Only a cache
 * miss, which waits on the database, returns a promise.
 */
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)` now when the value is there, else once it is; a failure propagates either way. */
export function andThen<T, R>(value: MaybePromise<T>, next: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
