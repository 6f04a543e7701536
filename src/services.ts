import type { FastifyBaseLogger } from 'fastify';
import { AdminModeService, DEFAULT_LOGOUTMIN, DEFAULT_NUMSESSIONS } from './adminmode/service.js';
import { APIKEY_OBJECT, ApiKeyService } from './apikeys/service.js';
import { doclinksWriter } from './attachments/body-members.js';
import { doclinksReader } from './attachments/inline.js';
import { ContentFolder } from './attachments/content-folder.js';
import { ATTACHMENT_OWNERS, AttachmentService, DEFAULT_MAX_FILE_MB } from './attachments/service.js';
import { FederatedUsers } from './auth/federated/service.js';
import { LdapDirectory } from './auth/ldap.js';
import { OidcRelyingParty } from './auth/oidc/service.js';
import { DEFAULT_ADDRESS_BLOCK, LoginService } from './auth/login.js';
import { userWriteRules } from './auth/password-rules.js';
import { rightsWriteRules } from './auth/rights-rules.js';
import { SamlService } from './auth/saml/service.js';
import { AuthService, SECURITY_OBJECTS } from './auth/service.js';
import { SessionService } from './auth/sessions.js';
import type { AppConfig } from './config.js';
import type { Storage } from './db/database.js';
import { DbConfigService } from './dbconfig/service.js';
import { DOMAIN_OBJECTS, DomainCache } from './domains/domain-cache.js';
import { LookupService } from './lookups/service.js';
import { loadMasterKey } from './apikeys/vault.js';
import { HealthService } from './health/service.js';
import { BackupService } from './backup/service.js';
import { CredentialSeal } from './migration/credentials.js';
import { DEFINITION_OBJECTS, MigrationService } from './migration/service.js';
import { MetadataRegistry } from './metadata/registry.js';
import { observeServices } from './metrics/service-metrics.js';
import { Metrics } from './metrics/service.js';
import { ResourceService } from './oslc/service.js';
import { PropertyService } from './properties/service.js';
import { SystemService } from './system/service.js';
import { worklogWriteRules } from './worklog/write-rules.js';
import { dynamicView, typedView } from './db/schema.js';
import { observedObjects, recordWriteEvent } from './audit/events.js';
import { AuditTrail, DEFAULT_RETENTION_DAYS, RETENTION_PROPERTY } from './audit/service.js';
import { NO_AUDIT, type AuditRecorder } from './audit/types.js';
import { AUDIT_OBJECTS } from './metadata/objects/easaudit.js';
import { READ_ONLY } from './audit/read-only.js';

/** The services of one server process, built once and shared by every module of both API roots. */
export interface ServiceGraph {
  metadata: MetadataRegistry;
  auth: AuthService;
  domains: DomainCache;
  resources: ResourceService;
  properties: PropertyService;
  sessions: SessionService;
  logins: LoginService;
  /** Maps identity-provider users to users (the `oidc` and `saml` modes). */
  federatedUsers: FederatedUsers;
  /** The OpenID Connect relying party, in the `oidc` mode only. */
  oidc: OidcRelyingParty | undefined;
  apiKeys: ApiKeyService;
  lookups: LookupService;
  system: SystemService;
  migration: MigrationService;
  /** Attachments of records (src/attachments). */
  attachments: AttachmentService;
  /** Liveness and readiness for load balancers (docs/operations.md, "Health checks"). */
  health: HealthService;
  /** Backups of the embedded database while it serves (docs/operations.md, "Backup and restore"). */
  backup: BackupService;
  adminMode: AdminModeService;
  dbconfig: DbConfigService;
  /** The SAML service provider, in `saml` mode only. */
  saml: SamlService | undefined;
  /** The process's metrics; a module registers its own here (src/metrics/service.ts). */
  metrics: Metrics;
  /** The audit trail (src/audit): recorded into by the services above, verified, swept and exported. */
  audit: AuditTrail;
  /** Stops what the services run in the background and writes what they hold back; the server calls it on close. */
  close(): Promise<void>;
}

/**
 * Builds the service graph: each service started (listening on the change bus, caches loaded) and the write path's
 * extension points registered (src/oslc/README.md, "Write path"), so a module takes part in writes of the objects
 * it owns without the resource service knowing it. The stages run in order, each on what the earlier ones built.
 */
export async function createServices(
  config: AppConfig,
  storage: Storage,
  log: FastifyBaseLogger,
): Promise<ServiceGraph> {
  const metrics = new Metrics();
  const audit = await startAudit(config, storage, log, metrics);
  const recorder = config.audit.enabled ? audit : NO_AUDIT;
  const core = await startCore(config, storage, log, recorder);
  const access = await startAccess(config, storage, log, core, recorder);
  const { dbconfig, apiKeys } = await startConfiguration(config, storage, log, core, access, recorder);
  // Sealed session cookies: every process derives the same key from the shared master key, so any of them opens a
  // cookie another issued (docs/security.md, "Session cookies").
  access.sessions.setCookieKey(apiKeys.derivedKey('session cookie'));
  audit.useKeyFingerprint((apikey) => apiKeys.keyFingerprint(apikey));
  audit.retentionFrom(() => core.properties.getInteger(RETENTION_PROPERTY) ?? DEFAULT_RETENTION_DAYS);
  observeServices(metrics, {
    storage,
    liveSessions: () => access.sessions.liveSessions(),
    caches: {
      sessions: access.sessions.cacheStatistics,
      apikeys: apiKeys.cacheStatistics,
      profiles: core.auth.cacheStatistics,
      plans: core.resources.planCacheStatistics,
    },
  });
  const migration = await startMigration(config, storage, core, access, dbconfig, recorder);
  const attachments = startAttachments(storage, log, core);
  observeAdministration(metrics, access.adminMode, migration);
  const { metadata, domains, resources, properties } = core;
  return {
    metrics,
    ...core,
    ...access,
    ...federatedServices(config, storage, log, apiKeys),
    apiKeys,
    health: new HealthService(storage),
    backup: new BackupService(storage),
    lookups: new LookupService(dynamicView(storage.db), metadata, domains, resources),
    system: new SystemService(storage, config.serverName),
    migration,
    attachments,
    dbconfig,
    audit,
    async close() {
      await audit.close();
      attachments.close();
      access.adminMode.close();
      await access.logins.flush();
      await properties.close();
    },
  };
}

type CoreServices = Pick<ServiceGraph, 'metadata' | 'domains' | 'auth' | 'resources' | 'properties'>;
type AccessServices = Pick<ServiceGraph, 'sessions' | 'logins' | 'adminMode'>;

/** The metadata, the caches the write path notifies, the resource service and the system properties. */
async function startCore(
  config: AppConfig,
  storage: Storage,
  log: FastifyBaseLogger,
  audit: AuditRecorder,
): Promise<CoreServices> {
  const metadata = new MetadataRegistry();
  const domains = new DomainCache(dynamicView(storage.db));
  const auth = new AuthService(storage.db);
  await domains.listen(storage.bus);
  await auth.listen(storage.bus);
  const resources = new ResourceService(storage, metadata, domains);
  await resources.listen();
  // What the caches listening on the `object` channel hold: only writes of these are notified.
  resources.announceWrites(DOMAIN_OBJECTS);
  resources.announceWrites(SECURITY_OBJECTS);
  resources.announceWrites([APIKEY_OBJECT]);
  resources.announceWrites(DEFINITION_OBJECTS);
  resources.addWriteRules('WORKLOG', worklogWriteRules);
  const properties = new PropertyService(storage, {
    serverName: config.serverName,
    metadata,
    domains,
    secretKey: config.secretKey,
    log,
    audit,
  });
  await properties.start();
  return { metadata, domains, auth, resources, properties };
}

/** Sessions, logins and admin mode, which decides who may log in. */
async function startAccess(
  config: AppConfig,
  storage: Storage,
  log: FastifyBaseLogger,
  { auth, properties }: CoreServices,
  audit: AuditRecorder,
): Promise<AccessServices> {
  const sessions = new SessionService({
    db: storage.db,
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
    audit,
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
    audit,
  });
  await adminMode.start();
  logins.setAdmission(adminMode);
  return { sessions, logins, adminMode };
}

/** Custom attributes and API keys, and the write rules of the objects that configure the service. */
async function startConfiguration(
  config: AppConfig,
  storage: Storage,
  log: FastifyBaseLogger,
  { metadata, resources, properties }: CoreServices,
  { logins, adminMode }: AccessServices,
  audit: AuditRecorder,
): Promise<Pick<ServiceGraph, 'dbconfig' | 'apiKeys'>> {
  // Custom attributes join the metadata before the first request, and follow every apply of any process.
  const dbconfig = new DbConfigService({ storage, metadata, guard: adminMode, log, audit });
  await dbconfig.start();
  resources.addWriteRules('MAXATTRIBUTECFG', dbconfig.writeRules);
  resources.addWriteObserver(logins.reactivationObserver, logins.reactivationWrites);
  resources.addWriteRules('MAXUSER', userWriteRules);
  resources.addWriteRules('MAXPROP', properties.writeRules);
  resources.addWriteRules('MAXPROPVALUE', properties.writeRules);
  resources.addWriteRules(
    'OSAUTH',
    rightsWriteRules((name) => metadata.findObjectStructure(name)),
  );
  const apiKeys = new ApiKeyService({
    storage,
    properties,
    masterKey: config.apiKeys.masterKey,
    dataDir: config.dataDir,
    audit,
  });
  await apiKeys.start();
  for (const object of AUDIT_OBJECTS) resources.addWriteRules(object, READ_ONLY);
  // Users, groups, rights, keys made for users and package definitions, written through object structures.
  const observed = new Set(observedObjects());
  resources.addWriteObserver(
    async (transaction, write) => {
      const event = recordWriteEvent(write);
      if (event) await audit.record(typedView(transaction), event);
    },
    (object) => audit !== NO_AUDIT && observed.has(object.name),
  );
  resources.addWriteRules('APIKEYTOKEN', apiKeys.writeRules);
  resources.addReadTransform('APIKEYTOKEN', 'apikey', apiKeys.readTransform);
  return { dbconfig, apiKeys };
}

/** Migration packages: definitions' and targets' rules, and CHANGE tracking inside every write (src/migration). */
async function startMigration(
  config: AppConfig,
  storage: Storage,
  { resources, properties }: CoreServices,
  { adminMode }: AccessServices,
  dbconfig: DbConfigService,
  audit: AuditRecorder,
): Promise<MigrationService> {
  const migration = new MigrationService(
    storage,
    resources,
    new CredentialSeal(await loadMasterKey(config.apiKeys.masterKey, config.dataDir)),
    dbconfig,
    adminMode,
    properties,
    audit,
  );
  await migration.start();
  resources.addWriteRules('DMPACKAGEDEF', migration.definitionRules);
  resources.addWriteRules('DMPKGDSTTRGT', migration.targetRules);
  resources.addWriteRules('DMPKGDEFCONTENT', migration.contentRules);
  resources.addReadTransform('DMPKGDSTTRGT', 'url', migration.targetUrlShown);
  resources.addWriteObserver(migration.changeObserver, migration.changeWrites);
  return migration;
}

/**
 * Attachments: `doclinks` in the write bodies of their owners (removed with them by the database, migration 0032),
 * and inline in their reads when `oslc.select` names them.
 */
function startAttachments(
  storage: Storage,
  log: FastifyBaseLogger,
  { resources, properties }: CoreServices,
): AttachmentService {
  const attachments = new AttachmentService(
    storage.db,
    { maxFileMb: () => properties.getInteger('mxe.doclink.maxfilesize') ?? DEFAULT_MAX_FILE_MB },
    storage.attachmentsDir === undefined ? undefined : new ContentFolder(storage.attachmentsDir),
  );
  attachments.startSweeping((error) => log.warn({ err: error }, 'attachment folder sweep failed'));
  for (const owner of ATTACHMENT_OWNERS) {
    resources.addBodyMember(owner, 'doclinks', doclinksWriter(attachments));
    resources.addInlineMember(owner, 'doclinks', doclinksReader(attachments));
  }
  return attachments;
}

/**
 * The audit trail (src/audit): its chain's key from the master key, its counters, and its log line when
 * EAS_AUDIT_LOG asks. Verified, swept and exported even when recording is off (EAS_AUDIT=0).
 */
async function startAudit(
  config: AppConfig,
  storage: Storage,
  log: FastifyBaseLogger,
  metrics: Metrics,
): Promise<AuditTrail> {
  const records = metrics.counter({
    name: 'eas_audit_records_total',
    help: 'Audit records sealed into the chain by this process, by event type and outcome.',
    labelNames: ['type', 'outcome'],
  });
  const failures = metrics.counter({
    name: 'eas_audit_verification_failures_total',
    help: 'Verifications of the audit chain that found a record altered, removed or inserted out of order.',
  });
  const audit = new AuditTrail({
    storage,
    masterKey: await loadMasterKey(config.apiKeys.masterKey, config.dataDir),
    serverName: config.serverName,
    log: config.audit.log ? log : undefined,
    onSealed: (row) => records.inc({ type: row.eventtype, outcome: row.outcome }),
    onVerificationFailure: () => failures.inc(),
    onBackgroundError: (error, what) => log.error({ err: error }, what),
  });
  audit.start();
  return audit;
}

/** The metrics of the deployment's administration: admin mode, package deploys. */
function observeAdministration(
  metrics: Metrics,
  adminMode: AdminModeService,
  migration: MigrationService,
): void {
  metrics.gauge({
    name: 'eas_admin_mode_state',
    help: 'Admin mode of the deployment as this process knows it: 0 off, 1 on, 2 pending.',
    collect() {
      this.set(adminMode.current().state);
    },
  });
  const deploys = metrics.counter({
    name: 'eas_package_deploys_total',
    help: 'Migration package deploys (deploy and completedeploy) that started writing, by result.',
    labelNames: ['result'],
  });
  migration.observeDeploys((result) => deploys.inc({ result }));
}

/** The services of the federated login modes: user mapping always, OpenID Connect and SAML when configured. */
function federatedServices(
  config: AppConfig,
  storage: Storage,
  log: FastifyBaseLogger,
  apiKeys: ApiKeyService,
): Pick<ServiceGraph, 'federatedUsers' | 'oidc' | 'saml'> {
  return {
    federatedUsers: new FederatedUsers({
      db: storage.db,
      bus: storage.bus,
      settings: config.federated,
      logWarning: (message, details) => log.warn(details, message),
    }),
    oidc:
      config.oidc &&
      new OidcRelyingParty({
        settings: config.oidc,
        // Every process derives the same key from the shared master key: any of them may receive the callback.
        stateKey: apiKeys.derivedKey('federated sign-in state'),
        logWarning: (error, message) => log.warn({ err: error }, message),
      }),
    saml:
      config.saml &&
      new SamlService({
        config: config.saml,
        db: storage.db,
        logRefusal: (detail) => log.info({ saml: detail }, 'SAML response refused'),
      }),
  };
}
