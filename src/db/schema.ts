import type { Kysely } from 'kysely';
import type { AdminModeTables } from '../adminmode/tables.js';
import type { ApiKeyTables, KeyCheckTables } from '../apikeys/tables.js';
import type { AttachmentTables } from '../attachments/tables.js';
import type { AuditTables } from '../audit/tables.js';
import type { FederatedSessionTables } from '../auth/federated/provider-session-tables.js';
import type { SamlTables } from '../auth/saml/tables.js';
import type { SessionTables } from '../auth/session-tables.js';
import type { DbConfigTables } from '../dbconfig/tables.js';
import type { MigrationTables } from '../migration/tables.js';
import type { StablePageTables } from '../oslc/query/tables.js';
import type { PropertyTables } from '../properties/tables.js';
import type { CoreTables } from './core-tables.js';

/**
 * Every table code reads by name: the core tables and each module's own. Each module declares the row types of the
 * tables its migration made in a leaf file (`<module>/tables.ts`, which imports nothing but Kysely's types), and this
 * file puts them together: it imports only those leaves, so no module that uses `Database` is imported back
 * (docs/architecture.md). One type for the whole database, because Kysely's `Kysely<DB>` is invariant in `DB`: a
 * handle typed with one module's tables could not be passed where another's is expected, nor a transaction shared
 * between modules.
 */
export interface Database
  extends
    CoreTables,
    SessionTables,
    AdminModeTables,
    DbConfigTables,
    ApiKeyTables,
    KeyCheckTables,
    PropertyTables,
    StablePageTables,
    SamlTables,
    FederatedSessionTables,
    MigrationTables,
    AttachmentTables,
    AuditTables {}

/** Any table by name, for the metadata-driven repository; column names come from the object metadata. */
export type DynamicDatabase = Record<string, Record<string, unknown>>;

/**
 * The one escape between the two views of the same connection or transaction: business objects are read and
 * written through the metadata (table and column names known only at run time, `DynamicDatabase`), everything
 * else through `Database`. A write's transaction is opened on the dynamic view and handed to the write path's
 * observers and rules, which read their own tables through the typed view (src/oslc/README.md, "Write path").
 */
export const dynamicView = (db: Kysely<Database>): Kysely<DynamicDatabase> =>
  db as unknown as Kysely<DynamicDatabase>;
export const typedView = (db: Kysely<DynamicDatabase>): Kysely<Database> => db as unknown as Kysely<Database>;
