import type { Migration } from './migration.js';

/**
 * API keys (docs/apikeys.md): one row per user. `apikey` holds the key value sealed with AES-256-GCM (never the value
 * itself), and `apikeydigest` its HMAC-SHA256, by which a request's key is found without decrypting or scanning.
 *
 * Releases before this one stored the value in plain text in `apikey`, without the digest. Every statement here
 * also applies over that layout; the values are sealed when the service starts (src/apikeys/service.ts,
 * `sealPlainKeys`): a migration is SQL only, and sealing needs the master key, which never reaches the database.
 * A row whose digest is null is a plain-text row waiting for it.
 */
export const apiKeys: Migration = {
  name: '0007-apikeys',
  phase: 'offline',
  statements: [
    `create table if not exists apikeytoken (
       apikeytokenid bigint generated always as identity primary key,
       userid varchar(30) not null unique references maxuser(userid) on delete cascade,
       apikey text not null,
       expiration integer not null default -1,
       creationdate timestamptz not null default now(),
       clientcert boolean not null default false,
       rowstamp bigint not null)`,
    `alter table apikeytoken alter column apikey type text`,
    `alter table apikeytoken add column if not exists apikeydigest char(64)`,
    `alter table apikeytoken add column if not exists exposedinurl boolean not null default false`,
    `alter table apikeytoken add column if not exists exposeddate timestamptz`,
    `create unique index if not exists apikeytoken_digest on apikeytoken(apikeydigest)`,
    `drop trigger if exists apikeytoken_rowstamp on apikeytoken`,
    `create trigger apikeytoken_rowstamp before insert or update on apikeytoken for each row execute function set_rowstamp()`,
  ],
};
