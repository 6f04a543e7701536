import type { Migration } from './migration.js';

/**
 * A record's attachments go with it (docs/compatibility.md, "Attachments"), removed by the database in the
 * statement that deletes the record: a batch delete of a deploy or a back-out then keeps its bounded number of
 * statements (docs/migration.md, "Scale"), where a delete per record would not. Every statement applies again over
 * a schema it has already changed.
 */
const OWNERS = [
  ['asset', 'ASSET', 'assetuid'],
  ['locations', 'LOCATIONS', 'locationsid'],
  ['workorder', 'WORKORDER', 'workorderid'],
  ['ticket', 'SR', 'ticketuid'],
] as const;

export const attachmentsOwnerDelete: Migration = {
  name: '0032-attachments-owner-delete',
  phase: 'expand',
  statements: [
    `create or replace function doclinks_owner_deleted() returns trigger language plpgsql as $$
     begin
       delete from doclinks where ownertable = tg_argv[0] and ownerid = (to_jsonb(old) ->> tg_argv[1])::bigint;
       return old;
     end $$`,
    ...OWNERS.flatMap(([table, owner, uniqueId]) => [
      `drop trigger if exists ${table}_doclinks on ${table}`,
      `create trigger ${table}_doclinks after delete on ${table} for each row
         execute function doclinks_owner_deleted('${owner}', '${uniqueId}')`,
    ]),
  ],
};
