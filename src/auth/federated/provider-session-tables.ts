/**
 * Row type of `federatedsession` (migration 0018-federated-sessions), apart from its repository so that the database
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

export interface FederatedSessionTables {
  federatedsession: FederatedSessionTable;
}
