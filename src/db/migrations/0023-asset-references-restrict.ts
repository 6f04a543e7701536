import type { Migration } from './migration.js';

/**
 * The foreign keys that refer to an asset refuse its deletion with RESTRICT rather than the default NO ACTION: both
 * refuse to delete an asset something still refers to, with the same error, in the same statement (neither is
 * deferrable here), but NO ACTION first looks, per deleted row and per key, for another asset that took the old key
 * values, which a set-wise deletion pays once per row for every table referring to asset (docs/migration.md,
 * "Back-out": a back-out deletes every asset its deploy added). The status history keeps its ON DELETE CASCADE.
 * Every statement applies again over a schema it has already changed (the constraint is dropped and added again).
 */
const REFERENCES: ReadonlyArray<{ table: string; columns: string }> = [
  { table: 'asset', columns: 'parent, siteid' },
  { table: 'workorder', columns: 'assetnum, siteid' },
  { table: 'assetspec', columns: 'assetnum, siteid' },
  { table: 'assetmeter', columns: 'assetnum, siteid' },
  { table: 'ticket', columns: 'assetnum, siteid' },
];

const constraintName = (table: string, columns: string) => `${table}_${columns.replace(', ', '_')}_fkey`;

export const assetReferencesRestrict: Migration = {
  name: '0023-asset-references-restrict',
  phase: 'contract',
  statements: REFERENCES.map(({ table, columns }) => {
    const name = constraintName(table, columns);
    return `alter table ${table} drop constraint if exists ${name},
      add constraint ${name} foreign key (${columns}) references asset(assetnum, siteid) on delete restrict`;
  }),
};
