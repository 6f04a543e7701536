import type { Migration } from './migration.js';

/**
 * The identity of this deployment (docs/migration.md, "Source"): one row, at most, holding a random UUID
 * and a readable label. The row is not written here but by the first process that starts on the database
 * (src/system/deployment-identity.ts): a database made from a migrated template or copy must not inherit an
 * identity it was never given. The key admits one row only, so processes starting together agree on it.
 */
export const deploymentIdentity: Migration = {
  name: '0020-deployment-identity',
  phase: 'expand',
  statements: [
    `create table if not exists deploymentidentity (
       singleton boolean primary key default true check (singleton),
       deploymentid uuid not null,
       label varchar(150) not null,
       createdate timestamptz not null default current_timestamp)`,
  ],
};
