/**
 * Database faults (docs/operations.md): which failures mean "the database cannot be reached right now" (answered
 * 503 EAS0503E, retried by the client) rather than a bug (500), and how such a failure is written to the log
 * without connection details.
 */

/** Node's socket errors: the server is not there, went away, or does not answer. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is shutting down, starting up, or dropped this session (class 08 is "connection
 * exception"; 57P01-57P03 are administrator shutdown, crash shutdown and "cannot connect now").
 */
const UNAVAILABLE_STATES = /^(08...|57P0[1-3]|53300)$/;

/** Messages of node-postgres for a lost or never-made connection (they carry no code). */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end)/;

interface ErrorFields {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** True when `error` (or its cause) says the database is unreachable or dropped the connection. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    if (typeof current !== 'object') return false;
    const { code, message, cause } = current as ErrorFields;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.test(code))) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
    if (current instanceof AggregateError) return current.errors.some(isDatabaseUnavailable);
    current = cause;
  }
  return false;
}

/** Own properties of errors that name a server, a user or a connection: never logged. */
const CONNECTION_FIELDS = new Set([
  'address',
  'port',
  'host',
  'hostname',
  'user',
  'password',
  'database',
  'client',
  'connection',
  'connectionString',
  'connectionParameters',
]);

export interface LoggedError {
  type: string;
  message: string;
  stack: string;
  [field: string]: unknown;
}

/**
 * The log's view of an error (pino's `err` serializer): name, message, stack and plain own fields, never an
 * object graph (a pg client, a socket) and never where the database is. A connection failure is logged by its
 * code only, since its message names the host and port (`connect ECONNREFUSED 10.0.0.5:5432`).
 */
export function serializeError(error: unknown): LoggedError {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error), stack: '' };
  const code = (error as ErrorFields).code;
  const hidden = typeof code === 'string' && NETWORK_CODES.has(code);
  const message = hidden ? `database connection failed (${code})` : error.message;
  const stack = error.stack ?? '';
  const logged: LoggedError = {
    type: error.constructor.name,
    message,
    stack: hidden ? stack.split('\n').slice(1).join('\n') : stack,
  };
  for (const [field, value] of Object.entries(error)) {
    if (CONNECTION_FIELDS.has(field) || field === 'message' || field === 'stack') continue;
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) logged[field] = value;
  }
  if (error.cause !== undefined) logged.cause = serializeError(error.cause);
  if (error instanceof AggregateError) logged.errors = error.errors.map(serializeError);
  return logged;
}

/** One line for a fault outside any request (pool, listener): the kind and code, never the object. */
export function describeFault(error: unknown): string {
  const { type, message, code } = serializeError(error);
  return `${type}: ${message}${typeof code === 'string' && !message.includes(code) ? ` (${code})` : ''}`;
}
