import type { ColumnType } from 'kysely';

/**
 * Row types of `federatedsession` (migration 0018-federated-sessions) and `logoutmessage` (0030-federated-bounds), apart from its repository so that the database
 * type (`db/schema.ts`) reads it without importing the session service.
 */
export interface FederatedSessionTable {
  sessionhash: string;
  scheme: string;
  /** SAML: the NameID; OIDC: the `sub` claim. */
  subject: string;
  /** SAML: the NameID's Format. */
  subjectformat: string | null;
  /** SAML: the SessionIndex; OIDC: the `sid` claim. */
  providersession: string | null;
}

/** A logout message already accepted (logout-replay.ts). */
export interface LogoutMessageTable {
  scheme: string;
  issuer: string;
  /** OIDC: the logout token's `jti`; SAML: the LogoutRequest's ID. */
  messageid: string;
  expires: ColumnType<Date, Date | string, Date | string>;
}

export interface FederatedSessionTables {
  federatedsession: FederatedSessionTable;
  logoutmessage: LogoutMessageTable;
}
