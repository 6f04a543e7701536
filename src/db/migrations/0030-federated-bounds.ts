import type { Migration } from './migration.js';

/**
 * Federated sign-in bounds (docs/federated-login.md). Logout messages an identity provider sent, each accepted once (docs/federated-login.md, "Replay of logout
 * messages"): OIDC back-channel logout tokens by issuer and `jti`, SAML LogoutRequests by issuer and ID. Every server
 * process shares the table, so a message replayed to another process ends nothing there either. A row is kept until
 * the message itself could no longer be accepted (its own expiry plus the clock skew); expired rows are deleted as
 * logouts go by. And the client address of each SAML authentication request, so that the requests one address
 * leaves unanswered stay bounded ("Bounds on sign-in starts"); requests stored before have none and expire as before.
 */
export const federatedBounds: Migration = {
  name: '0030-federated-bounds',
  phase: 'expand',
  statements: [
    `create table if not exists logoutmessage (
       scheme varchar(10) not null,
       issuer varchar(512) not null,
       messageid varchar(256) not null,
       expires timestamptz not null,
       primary key (scheme, issuer, messageid))`,
    `create index if not exists logoutmessage_expires on logoutmessage(expires)`,
    `alter table samlrequest add column if not exists address varchar(64)`,
    `create index if not exists samlrequest_address on samlrequest(address, issued)`,
  ],
};
