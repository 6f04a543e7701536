import type { FastifyInstance } from 'fastify';
import { activeSessionRoutes } from './activesessions/routes.js';
import { ActiveSessionService } from './activesessions/service.js';
import { adminModeRoutes } from './adminmode/routes.js';
import { attachmentRoutes } from './attachments/routes.js';
import { apiKeyRoutes } from './apikeys/routes.js';
import { auditRoutes } from './audit/routes.js';
import { NO_AUDIT } from './audit/types.js';
import type { CookiePolicy } from './auth/cookies.js';
import type { SignInProvider } from './auth/federated/page.js';
import { signInPageRoutes } from './auth/federated/routes.js';
import type { FederatedSignIn } from './auth/federated/sign-in.js';
import { SignInStarts } from './auth/federated/start-throttle.js';
import { OIDC_LOGIN_PATH, OIDC_LOGOUT_PATH, oidcRoutes } from './auth/oidc/routes.js';
import {
  authRoutes,
  formLoginRoutes,
  loginPageRoutes,
  type AuthRoutesOptions,
  type AuthSettings,
} from './auth/routes.js';
import { SAML_LOGIN_PATH, SAML_LOGOUT_PATH, samlRoutes } from './auth/saml/routes.js';
import { isFederatedMode, type AppConfig } from './config.js';
import { consoleRoutes } from './console/routes.js';
import type { Storage } from './db/database.js';
import { dbconfigRoutes } from './dbconfig/routes.js';
import { backupRoutes } from './backup/routes.js';
import { healthRoutes } from './health/routes.js';
import { corsRoutes, type CorsRules } from './http/cors.js';
import { errorMessageRoutes } from './http/error-messages.js';
import type { ApiRoot } from './http/links.js';
import { lookupRoutes } from './lookups/routes.js';
import { metricsRoutes } from './metrics/routes.js';
import { migrationRoutes } from './migration/routes.js';
import { openApiRoutes } from './openapi/routes.js';
import { DEFAULT_IDLE_EXPIRY_SECONDS } from './oslc/route-options.js';
import { oslcRoutes } from './oslc/routes.js';
import { propertyRoutes } from './properties/routes.js';
import { serverRoutes } from './servers/routes.js';
import { ServerProcessService } from './servers/service.js';
import type { ServiceGraph } from './services.js';
import { systemRoutes } from './system/routes.js';

/**
 * The modules of the service, in the order they register (docs/architecture.md): this file reads as the list of what
 * the API offers. A module is registered here explicitly, nothing is loaded by name; a new one is a new entry.
 */

/** What the modules are built from: the configuration, the shared services, and what the app made for them. */
export interface ModuleContext {
  config: AppConfig;
  storage: Storage;
  services: ServiceGraph;
  cookies: CookiePolicy;
  corsRules: CorsRules;
  /** What the login routes of every address need. */
  login: Omit<AuthRoutesOptions, 'root'>;
  /** What the console needs that no other module offers: the sessions of every process, the server processes. */
  administration: { activeSessions: ActiveSessionService; servers: ServerProcessService };
  federatedSignIn: FederatedSignIn;
  /** The identity providers' entries of the sign-in page: each provider's module adds its own as it registers. */
  providers: SignInProvider[];
}

/** One module of the app: what it offers, and how it registers its routes. */
export interface AppModule {
  name: string;
  register(app: FastifyInstance, context: ModuleContext): PromiseLike<unknown>;
}

/** One module of an API root: registered under both `/oslc` and `/api`, which differ only in defaults. */
interface ApiRootModule {
  name: string;
  register(app: FastifyInstance, context: ModuleContext, api: ApiRootOptions): PromiseLike<unknown>;
}

/** What the object-structure routes of one root share with the lookups. */
type ApiRootOptions = ReturnType<typeof apiRootOptions>;

function apiRootOptions(root: ApiRoot, { config, services }: ModuleContext) {
  const { resources, properties } = services;
  return {
    root,
    contextRoot: config.contextRoot,
    resources,
    maxPageSize: (osName: string) => properties.maxPageSize(osName),
    idleExpiry: () => properties.getInteger('mxe.oslc.idleexiry') ?? DEFAULT_IDLE_EXPIRY_SECONDS,
    collectionCount: () => properties.getFlag('mxe.oslc.collectioncount') === true,
  };
}

const apiRootModules: readonly ApiRootModule[] = [
  {
    name: 'object structures (docs/compatibility.md)',
    register: (app, _context, api) => app.register(oslcRoutes, api),
  },
  {
    name: 'attachments (docs/compatibility.md, "Attachments")',
    register: (app, { config, services }, { root }) =>
      app.register(attachmentRoutes, {
        root,
        contextRoot: config.contextRoot,
        resources: services.resources,
        attachments: services.attachments,
      }),
  },
  {
    name: 'lookups (docs/lookups.md)',
    register: (app, { services }, api) => app.register(lookupRoutes, { ...api, lookups: services.lookups }),
  },
  {
    name: 'error messages',
    register: (app) => app.register(errorMessageRoutes),
  },
  {
    name: 'system properties (docs/properties.md)',
    register: (app, { services }) => app.register(propertyRoutes, { properties: services.properties }),
  },
  {
    name: 'API keys (docs/apikeys.md)',
    register: (app, { services }) => app.register(apiKeyRoutes, { apiKeys: services.apiKeys }),
  },
  {
    name: 'login, logout, whoami (docs/security.md)',
    register: (app, { login }, { root }) => app.register(authRoutes, { root, ...login }),
  },
  {
    name: 'system information',
    register: (app, { config, services }, { root }) =>
      app.register(systemRoutes, {
        root,
        contextRoot: config.contextRoot,
        metadata: services.metadata,
        system: services.system,
      }),
  },
  {
    name: 'migration packages (docs/migration.md)',
    register: (app, { services }) => app.register(migrationRoutes, { migration: services.migration }),
  },
  {
    name: 'admin mode (docs/adminmode.md)',
    register: (app, { services }) => app.register(adminModeRoutes, { adminMode: services.adminMode }),
  },
  {
    name: 'database configuration (docs/dbconfig.md)',
    register: (app, { services }) => app.register(dbconfigRoutes, { dbconfig: services.dbconfig }),
  },
  {
    name: 'audit trail verification (docs/audit.md)',
    register: (app, { services }) => app.register(auditRoutes, { audit: services.audit }),
  },
  {
    name: 'active sessions (docs/console.md)',
    register: (app, { administration }) =>
      app.register(activeSessionRoutes, { activeSessions: administration.activeSessions }),
  },
  {
    name: 'backup of the embedded database (docs/operations.md)',
    register: (app, { services }) => app.register(backupRoutes, { backup: services.backup }),
  },
  {
    name: 'server processes (docs/console.md)',
    register: (app, { administration }) => app.register(serverRoutes, { servers: administration.servers }),
  },
];

/** The modules of one API root (`/oslc` or `/api`), as one plugin registered under the root's prefix. */
async function apiRoot(
  app: FastifyInstance,
  options: { root: ApiRoot; context: ModuleContext },
): Promise<void> {
  const api = apiRootOptions(options.root, options.context);
  for (const module of apiRootModules) await module.register(app, options.context, api);
}

/** Every module of the app, in registration order (the OpenAPI document lists the routes in this order). */
export const appModules: readonly AppModule[] = [
  {
    name: 'the API under /oslc',
    register: (app, context) =>
      app.register(apiRoot, { prefix: `${context.config.contextRoot}/oslc`, root: 'oslc', context }),
  },
  {
    name: 'the API under /api',
    register: (app, context) =>
      app.register(apiRoot, { prefix: `${context.config.contextRoot}/api`, root: 'api', context }),
  },
  {
    // The FORM login answers at the context root as deployed servers do, and under /oslc; its page at the root only.
    name: 'FORM login and its page (docs/security.md)',
    async register(app, { config, login }) {
      await app.register(formLoginRoutes, { prefix: config.contextRoot, ...login });
      await app.register(formLoginRoutes, { prefix: `${config.contextRoot}/oslc`, ...login });
      await app.register(loginPageRoutes, {
        prefix: config.contextRoot,
        sessions: login.sessions,
        contextRoot: config.contextRoot,
      });
    },
  },
  {
    name: 'OpenID Connect login (docs/federated-login.md)',
    async register(app, { config, services, federatedSignIn, providers }) {
      if (!services.oidc) return;
      await app.register(oidcRoutes, {
        prefix: config.contextRoot,
        relyingParty: services.oidc,
        signIn: federatedSignIn,
      });
      providers.push({
        name: services.oidc.providerName,
        loginPath: OIDC_LOGIN_PATH,
        logoutPath: OIDC_LOGOUT_PATH,
      });
    },
  },
  {
    name: 'SAML login (docs/federated-login.md)',
    async register(app, { config, services, federatedSignIn, providers }) {
      if (!services.saml) return;
      await app.register(samlRoutes, {
        prefix: config.contextRoot,
        saml: services.saml,
        signIn: federatedSignIn,
      });
      providers.push({
        name: services.saml.providerName,
        loginPath: SAML_LOGIN_PATH,
        logoutPath: SAML_LOGOUT_PATH,
      });
    },
  },
  {
    name: 'the sign-in page of the federated modes (docs/federated-login.md)',
    async register(app, { config, services, providers }) {
      if (!isFederatedMode(config.auth.mode)) return;
      await app.register(signInPageRoutes, {
        prefix: config.contextRoot,
        contextRoot: config.contextRoot,
        providers,
        sessions: services.sessions,
        auth: services.auth,
        apiKeys: services.apiKeys,
      });
    },
  },
  {
    // A client of the API above, served from the files the build made.
    name: 'the console (docs/console.md)',
    register: (app, { config, services, providers }) =>
      app.register(consoleRoutes, {
        contextRoot: config.contextRoot,
        federated: isFederatedMode(config.auth.mode),
        providers,
        sessions: services.sessions,
        auth: services.auth,
      }),
  },
  {
    name: 'health checks (docs/operations.md)',
    register: (app, { config, services }) =>
      app.register(healthRoutes, { prefix: config.contextRoot, health: services.health }),
  },
  {
    name: 'the OpenAPI document and its UI (docs/operations.md)',
    register: (app, { config, services }) =>
      app.register(openApiRoutes, { contextRoot: config.contextRoot, metadata: services.metadata }),
  },
  {
    name: 'cross-origin preflight (docs/operations.md)',
    register: (app, { config, corsRules }) =>
      app.register(corsRoutes, { contextRoot: config.contextRoot, rules: corsRules }),
  },
  {
    // On a port of their own when EAS_METRICS_PORT says so (src/server.ts), else here for administrators.
    name: 'metrics (docs/operations.md)',
    async register(app, { config, services }) {
      if (config.metrics.port !== undefined) return;
      await app.register(metricsRoutes, { contextRoot: config.contextRoot, metrics: services.metrics });
    },
  },
];

/** The context of the modules: what the login routes, the console and the sign-in page share. */
export function moduleContext(
  config: AppConfig,
  storage: Storage,
  services: ServiceGraph,
  http: { cookies: CookiePolicy; corsRules: CorsRules },
): ModuleContext {
  const { sessions, logins } = services;
  const settings: AuthSettings = {
    mode: config.auth.mode,
    idleMinutes: config.auth.sessionIdleMinutes,
    maxMinutes: config.auth.sessionMaxMinutes,
    serverName: config.serverName,
    contextRoot: config.contextRoot,
  };
  return {
    config,
    storage,
    services,
    ...http,
    login: { settings, sessions, logins, cookies: http.cookies },
    administration: {
      activeSessions: new ActiveSessionService(
        storage.db,
        sessions,
        config.audit.enabled ? services.audit : NO_AUDIT,
      ),
      servers: new ServerProcessService(services.properties, config.serverName),
    },
    federatedSignIn: {
      contextRoot: config.contextRoot,
      sessions,
      cookies: http.cookies,
      logins,
      users: services.federatedUsers,
      db: storage.db,
      starts: new SignInStarts(config.federated.startsPerMinute),
    },
    providers: [],
  };
}
