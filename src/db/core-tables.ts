import type { ColumnType, Generated } from 'kysely';

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
