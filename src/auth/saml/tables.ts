import type { ColumnType } from 'kysely';

/** Row types of the SAML tables (migrations 0014-saml-replay, 0030-federated-bounds). */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface SamlRequestTable {
  requestid: string;
  issued: Timestamp;
  expires: Timestamp;
  /** The client address that started the sign-in (0030-federated-bounds); null for requests stored before. */
  address: ColumnType<string | null, string | null | undefined, string | null>;
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
