import type { ColumnType, Generated } from 'kysely';

/** Row types of the system-property tables (migration 0004-properties). */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface MaxPropTable {
  maxpropid: Generated<number>;
  propname: string;
  description: string | null;
  maxtype: string;
  domainid: string | null;
  rangemin: number | null;
  rangemax: number | null;
  maximodefault: string | null;
  globalonly: boolean;
  instanceonly: boolean;
  liverefresh: boolean;
  onlinechanges: boolean;
  encrypted: boolean;
  masked: boolean;
  nullsallowed: boolean;
  userdefined: boolean;
  changeby: string | null;
  changedate: Timestamp | null;
  rowstamp: Generated<number>;
}

export interface MaxPropValueTable {
  maxpropvalueid: Generated<number>;
  propname: string;
  servername: string;
  propvalue: string | null;
  encryptedvalue: string | null;
  changeby: string | null;
  changedate: Timestamp | null;
  rowstamp: Generated<number>;
}

export interface MaxPropHistoryTable {
  maxprophistoryid: Generated<number>;
  propname: string;
  servername: string;
  oldvalue: string | null;
  newvalue: string | null;
  changeby: string;
  changedate: Timestamp;
}

export interface MaxPropAppliedTable {
  servername: string;
  propname: string;
  propvalue: string | null;
  appliedat: Timestamp;
}

export interface PropertyTables {
  maxprop: MaxPropTable;
  maxpropvalue: MaxPropValueTable;
  maxprophistory: MaxPropHistoryTable;
  maxpropapplied: MaxPropAppliedTable;
}
