import fastifySwagger from '@fastify/swagger';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyReply,
  type FastifyInstance,
  type FastifyRequest,
  type onRequestHookHandler,
} from 'fastify';
import { activeSessionRoutes } from './activesessions/routes.js';
import { ActiveSessionService } from './activesessions/service.js';
import { adminModeRoutes } from './adminmode/routes.js';
import { dbconfigRoutes } from './dbconfig/routes.js';
import { apiKeyRoutes } from './apikeys/routes.js';
import { apiKeyStrategy } from './apikeys/strategy.js';
import { abandonedLogin, cookiePolicy } from './auth/cookies.js';
import type { SignInProvider } from './auth/federated/page.js';
import { signInPageRoutes } from './auth/federated/routes.js';
import type { FederatedSignIn } from './auth/federated/sign-in.js';
import { registerAccessHook } from './auth/hook.js';
import { OIDC_LOGIN_PATH, OIDC_LOGOUT_PATH, oidcRoutes } from './auth/oidc/routes.js';
import {
  authRoutes,
  FORM_BODY_LIMIT,
  type AuthRoutesOptions,
  formLoginRoutes,
  loginPageRoutes,
  type AuthSettings,
} from './auth/routes.js';
import { SAML_LOGIN_PATH, SAML_LOGOUT_PATH, samlRoutes } from './auth/saml/routes.js';
import { basicStrategy } from './auth/strategies/basic.js';
import { sessionStrategy } from './auth/strategies/session.js';
import type { Access } from './auth/types.js';
import { maxauthStrategy } from './auth/strategies/maxauth.js';
import { DEFAULT_BODY_LIMIT, isFederatedMode, type AppConfig } from './config.js';
import { databaseInputError, isDatabaseError } from './db/constraint-errors.js';
import type { Storage } from './db/database.js';
import { isDatabaseUnavailable, serializeError } from './db/faults.js';
import { errorBody, errors, isMaximoError, type MaximoError } from './errors.js';
import { consoleRoutes, signInLocation, wantsPage } from './console/routes.js';
import { healthRoutes } from './health/routes.js';
import { errorMessageRoutes } from './http/error-messages.js';
import { guardListener, keepReadingRefusedBody, listenerOptions } from './http/limits.js';
import { errorMessagesHref, linksFor, publicBaseOf, type ApiRoot } from './http/links.js';
import { CorsRules, corsHook, corsRoutes } from './http/cors.js';
import { ParameterNames } from './http/parameter-names.js';
import { createQueryStringParser, readFlag } from './http/query-string.js';
import { redactBody, redactUrl } from './http/redact.js';
import { echoRequestId, lazyRequestLoggers, requestIdOf } from './http/request-id.js';
import { sendJson } from './http/reply.js';
import { RETRY_AFTER_SECONDS } from './http/retry-after.js';
import { CanonicalHeadersResponse } from './http/wire.js';
import { swaggerOptions } from './openapi/document.js';
import { openApiRoutes } from './openapi/routes.js';
import { requestStatistics, type RequestStatistics } from './metrics/requests.js';
import { metricsRoutes } from './metrics/routes.js';
import { PACKAGE_VERSION } from './system/release.js';
import { lookupRoutes } from './lookups/routes.js';
import { migrationRoutes } from './migration/routes.js';
import { DEFAULT_IDLE_EXPIRY_SECONDS } from './oslc/route-options.js';
import { oslcRoutes } from './oslc/routes.js';
import { propertyRoutes } from './properties/routes.js';
import { createServices, type ServiceGraph } from './services.js';
import { serverRoutes } from './servers/routes.js';
import { ServerProcessService } from './servers/service.js';
import { systemRoutes } from './system/routes.js';

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

/**
 * Builds the service: its shared services, the error contract, the access hook, and every module of the API,
 * registered explicitly so this file reads as the list of what the API offers.
 */
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

export async function buildApp(
  config: AppConfig,
  storage: Storage,
  /** Where the log goes (default stdout); tests read it. */
  logStream?: { write(line: string): void },
): Promise<BuiltApp> {
  const requestsLogged = logsRequests(config.logLevel);
  const LazyRequestLogger = lazyRequestLoggers(config.logLevel);
  // Query parameter names in any case (docs/compatibility.md, "Query parameter names"), with the routes' own.
  const parameterNames = new ParameterNames();
  const app = Fastify({
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
    // At info every request is logged, through a child logger naming it (reqId). Above info a request logs only its
    // failures: its logger makes the child naming it only then (LazyRequestLogger).
    childLoggerFactory: (logger, bindings, options) =>
      requestsLogged || options.level !== undefined
        ? logger.child(bindings, options)
        : new LazyRequestLogger(logger, bindings, options),
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
    frameworkErrors: (error, request, reply) => {
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
  });
  guardListener(app.server, config);

  const graph = await createServices(config, storage, app.log);
  const { auth, metadata, properties, sessions, logins, apiKeys } = graph;
  app.addHook('onClose', () => graph.close());
  app.decorate(
    'publicBase',
    publicBaseOf(config.contextRoot, config.publicUrl, () => properties.get('mxe.oslc.webappurl')),
  );
  const routes: RouteSummary[] = [];
  const services: AppServices = { ...graph, routes };
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

  // Before any route registers: each route records its requests (src/metrics/requests.ts).
  const requests = requestStatistics(graph.metrics);
  requests.install(app);
  const cookies = cookiePolicy(config);
  const credentialStrategies =
    config.auth.mode === 'appserver'
      ? [basicStrategy(logins), maxauthStrategy(logins)]
      : [maxauthStrategy(logins), basicStrategy(logins)];
  const keyStrategy = apiKeyStrategy(apiKeys);
  // Before the access hook: a refusal carries the CORS headers too (docs/operations.md, "Cross-origin requests").
  const corsRules = new CorsRules((name) => properties.get(name));
  app.addHook('onRequest', corsHook(corsRules));
  const notFoundAccess = registerAccessHook(
    app,
    {
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
    },
    echoRequestId,
  );
  registerErrorContract(app, config, sessions, requests, notFoundAccess);

  const authSettings: AuthSettings = {
    mode: config.auth.mode,
    idleMinutes: config.auth.sessionIdleMinutes,
    maxMinutes: config.auth.sessionMaxMinutes,
    serverName: config.serverName,
    contextRoot: config.contextRoot,
  };
  const modules = {
    config,
    services: graph,
    login: { settings: authSettings, sessions, logins, cookies },
    administration: {
      activeSessions: new ActiveSessionService(storage.db, sessions),
      servers: new ServerProcessService(properties, config.serverName),
    },
  };
  // Before every module: it describes each route as it registers (docs/operations.md, "OpenAPI").
  await app.register(fastifySwagger, {
    ...swaggerOptions({
      contextRoot: config.contextRoot,
      apiRouteKeyOnly: config.apiKeys.apiRouteKeyOnly,
      version: PACKAGE_VERSION,
    }),
  });
  await app.register(apiModules, { prefix: `${config.contextRoot}/oslc`, root: 'oslc', ...modules });
  await app.register(apiModules, { prefix: `${config.contextRoot}/api`, root: 'api', ...modules });
  // The FORM login answers at the context root as deployed servers do, and under /oslc; its page at the root only.
  await app.register(formLoginRoutes, { prefix: config.contextRoot, ...modules.login });
  await app.register(formLoginRoutes, { prefix: `${config.contextRoot}/oslc`, ...modules.login });
  await app.register(loginPageRoutes, {
    prefix: config.contextRoot,
    sessions,
    contextRoot: config.contextRoot,
  });
  // Federated login (docs/federated-login.md): the identity provider's routes and the sign-in page, at the root.
  const federatedSignIn: FederatedSignIn = {
    contextRoot: config.contextRoot,
    sessions,
    cookies,
    logins,
    users: graph.federatedUsers,
    db: storage.db,
  };
  const providers: SignInProvider[] = [];
  if (graph.oidc) {
    await app.register(oidcRoutes, {
      prefix: config.contextRoot,
      relyingParty: graph.oidc,
      signIn: federatedSignIn,
    });
    providers.push({
      name: graph.oidc.providerName,
      loginPath: OIDC_LOGIN_PATH,
      logoutPath: OIDC_LOGOUT_PATH,
    });
  }
  if (graph.saml) {
    await app.register(samlRoutes, { prefix: config.contextRoot, saml: graph.saml, signIn: federatedSignIn });
    providers.push({
      name: graph.saml.providerName,
      loginPath: SAML_LOGIN_PATH,
      logoutPath: SAML_LOGOUT_PATH,
    });
  }
  if (isFederatedMode(config.auth.mode)) {
    await app.register(signInPageRoutes, {
      prefix: config.contextRoot,
      contextRoot: config.contextRoot,
      providers,
      sessions,
      auth,
      apiKeys,
    });
  }
  // The console (docs/console.md): a client of the API above, served from the files the build made.
  await app.register(consoleRoutes, {
    contextRoot: config.contextRoot,
    federated: isFederatedMode(config.auth.mode),
    providers,
    sessions,
    auth,
  });
  await app.register(healthRoutes, { prefix: config.contextRoot, health: graph.health });
  await app.register(openApiRoutes, { contextRoot: config.contextRoot, metadata });
  await app.register(corsRoutes, { contextRoot: config.contextRoot, rules: corsRules });
  // On a port of their own when EAS_METRICS_PORT says so (src/server.ts), else here for administrators.
  if (config.metrics.port === undefined) {
    await app.register(metricsRoutes, { contextRoot: config.contextRoot, metrics: graph.metrics });
  }

  return { app, services };
}

interface ApiModulesOptions {
  root: ApiRoot;
  config: AppConfig;
  services: ServiceGraph;
  login: Omit<AuthRoutesOptions, 'root'>;
  /** What the console needs that no other module offers: the sessions of every process, the server processes. */
  administration: { activeSessions: ActiveSessionService; servers: ServerProcessService };
}

/** The modules of one API root (`/oslc` or `/api`): both roots offer the same, and differ only in defaults. */
async function apiModules(app: FastifyInstance, options: ApiModulesOptions): Promise<void> {
  const { root, config, services } = options;
  const { resources, properties, apiKeys, lookups, metadata, system, adminMode, dbconfig, migration } =
    services;
  const api = {
    root,
    contextRoot: config.contextRoot,
    resources,
    maxPageSize: (osName: string) => properties.maxPageSize(osName),
    idleExpiry: () => properties.getInteger('mxe.oslc.idleexiry') ?? DEFAULT_IDLE_EXPIRY_SECONDS,
    collectionCount: () => properties.getFlag('mxe.oslc.collectioncount') === true,
  };
  await app.register(oslcRoutes, api);
  await app.register(lookupRoutes, { ...api, lookups });
  await app.register(errorMessageRoutes);
  await app.register(propertyRoutes, { properties });
  await app.register(apiKeyRoutes, { apiKeys });
  await app.register(authRoutes, { root, ...options.login });
  await app.register(systemRoutes, { root, contextRoot: config.contextRoot, metadata, system });
  await app.register(migrationRoutes, { migration });
  await app.register(adminModeRoutes, { adminMode });
  await app.register(dbconfigRoutes, { dbconfig });
  await app.register(activeSessionRoutes, { activeSessions: options.administration.activeSessions });
  await app.register(serverRoutes, { servers: options.administration.servers });
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
