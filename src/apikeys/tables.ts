import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** The API key table (migration 0007-apikeys); `apikey` holds the sealed value, `apikeydigest` its HMAC. */
export interface ApiKeyTokenTable {
  apikeytokenid: Generated<number>;
  userid: string;
  apikey: string;
  apikeydigest: string | null;
  expiration: number;
  creationdate: Timestamp;
  clientcert: Generated<boolean>;
  exposedinurl: Generated<boolean>;
  exposeddate: Timestamp | null;
  rowstamp: Generated<number>;
}

export interface ApiKeyTables {
  apikeytoken: ApiKeyTokenTable;
}

/** Check values of master keys (migration 0008-hardening), one row per key name. */
export interface KeyCheckTable {
  keyname: string;
  checkvalue: string;
  changedate: Date;
}

export interface KeyCheckTables extends ApiKeyTables {
  easkeycheck: KeyCheckTable;
}
