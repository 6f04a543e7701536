import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

/**
 * Request ids (docs/operations.md, "Request ids"): the one a client or a proxy sends in `x-request-id` when it is
 * safe to write into logs and headers, else a new one; every log line of the request names it (`reqId`), and the
 * answer carries it back in `X-Request-Id`.
 */
export const REQUEST_ID_HEADER = 'x-request-id';

/** Letters, digits and `._:+/=-`, at most 128: UUIDs, trace ids, base64 ids; nothing that could forge a log line. */
const SAFE_REQUEST_ID = /^[\w.:+/=-]{1,128}$/;

/** Fastify's `genReqId`: the client's id when safe, else a random UUID (unique across processes). */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers[REQUEST_ID_HEADER];
  return typeof sent === 'string' && SAFE_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** Echoes the id on every answer, refusals by the access hook included (registered before it). */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}

/** pino's level numbers. */
const LEVELS: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};

/**
 * The logger of a request when requests are not logged (a level above `info`): it names the request like a child
 * logger, but makes that child only when the request logs something at an enabled level, which most never do. A
 * pino child per request costs more than the rest of a cached request's logging path (src/app.ts).
 */
export class LazyRequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions | undefined,
  ) {}

  get level(): string {
    return this.made?.level ?? this.options?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  private logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  private at(level: string, args: unknown[]): void {
    if ((LEVELS[level] ?? 0) < (LEVELS[this.level] ?? 0)) return;
    const logger = this.logger() as unknown as Record<string, (...values: unknown[]) => void>;
    logger[level]!(...args);
  }

  // Methods on the prototype, not arrow fields: a request's logger is one small object.
  fatal(...args: unknown[]): void {
    this.at('fatal', args);
  }
  error(...args: unknown[]): void {
    this.at('error', args);
  }
  warn(...args: unknown[]): void {
    this.at('warn', args);
  }
  info(...args: unknown[]): void {
    this.at('info', args);
  }
  debug(...args: unknown[]): void {
    this.at('debug', args);
  }
  trace(...args: unknown[]): void {
    this.at('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }
}
