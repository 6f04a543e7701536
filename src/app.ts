import type { Server } from 'node:http';
import fastifySwagger from '@fastify/swagger';
import Fastify, {
  LogController,
  type FastifyHttpOptions,
  type FastifyError,
  type FastifyReply,
  type FastifyInstance,
  type FastifyRequest,
  type onRequestHookHandler,
} from 'fastify';
import { apiKeyStrategy } from './apikeys/strategy.js';
import { abandonedLogin, cookiePolicy, type CookiePolicy } from './auth/cookies.js';
import { registerAccessHook, type AccessHookOptions } from './auth/hook.js';
import { FORM_BODY_LIMIT } from './auth/routes.js';
import { basicStrategy } from './auth/strategies/basic.js';
import { sessionStrategy } from './auth/strategies/session.js';
import type { Access } from './auth/types.js';
import { maxauthStrategy } from './auth/strategies/maxauth.js';
import { DEFAULT_BODY_LIMIT, type AppConfig } from './config.js';
import { databaseInputError, isDatabaseError } from './db/constraint-errors.js';
import type { Storage } from './db/database.js';
import { isDatabaseUnavailable, serializeError } from './db/faults.js';
import { errorBody, errors, isMaximoError, type MaximoError } from './errors.js';
import { signInLocation, wantsPage } from './console/routes.js';
import { guardListener, keepReadingRefusedBody, listenerOptions } from './http/limits.js';
import { errorMessagesHref, linksFor, publicBaseOf, type ApiRoot } from './http/links.js';
import { CorsRules, corsHeaders } from './http/cors.js';
import { ParameterNames } from './http/parameter-names.js';
import { createQueryStringParser, readFlag } from './http/query-string.js';
import { redactBody, redactUrl } from './http/redact.js';
import { echoRequestId, lazyRequestLogging, requestIdOf } from './http/request-id.js';
import { sendJson } from './http/reply.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { RETRY_AFTER_SECONDS } from './http/retry-after.js';
import { CanonicalHeadersResponse } from './http/wire.js';
import { swaggerOptions } from './openapi/document.js';
import { requestStatistics, type RequestStatistics } from './metrics/requests.js';
import { appModules, moduleContext } from './modules.js';
import { PACKAGE_VERSION } from './system/release.js';
import { createServices, type ServiceGraph } from './services.js';

/** A route as registered, with what it requires (the shared access test walks every one). */
export interface RouteSummary {
  method: string;
  url: string;
  access: Access | undefined;
}

export interface AppServices extends ServiceGraph {
  /** Every route of the API, collected as modules register them. */
  routes: RouteSummary[];
}

export interface BuiltApp {
  app: FastifyInstance;
  services: AppServices;
}

/** Longest path parameter the router accepts (see the `id` schema of src/oslc/schemas.ts). */
const MAX_PATH_PARAMETER = 1024;

/** pino's level numbers: `info` is 30; a level at or below it logs every request. */
const LEVEL_NUMBERS: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};
const logsRequests = (level: string): boolean => (LEVEL_NUMBERS[level] ?? Infinity) <= LEVEL_NUMBERS.info!;

/**
 * Fastify's request lines at a level that drops its `info` lines: `incoming request` and `request completed` are not
 * written at all (the request's logger would discard them), `request errored` and every other failure line still are.
 */
class ErrorLinesOnly extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) super.requestCompleted(error, request, reply);
  }
}

/**
 * At info: one line per request, written when it completes, with its method, redacted URL, client address, status
 * and time (docs/operations.md, "Logging"). Fastify's `incoming request` line would double the log and bury the
 * first-start banner; a request that fails still gets its error lines.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) super.requestCompleted(error, request, reply);
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/**
 * Builds the service: its shared services, the request pipeline (CORS, access, error contract; docs/architecture.md)
 * and every module of the API, registered from the one list of `src/modules.ts`.
 */
export async function buildApp(
  config: AppConfig,
  storage: Storage,
  /** Where the log goes (default stdout); tests read it. */
  logStream?: { write(line: string): void },
): Promise<BuiltApp> {
  // Query parameter names in any case (docs/compatibility.md, "Query parameter names"), with the routes' own.
  const parameterNames = new ParameterNames();
  const app = Fastify(fastifyOptions(config, parameterNames, logStream));
  guardListener(app.server, config);
  // At info every request is logged, through a child logger naming it (reqId). Above info a request logs only its
  // failures: its logger makes the child naming it only then (src/http/request-id.ts).
  lazyRequestLogging(app.log, config.logLevel);

  const graph = await createServices(config, storage, app.log);
  const { properties } = graph;
  app.addHook('onClose', () => graph.close());
  app.decorate(
    'publicBase',
    publicBaseOf(config.contextRoot, config.publicUrl, () => properties.get('mxe.oslc.webappurl')),
  );
  if (config.publicUriFrom !== undefined) app.decorate('publicUriFrom', config.publicUriFrom);
  const routes = collectRoutes(app, parameterNames);

  // Before any route registers: each route records its requests (src/metrics/requests.ts).
  const requests = requestStatistics(graph.metrics);
  requests.install(app);
  const cookies = cookiePolicy(config);
  // Before the access hook: a refusal carries the CORS headers too (docs/operations.md, "Cross-origin requests").
  const corsRules = new CorsRules((name) => properties.get(name));
  const cors = corsHeaders(corsRules);
  const notFoundAccess = registerAccessHook(app, accessOptions(config, graph, cookies), (request, reply) => {
    echoRequestId(request, reply);
    cors(request, reply);
  });
  registerErrorContract(app, config, graph.sessions, requests, notFoundAccess);
  // Every answer, error answers included: nosniff, HSTS, no-store and framing (docs/security.md).
  registerSecurityHeaders(app, { publicUrl: config.publicUrl });

  const context = moduleContext(config, storage, graph, { cookies, corsRules });
  // Before every module: it describes each route as it registers (docs/operations.md, "OpenAPI").
  await app.register(fastifySwagger, {
    ...swaggerOptions({
      contextRoot: config.contextRoot,
      apiRouteKeyOnly: config.apiKeys.apiRouteKeyOnly,
      version: PACKAGE_VERSION,
    }),
  });
  for (const module of appModules) await module.register(app, context);

  return { app, services: { ...graph, routes } };
}

/** Fastify's options: the log, request ids, the router, and the listener's limits. */
function fastifyOptions(
  config: AppConfig,
  parameterNames: ParameterNames,
  logStream: { write(line: string): void } | undefined,
): FastifyHttpOptions<Server> {
  const requestsLogged = logsRequests(config.logLevel);
  return {
    logger: {
      level: config.logLevel,
      ...(logStream && { stream: logStream }),
      redact: [
        'req.headers.maxauth',
        'req.headers.authorization',
        'req.headers.apikey',
        'req.headers.cookie',
      ],
      serializers: {
        req: (request: FastifyRequest) => ({
          method: request.method,
          url: redactUrl(request.url),
          remoteAddress: request.ip,
        }),
        // No object graph and no connection details in the log (docs/operations.md).
        err: serializeError,
        body: redactBody,
      },
    },
    // Request ids: the client's `x-request-id` when safe, else generated; echoed on every answer (docs/operations.md).
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Above info, Fastify's own two info lines per request would be dropped anyway: not even asked for.
    logController: requestsLogged ? new OneLinePerRequest() : new ErrorLinesOnly(),
    bodyLimit: config.bodyLimit,
    // Rest ids are base64 of every key value: a synonym-domain value's runs to about 200 characters, past the
    // router's default limit of 100 for a path parameter.
    routerOptions: {
      caseSensitive: true,
      ignoreTrailingSlash: true,
      maxParamLength: MAX_PATH_PARAMETER,
      querystringParser: createQueryStringParser(parameterNames),
    },
    // Failures the router raises before any route runs (a malformed %-escape) bypass the error handler.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const maximo =
        error.code === 'FST_ERR_ASYNC_CONSTRAINT'
          ? errors.internal()
          : errors.badRequest('The request address is not valid.');
      const links = linksFor(request, config.contextRoot, apiRootOf(request, config.contextRoot), false);
      void sendJson(
        reply,
        maximo.status,
        errorBody(maximo, { messagesBase: errorMessagesHref(links), lean: true }),
      );
    },
    // Limits of the listener, its refusals as error objects (src/http/limits.ts), and header names spelled as the
    // deployed systems write them (docs/compatibility.md, "Header names").
    ...listenerOptions(config, CanonicalHeadersResponse),
  };
}

/** Every route as it registers, with its access; the query-string parser learns each route's parameter names. */
function collectRoutes(app: FastifyInstance, parameterNames: ParameterNames): RouteSummary[] {
  const routes: RouteSummary[] = [];
  app.addHook('onRoute', (route) => {
    parameterNames.addSchema(route.schema?.querystring);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      // Read when asked: a module may declare the access of routes a package registers (src/openapi/routes.ts)
      // in an onRoute hook of its own, which runs after this one.
      if (method !== 'HEAD')
        routes.push({
          method,
          url: route.url,
          get access() {
            return route.config?.access;
          },
        });
    }
  });
  return routes;
}

/** The access hook's strategies, in the order they are tried (docs/security.md), and what it checks with. */
function accessOptions(config: AppConfig, graph: ServiceGraph, cookies: CookiePolicy): AccessHookOptions {
  const { auth, metadata, sessions, logins, apiKeys } = graph;
  const credentialStrategies =
    config.auth.mode === 'appserver'
      ? [basicStrategy(logins), maxauthStrategy(logins)]
      : [maxauthStrategy(logins), basicStrategy(logins)];
  const keyStrategy = apiKeyStrategy(apiKeys);
  return {
    auth,
    strategies: [keyStrategy, ...credentialStrategies, sessionStrategy(sessions)],
    keyOnly: config.apiKeys.apiRouteKeyOnly
      ? { prefix: `${config.contextRoot}/api`, strategy: keyStrategy }
      : undefined,
    metadata,
    sessions,
    cookies,
    tokenCookie: config.auth.mode === 'appserver',
    admission: graph.adminMode,
  };
}

function apiRootOf(request: FastifyRequest, contextRoot: string): ApiRoot {
  return request.url.startsWith(`${contextRoot}/api`) ? 'api' : 'oslc';
}

/**
 * Maps every failure to the error object (docs/errors.md); nothing internal reaches the client. `bodyLimit` is the
 * limit a too-large body was held to, named in the answer.
 */
export function toMaximoError(error: unknown, bodyLimit = DEFAULT_BODY_LIMIT): MaximoError {
  if (isMaximoError(error)) return error;
  const refusedByDatabase = databaseInputError(error);
  if (refusedByDatabase) return refusedByDatabase;
  const fastifyError = error as Partial<FastifyError> & { validation?: unknown };
  if (fastifyError.validation)
    return errors.badRequest(`The request is not valid: ${fastifyError.message ?? ''}`);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.malformedJson();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType('of this request');
    default:
      break;
  }
  if (isDatabaseUnavailable(error)) return errors.databaseUnavailable();
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) return errors.malformedJson();
  if (
    typeof fastifyError.statusCode === 'number' &&
    fastifyError.statusCode >= 400 &&
    fastifyError.statusCode < 500
  ) {
    return errors.badRequest('The request could not be read.');
  }
  return errors.internal();
}

/** The limit a refused body was held to: the FORM login reads its body, of any content type, with its own. */
function bodyLimitOf(request: FastifyRequest, config: AppConfig): number {
  return request.routeOptions.url?.endsWith('/j_security_check') ? FORM_BODY_LIMIT : config.bodyLimit;
}

function registerErrorContract(
  app: FastifyInstance,
  config: AppConfig,
  sessions: ServiceGraph['sessions'],
  requests: RequestStatistics,
  /** The access hook of unmatched URLs (src/auth/hook.ts): the key-only route refuses them before the 404. */
  notFoundAccess: onRequestHookHandler,
): void {
  app.setErrorHandler(async (error, request, reply) => {
    const maximo = toMaximoError(error, bodyLimitOf(request, config));
    if ((error as Partial<FastifyError>).code === 'FST_ERR_CTP_BODY_TOO_LARGE') keepReadingRefusedBody(reply);
    if (maximo.status >= 500) {
      // The request's logger names the request (reqId), whatever the level (childLoggerFactory).
      request.log.error({ err: error }, 'request failed');
    } else if (!isMaximoError(error) && isDatabaseError(error)) {
      // Validation let a value reach the database: answered 400 all the same, logged as a gap to close. Only the
      // error's names, not its detail, which may quote the row (src/db/constraint-errors.ts).
      const { code, table, column, constraint } = error as unknown as Record<string, unknown>;
      request.log.warn({ database: { code, table, column, constraint } }, 'input refused by the database');
    }
    const query = (request.query ?? {}) as Record<string, string | undefined>;
    // Pages a browser opens (Swagger UI, the metrics) lead it to the console's sign-in instead of an error object.
    if (
      maximo.reasonCode === 'BMXAA7901E' &&
      request.method === 'GET' &&
      request.routeOptions.config?.browserSignIn === true &&
      wantsPage(request)
    ) {
      return reply.redirect(signInLocation(request, config.contextRoot), 302);
    }
    const links = linksFor(
      request,
      config.contextRoot,
      apiRootOf(request, config.contextRoot),
      readFlag(query.relativeuri) === true,
    );
    // Errors are lean unless the client explicitly asked for the namespaced form (clients read Error.reasonCode).
    const lean = readFlag(query.lean) !== false;
    try {
      await abandonedLogin(request, reply, sessions);
    } catch (endFailure) {
      // The answer stays the one the request earned (a 503 while the database is away, typically). The session
      // was never sent to the client and ends by itself after the idle timeout.
      request.log.warn({ err: endFailure }, 'could not end the session of a refused request');
    }
    // A client told when to come back does not hammer a server whose database is away (docs/operations.md).
    if (maximo.status === 503 && !reply.hasHeader('retry-after'))
      reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    return sendJson(
      reply,
      maximo.status,
      errorBody(maximo, { messagesBase: errorMessagesHref(links), lean }),
    );
  });
  // Fastify gives the not-found route every lifecycle hook named here, although its types list only preValidation
  // and preHandler: onRequest refuses on the key-only route before the body is read, as on every other route.
  const notFoundHooks = { onRequest: notFoundAccess, preHandler: [] };
  app.setNotFoundHandler(notFoundHooks, (request, reply) => {
    const links = linksFor(request, config.contextRoot, apiRootOf(request, config.contextRoot), false);
    const error = errors.routeNotFound(request.method, request.url.split('?')[0] ?? '');
    const sent = sendJson(
      reply,
      404,
      errorBody(error, { messagesBase: errorMessagesHref(links), lean: true }),
    );
    requests.recordUnmatched(request, reply);
    return sent;
  });
}
