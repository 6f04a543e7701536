import type { Migration } from './migration.js';

/**
 * SAML sign-in state every server process shares (docs/federated-login.md, "SAML"): the authentication requests this
 * service sent, which a response must answer, and the assertions already consumed, so that none is accepted twice
 * whichever process receives it. Rows carry their end of validity; expired ones are deleted as sign-ins go by.
 */
export const samlReplay: Migration = {
  name: '0014-saml-replay',
  phase: 'expand',
  statements: [
    `create table if not exists samlrequest (
       requestid varchar(128) primary key,
       issued timestamptz not null,
       expires timestamptz not null)`,
    `create index if not exists samlrequest_expires on samlrequest(expires)`,
    `create table if not exists samlassertion (
       assertionid varchar(256) primary key,
       userid varchar(30) not null,
       consumed timestamptz not null,
       expires timestamptz not null)`,
    `create index if not exists samlassertion_expires on samlassertion(expires)`,
  ],
};
