import type { ColumnType } from 'kysely';

/** Row types of the SAML tables (migration 0014-saml-replay). */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface SamlRequestTable {
  requestid: string;
  issued: Timestamp;
  expires: Timestamp;
}

export interface SamlAssertionTable {
  assertionid: string;
  userid: string;
  consumed: Timestamp;
  expires: Timestamp;
}

export interface SamlTables {
  samlrequest: SamlRequestTable;
  samlassertion: SamlAssertionTable;
}
