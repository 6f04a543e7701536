import type { Migration } from './migration.js';

/**
 * Which identity-provider session opened each federated session (docs/federated-login.md, "Single logout"): the
 * SAML NameID and SessionIndex, or the OIDC subject and `sid`. A logout the provider sends names those, not the
 * session cookie; a logout started here sends them to the provider. A row goes with its session (cascade).
 */
export const federatedSessions: Migration = {
  name: '0018-federated-sessions',
  phase: 'expand',
  statements: [
    `create table if not exists federatedsession (
       sessionhash char(64) primary key references maxsession(sessionhash) on delete cascade,
       scheme varchar(10) not null,
       subject varchar(512) not null,
       subjectformat varchar(256),
       providersession varchar(256))`,
    `create index if not exists federatedsession_subject on federatedsession(scheme, subject)`,
  ],
};
