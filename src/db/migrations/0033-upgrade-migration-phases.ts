import type { Migration } from './migration.js';

/**
 * The phase of every applied migration (src/db/README.md, "Phases"), written by the process that applies it: a
 * process of an earlier release finds here whether a migration it does not know only added to the schema (it can
 * serve it) or removed or rewrote something (it refuses to start, docs/deploy.md "Rolling upgrade").
 */
export const upgradeMigrationPhases: Migration = {
  name: '0033-upgrade-migration-phases',
  phase: 'expand',
  statements: [
    `create table if not exists easmigration (
       name varchar(100) primary key,
       phase varchar(8) not null check (phase in ('expand', 'contract', 'offline')))`,
  ],
};
