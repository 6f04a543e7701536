import type { ColumnType, Generated } from 'kysely';

/** Row types of the database configuration tables (migration 0012-dbconfig). */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface MaxAttributeTable {
  maxattributeid: Generated<number>;
  objectname: string;
  attributename: string;
  maxtype: string;
  length: number | null;
  scale: number | null;
  required: boolean;
  defaultvalue: string | null;
  domainid: string | null;
  title: string;
  changeby: string | null;
  changedate: Timestamp | null;
  rowstamp: Generated<number>;
}

export interface MaxAttributeCfgTable {
  maxattributecfgid: Generated<number>;
  objectname: string;
  attributename: string;
  changetype: string;
  maxtype: string | null;
  length: number | null;
  scale: number | null;
  required: boolean | null;
  defaultvalue: string | null;
  domainid: string | null;
  title: string | null;
  changeby: string | null;
  changedate: Timestamp | null;
  rowstamp: Generated<number>;
}

export interface DbConfigTables {
  maxattribute: MaxAttributeTable;
  maxattributecfg: MaxAttributeCfgTable;
  maxdomain: { domainid: string };
}
