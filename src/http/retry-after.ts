/**
 * Seconds a client is asked to wait before retrying a 503 (the database unreachable, the process not ready), in the
 * `Retry-After` header (docs/operations.md, "Faults"): long enough for a pool to reconnect, short enough that a
 * client retrying as told does not stay away from a recovered server.
 */
export const RETRY_AFTER_SECONDS = 5;
