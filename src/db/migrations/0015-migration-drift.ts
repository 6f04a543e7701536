import type { Migration } from './migration.js';

/**
 * The drift guard of CHANGE packages (docs/migration.md, "Drift guard"): each tracked write keeps the hash of its
 * record's root as it was before the write (`beforehash`, null when the record did not exist), and creating a package
 * leaves a row of the operation `package` in the history, the start of the next package's period.
 */
export const migrationDrift: Migration = {
  name: '0015-migration-drift',
  phase: 'expand',
  statements: [`alter table dmpkgchange add column if not exists beforehash varchar(64)`],
};
