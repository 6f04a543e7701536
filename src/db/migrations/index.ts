import { sql, type Kysely, type Migration as KyselyMigration, type MigrationProvider } from 'kysely';
import { core } from './0001-core.js';
import { systemDomains } from './0002-system-domains.js';
import { stablePages } from './0003-stable-pages.js';
import { properties } from './0004-properties.js';
import { sessions } from './0005-sessions.js';
import { queryIndexes } from './0006-query-indexes.js';
import { apiKeys } from './0007-apikeys.js';
import { hardening } from './0008-hardening.js';
import { oslcTransactions } from './0009-oslc-transactions.js';
import { resourceModel } from './0010-resource-model.js';
import { adminMode } from './0011-adminmode.js';
import { dbconfig } from './0012-dbconfig.js';
import { migrationPackages } from './0013-migration-packages.js';
import { samlReplay } from './0014-saml-replay.js';
import { migrationDrift } from './0015-migration-drift.js';
import { sessionLean } from './0016-session-lean.js';
import { serviceRequests } from './0017-service-requests.js';
import { federatedSessions } from './0018-federated-sessions.js';
import { corsProperties } from './0019-cors-properties.js';
import { deploymentIdentity } from './0020-deployment-identity.js';
import { migrationBackout } from './0022-migration-backout.js';
import { assetReferencesRestrict } from './0023-asset-references-restrict.js';
import { sessionCookieClaims } from './0024-session-cookie-claims.js';
import { attachments } from './0025-attachments.js';
import { worklog } from './0026-worklog.js';
import { assetAssetId } from './0027-asset-assetid.js';
import { workorderFollowUp } from './0028-workorder-followup.js';
import { ticketOptionalSite } from './0029-ticket-optional-site.js';
import { federatedBounds } from './0030-federated-bounds.js';
import { auditTrail } from './0031-audit-trail.js';
import { attachmentsOwnerDelete } from './0032-attachments-owner-delete.js';
import { upgradeMigrationPhases } from './0033-upgrade-migration-phases.js';
import { upgradeTkstatusIndex } from './0034-upgrade-tkstatus-index.js';
import { migrationAttachments } from './0035-migration-attachments.js';
import { attachmentFiles } from './0036-attachment-files.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

/** Every migration, oldest first. A released migration is never edited; a change is a new entry. */
export const migrations: readonly Migration[] = [
  core,
  systemDomains,
  stablePages,
  properties,
  sessions,
  queryIndexes,
  apiKeys,
  hardening,
  oslcTransactions,
  resourceModel,
  adminMode,
  dbconfig,
  migrationPackages,
  samlReplay,
  migrationDrift,
  sessionLean,
  serviceRequests,
  federatedSessions,
  corsProperties,
  deploymentIdentity,
  migrationBackout,
  assetReferencesRestrict,
  sessionCookieClaims,
  attachments,
  worklog,
  assetAssetId,
  workorderFollowUp,
  ticketOptionalSite,
  federatedBounds,
  auditTrail,
  attachmentsOwnerDelete,
  upgradeMigrationPhases,
  upgradeTkstatusIndex,
  migrationAttachments,
  attachmentFiles,
];

/**
 * The migrations Kysely's migrator is given: `runnable` (the applied ones this build knows and those to apply now,
 * src/db/migration-plan.ts), and, as steps that do nothing, the applied ones of a newer release (`newer`): the
 * migrator refuses a schema with an applied migration it is not given.
 */
export function migrationProviderOf(
  runnable: readonly Migration[],
  newer: readonly string[],
): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, KyselyMigration>> {
      return Object.fromEntries([
        ...newer.map((name) => [name, { up: async () => undefined }] as const),
        ...runnable.map(
          (migration) =>
            [
              migration.name,
              {
                // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's Migration interface takes Kysely<any>
                async up(db: Kysely<any>): Promise<void> {
                  for (const statement of migration.statements) await sql.raw(statement).execute(db);
                },
              },
            ] as const,
        ),
      ]);
    },
  };
}
