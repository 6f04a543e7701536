import { executionAsyncResource } from 'node:async_hooks';

/**
 * One entry of Node's `process.nextTick` queue, kept for the life of the process (see `keepTickObjectShape`).
 */
let kept: object | undefined;

/**
 * Keeps one `process.nextTick` queue entry alive, so that the object shape V8 gives those entries stays the one made
 * at start. Every request queues several of them (a request's end, a response's write, a socket's resume).
 *
 * Why: on Node.js 20 the shape can be dropped while no entry is alive. It is then made anew from the next entry's
 * async id: a small integer once Node's id counter runs optimized, which fixes the field to that representation. The
 * next id read by unoptimized code is a boxed number (the counter is a Float64Array), which replaces the shape
 * again. From then on, Node builds each entry through V8's runtime instead of inline code: in about half of all server starts, a fifth
 * more instructions per cached request (docs/operations.md, "Tick queue entries"). Node.js 22 and 24 did not show
 * it; there this keeps one small object.
 *
 * Call it once, early, before the work of starting (database, listener) runs.
 */
export function keepTickObjectShape(): void {
  process.nextTick(() => {
    // Inside a tick callback, the execution resource is the queue entry that called it.
    kept = executionAsyncResource();
  });
}

/** The kept entry, once the tick has run (for tests). */
export function keptTickObject(): object | undefined {
  return kept;
}
