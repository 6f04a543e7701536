import type { AuditRecorder, RequestOrigin } from '../audit/types.js';
import type { Storage } from '../db/database.js';
import type { DbConfigService, StructuralChangeGuard } from '../dbconfig/service.js';
import type { ResourceService } from '../oslc/service.js';
import type { PropertyService } from '../properties/service.js';
import type { CredentialSeal } from './credentials.js';
import type { Db } from './repository.js';

/**
 * What the steps of a package's journey work with, passed in rather than reached for: each step names the part it
 * needs (`Pick<MigrationContext, ...>`), so a test can hand it its own.
 */
export interface MigrationContext {
  storage: Storage;
  /** `storage.db`: the deployment's own database. */
  db: Db;
  resources: ResourceService;
  seal: CredentialSeal;
  dbconfig: DbConfigService;
  /** Admin mode: a deploy that changes the configuration needs it (target/admin-mode.ts). */
  guard: StructuralChangeGuard;
  properties: PropertyService;
  /**
   * The audit trail: each step records its event in the transaction it writes (docs/audit.md). Within a request,
   * bound to its origin (`recorderIn`).
   */
  audit: AuditRecorder;
  /** The request a step runs in (src/audit/README.md, "Request context"): the writes' and records' origin. */
  origin?: RequestOrigin;
  /** This deployment's identity as the source of packages (set once the service has started). */
  sourceIdentity: () => string;
}
