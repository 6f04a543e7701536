import type { ColumnType, Generated, Kysely } from 'kysely';
import type { AdminModeTables } from '../adminmode/repository.js';
import type { DbConfigTables } from '../dbconfig/repository.js';
import type { MigrationTables } from '../migration/repository.js';
import type { KeyCheckTables } from '../apikeys/key-check-repository.js';
import type { ApiKeyTables } from '../apikeys/repository.js';
import type { SessionTables } from '../auth/session-repository.js';
import type { SamlTables } from '../auth/saml/repository.js';
import type { FederatedSessionTables } from '../auth/federated/provider-session-tables.js';
import type { StablePageTables } from '../oslc/query/index.js';
import type { PropertyTables } from '../properties/repository.js';

/**
 * Row types of the tables that code reads by name (users, groups, rights). Business objects served through object
 * structures are read through the metadata instead (see `DynamicDatabase`).
 */
type Stamp = Generated<number>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface MaxUserTable {
  maxuserid: Generated<number>;
  userid: string;
  loginid: string | null;
  personid: string;
  status: string;
  password: string | null;
  failedlogins: Generated<number>;
  /** End of a temporary block after failed logins (docs/security.md); null or past: not blocked. */
  blockeduntil: Generated<Date | null>;
  defsite: string | null;
  sysuser: boolean;
  changedate: Timestamp | null;
  changeby: string | null;
  rowstamp: Stamp;
}

export interface PersonTable {
  personuid: Generated<number>;
  personid: string;
  displayname: string | null;
  firstname: string | null;
  lastname: string | null;
  status: string;
  primaryemail: string | null;
  locationsite: string | null;
  changedate: Timestamp | null;
  changeby: string | null;
  rowstamp: Stamp;
}

export interface MaxGroupTable {
  maxgroupid: Generated<number>;
  groupname: string;
  description: string | null;
  adminmodelogin: boolean;
  authallsites: boolean;
  changedate: Timestamp | null;
  changeby: string | null;
  rowstamp: Stamp;
}

export interface GroupUserTable {
  groupuserid: Generated<number>;
  groupname: string;
  userid: string;
  rowstamp: Stamp;
}

/** Rights of a security group on one object structure. */
export interface OsAuthTable {
  osauthid: Generated<number>;
  groupname: string;
  objectstructure: string;
  canread: boolean;
  caninsert: boolean;
  canupdate: boolean;
  candelete: boolean;
  rowstamp: Stamp;
}

export interface SiteTable {
  siteuid: Generated<number>;
  siteid: string;
  orgid: string;
  description: string | null;
  active: boolean;
  rowstamp: Stamp;
}

/** Tables of the core migration that code reads by name. */
export interface CoreTables {
  maxuser: MaxUserTable;
  person: PersonTable;
  maxgroup: MaxGroupTable;
  groupuser: GroupUserTable;
  osauth: OsAuthTable;
  site: SiteTable;
}

/**
 * Every table code reads by name: the core tables and each module's own (each module declares the row types of
 * the tables its migration made, beside its repository). One type for the whole database, because Kysely's
 * `Kysely<DB>` is invariant in `DB`: a handle typed with one module's tables could not be passed where another's
 * is expected, nor a transaction shared between modules.
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
    MigrationTables {}

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
