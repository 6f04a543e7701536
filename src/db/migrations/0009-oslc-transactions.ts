import type { Migration } from './migration.js';

/**
 * Ids of requests sent with a `transactionid` header (docs/compatibility.md, "Writes"): a request whose id is here
 * already is refused, so a client that repeats a write after a lost answer does not write twice. Shared by every
 * process; rows older than the retention are deleted when new ones are added.
 */
export const oslcTransactions: Migration = {
  name: '0009-oslc-transactions',
  phase: 'expand',
  statements: [
    `create table if not exists oslc_transaction (
       transactionid varchar(256) primary key,
       resource varchar(512) not null,
       created timestamptz not null default now())`,
    `create index if not exists oslc_transaction_created on oslc_transaction(created)`,
  ],
};
