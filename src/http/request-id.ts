import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

/**
 * Request ids (docs/operations.md, "Request ids"): the one a client or a proxy sends in `x-request-id` when it is
 * safe to write into logs and headers, else a new one; every log line of the request names it (`reqId`), and the
 * answer carries it back in `X-Request-Id`.
 */
export const REQUEST_ID_HEADER = 'x-request-id';

/** Letters, digits and `._:+/=-`, at most 128: UUIDs, trace ids, base64 ids; nothing that could forge a log line. */
const SAFE_REQUEST_ID = /^[\w.:+/=-]{1,128}$/;

/**
 * Generated ids are UUID-shaped: a random prefix drawn once per process, then a counter. Unique across processes
 * like a random UUID, without drawing random bytes on every request. The counter's hex digits live in a buffer
 * holding the whole id, incremented in place (usually one digit changes), which reads back as one flat string: a
 * string built by concatenation is checked and written more slowly when Node validates and sends the echoed header.
 */
const GENERATED_PREFIX = randomUUID().slice(0, 24);
const generatedId = Buffer.from(`${GENERATED_PREFIX}000000000000`, 'latin1');
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_A = 0x61;
const LOWER_F = 0x66;

function nextGeneratedId(): string {
  // Adds one to the hex counter, carrying leftwards; past ffffffffffff it wraps to 000000000000.
  for (let index = generatedId.length - 1; index >= GENERATED_PREFIX.length; index -= 1) {
    const digit = generatedId[index]!;
    if (digit === LOWER_F) {
      generatedId[index] = ZERO;
      continue;
    }
    generatedId[index] = digit === NINE ? LOWER_A : digit + 1;
    break;
  }
  return generatedId.toString('latin1');
}

/** Fastify's `genReqId`: the client's id when safe, else a generated one. */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers[REQUEST_ID_HEADER];
  if (typeof sent === 'string' && SAFE_REQUEST_ID.test(sent)) return sent;
  return nextGeneratedId();
}

/** Echoes the id on every answer; the access hook runs it first, so refusals carry it too (src/auth/hook.ts). */
export function echoRequestId(request: FastifyRequest, reply: FastifyReply): void {
  reply.header(REQUEST_ID_HEADER, request.id);
}

/** pino's level numbers. */
const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
type Level = keyof typeof LEVELS;
const LEVEL_NAMES = Object.keys(LEVELS) as Level[];

type LazyLogger = FastifyBaseLogger & { readonly made: FastifyBaseLogger | undefined };
export type LazyRequestLoggers = new (
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions | undefined,
) => LazyLogger;

const ignore = (): void => undefined;

/**
 * The loggers of requests when requests are not logged (a level above `info`): each names its request like a
 * child logger, but makes that child only when the request logs at an enabled level, which most never do (a pino
 * child per request costs more than the rest of a cached request's logging path, see src/app.ts). Methods of
 * disabled levels are a shared no-op, as on pino's own loggers: Fastify calls `info` twice on every request.
 */
export function lazyRequestLoggers(level: string): LazyRequestLoggers {
  class LazyRequestLogger implements FastifyBaseLogger {
    made: FastifyBaseLogger | undefined;

    constructor(
      private readonly parent: FastifyBaseLogger,
      private readonly bindings: Bindings,
      private readonly options: ChildLoggerOptions | undefined,
    ) {}

    get level(): string {
      return this.made?.level ?? this.parent.level;
    }

    set level(changed: string) {
      this.logger().level = changed;
    }

    logger(): FastifyBaseLogger {
      this.made ??= this.parent.child(this.bindings, this.options);
      return this.made;
    }

    fatal(...args: unknown[]): void {
      this.write('fatal', args);
    }
    error(...args: unknown[]): void {
      this.write('error', args);
    }
    warn(...args: unknown[]): void {
      this.write('warn', args);
    }
    info(...args: unknown[]): void {
      this.write('info', args);
    }
    debug(...args: unknown[]): void {
      this.write('debug', args);
    }
    trace(...args: unknown[]): void {
      this.write('trace', args);
    }
    silent(): void {}

    private write(at: Level, args: unknown[]): void {
      const logger = this.logger();
      Reflect.apply(logger[at], logger, args);
    }

    child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
      return this.logger().child(bindings, options);
    }
  }
  const threshold = level === 'silent' ? Infinity : (LEVELS[level as Level] ?? 0);
  for (const name of LEVEL_NAMES) {
    if (LEVELS[name] < threshold) Object.defineProperty(LazyRequestLogger.prototype, name, { value: ignore });
  }
  return LazyRequestLogger;
}

/**
 * Makes the loggers of requests lazy (`lazyRequestLoggers`) when requests are not logged, through the root logger's
 * own `child`, which Fastify's default factory calls for every request with the request's id as only binding. A
 * `childLoggerFactory` option would do the same, but Fastify then checks the logger it returns, method by method,
 * on every request. Children with any other bindings, or asking for a level of their own, are pino's.
 */
export function lazyRequestLogging(root: FastifyBaseLogger, level: string, requestIdLabel = 'reqId'): void {
  if (level !== 'silent' && (LEVELS[level as Level] ?? 0) <= LEVELS.info) return;
  const LazyRequestLogger = lazyRequestLoggers(level);
  const pinoChild = root.child.bind(root);
  // What a lazy logger makes its child from: the root logger as it was, with pino's own `child`.
  const parent = Object.create(root, { child: { value: pinoChild } }) as FastifyBaseLogger;
  root.child = (bindings: Bindings, options?: ChildLoggerOptions) =>
    options?.level === undefined &&
    typeof bindings[requestIdLabel] === 'string' &&
    onlyKey(bindings, requestIdLabel)
      ? new LazyRequestLogger(parent, bindings, options)
      : pinoChild(bindings, options);
}

/** Whether `name` is the object's only key, without the array `Object.keys` makes (asked on every request). */
function onlyKey(object: Bindings, name: string): boolean {
  for (const key in object) if (key !== name) return false;
  return true;
}
