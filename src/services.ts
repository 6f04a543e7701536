import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { AdminModeService, DEFAULT_LOGOUTMIN, DEFAULT_NUMSESSIONS } from './adminmode/service.js';
import { ApiKeyService } from './apikeys/service.js';
import { LdapDirectory } from './auth/ldap.js';
import { DEFAULT_ADDRESS_BLOCK, LoginService } from './auth/login.js';
import { userWriteRules } from './auth/password-rules.js';
import type { SessionDb } from './auth/session-repository.js';
import { AuthService } from './auth/service.js';
import { SessionService } from './auth/sessions.js';
import type { AppConfig } from './config.js';
import type { Storage } from './db/database.js';
import type { DynamicDatabase } from './db/schema.js';
import { DbConfigService } from './dbconfig/service.js';
import { DomainCache } from './domains/domain-cache.js';
import { LookupService } from './lookups/service.js';
import { loadMasterKey } from './apikeys/vault.js';
import { CredentialSeal } from './migration/credentials.js';
import { MigrationService } from './migration/service.js';
import { MetadataRegistry } from './metadata/registry.js';
import { ResourceService } from './oslc/service.js';
import { PropertyService } from './properties/service.js';
import { SystemService } from './system/service.js';

/** The services of one server process, built once and shared by every module of both API roots. */
export interface ServiceGraph {
  metadata: MetadataRegistry;
  auth: AuthService;
  domains: DomainCache;
  resources: ResourceService;
  properties: PropertyService;
  sessions: SessionService;
  logins: LoginService;
  apiKeys: ApiKeyService;
  lookups: LookupService;
  system: SystemService;
  migration: MigrationService;
  adminMode: AdminModeService;
  dbconfig: DbConfigService;
  /** Stops what the services run in the background and writes what they hold back; the server calls it on close. */
  close(): Promise<void>;
}

/**
 * Builds the service graph: each service started (listening on the change bus, caches loaded) and the write path's
 * extension points registered (src/oslc/README.md, "Write path"), so a module takes part in writes of the objects
 * it owns without the resource service knowing it.
 */
export async function createServices(
  config: AppConfig,
  storage: Storage,
  log: FastifyBaseLogger,
): Promise<ServiceGraph> {
  const db = storage.db as unknown as Kysely<DynamicDatabase>;
  const metadata = new MetadataRegistry();
  const domains = new DomainCache(db);
  const auth = new AuthService(storage.db);
  await domains.listen(storage.bus);
  await auth.listen(storage.bus);
  const resources = new ResourceService(storage, metadata, domains);
  const properties = new PropertyService(storage, {
    serverName: config.serverName,
    metadata,
    domains,
    secretKey: config.secretKey,
    log,
  });
  await properties.start();
  const sessions = new SessionService({
    db: storage.db as unknown as SessionDb,
    bus: storage.bus,
    idleMinutes: config.auth.sessionIdleMinutes,
    maxMinutes: config.auth.sessionMaxMinutes,
    maxPerUser: config.auth.sessionsPerUser,
    onBackgroundError: (error) => log.error({ err: error }, 'session bookkeeping failed'),
  });
  const logins = new LoginService({
    db: storage.db,
    bus: storage.bus,
    auth,
    mode: config.auth.mode,
    directory: config.auth.ldap && new LdapDirectory(config.auth.ldap),
    maxFailedLogins: config.auth.maxFailedLogins,
    lockoutMinutes: config.auth.lockoutMinutes,
    addressBlock: () => ({
      enabled: properties.getFlag('mxe.sec.IPblock') ?? DEFAULT_ADDRESS_BLOCK.enabled,
      failures: properties.getInteger('mxe.sec.IPblock.num') ?? DEFAULT_ADDRESS_BLOCK.failures,
      seconds: properties.getInteger('mxe.sec.IPblock.sec') ?? DEFAULT_ADDRESS_BLOCK.seconds,
    }),
    logError: (error, what) => log.error({ err: error }, what),
  });
  await sessions.listen();
  await logins.listen();
  const adminMode = new AdminModeService({
    db: storage.db,
    bus: storage.bus,
    sessions,
    defaults: () => ({
      numsessions: properties.getInteger('mxe.adminmode.numsessions') ?? DEFAULT_NUMSESSIONS,
      logoutmin: properties.getInteger('mxe.adminmode.logoutmin') ?? DEFAULT_LOGOUTMIN,
    }),
    serverName: config.serverName,
    onBackgroundError: (error) => log.error({ err: error }, 'admin mode bookkeeping failed'),
  });
  await adminMode.start();
  // Custom attributes join the metadata before the first request, and follow every apply of any process.
  const dbconfig = new DbConfigService({ storage, metadata, guard: adminMode, log });
  await dbconfig.start();
  resources.addWriteRules('MAXATTRIBUTECFG', dbconfig.writeRules);
  resources.addWriteObserver(logins.reactivationObserver);
  resources.addWriteRules('MAXUSER', userWriteRules);
  const apiKeys = new ApiKeyService({
    storage,
    properties,
    masterKey: config.apiKeys.masterKey,
    dataDir: config.dataDir,
  });
  await apiKeys.start();
  resources.addWriteRules('APIKEYTOKEN', apiKeys.writeRules);
  resources.addReadTransform('APIKEYTOKEN', 'apikey', apiKeys.readTransform);
  // Migration packages: definitions' and targets' rules, and CHANGE tracking inside every write (src/migration).
  const migration = new MigrationService(
    storage,
    resources,
    new CredentialSeal(await loadMasterKey(config.apiKeys.masterKey, config.dataDir)),
    dbconfig,
    adminMode,
  );
  await migration.start();
  resources.addWriteRules('DMPACKAGEDEF', migration.definitionRules);
  resources.addWriteRules('DMPKGDSTTRGT', migration.targetRules);
  resources.addWriteObserver(migration.changeObserver);
  return {
    metadata,
    auth,
    domains,
    resources,
    properties,
    sessions,
    logins,
    apiKeys,
    lookups: new LookupService(db, metadata, domains, resources),
    system: new SystemService(storage, config.serverName),
    migration,
    adminMode,
    dbconfig,
    async close() {
      adminMode.close();
      await logins.flush();
      await properties.close();
    },
  };
}
