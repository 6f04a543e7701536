import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openTestStorage } from '../../../test/helpers/storage.js';
import type { Storage } from '../database.js';
import { assetReferencesRestrict } from './0023-asset-references-restrict.js';

/**
 * The foreign keys that refer to an asset refuse its deletion with RESTRICT (0023-asset-references-restrict.ts):
 * a referenced asset is still refused, a statement that deletes an asset with the assets below it still succeeds,
 * the status history still goes with its asset, and the migration applies again over a schema it has changed.
 */

describe('foreign keys referring to asset', () => {
  let storage: Storage;

  before(async () => {
    storage = await openTestStorage();
  });
  after(async () => {
    await storage?.close();
  });

  const deleteActions = async () => {
    const { rows } = await sql<{ name: string; action: string }>`select conrelid::regclass::text as name,
        confdeltype as action
      from pg_constraint where contype = 'f' and confrelid = 'asset'::regclass order by 1`.execute(
      storage.db,
    );
    return Object.fromEntries(rows.map((row) => [row.name.replace(/^.*\./, ''), row.action]));
  };

  test('RESTRICT for every table but the status history, which cascades; applied twice, the same', async () => {
    const expected = {
      asset: 'r',
      assetmeter: 'r',
      assetspec: 'r',
      assetstatus: 'c',
      ticket: 'r',
      workorder: 'r',
    };
    assert.deepEqual(await deleteActions(), expected);
    for (const statement of assetReferencesRestrict.statements) await sql.raw(statement).execute(storage.db);
    assert.deepEqual(await deleteActions(), expected);
  });

  test('a referenced asset is refused; an asset deleted with the asset below it and its status history is not', async () => {
    const db = storage.db;
    await sql`insert into asset (assetnum, siteid, orgid, status, statusdate)
      values ('FKTOP', 'BEDFORD', 'EAGLENA', 'OPERATING', now())`.execute(db);
    await sql`insert into asset (assetnum, siteid, orgid, status, statusdate, parent)
      values ('FKBELOW', 'BEDFORD', 'EAGLENA', 'OPERATING', now(), 'FKTOP')`.execute(db);
    await sql`insert into assetstatus (assetnum, siteid, orgid, status, changedate, changeby)
      values ('FKTOP', 'BEDFORD', 'EAGLENA', 'OPERATING', now(), 'MAXADMIN')`.execute(db);
    await assert.rejects(
      sql`delete from asset where assetnum = 'FKTOP'`.execute(db),
      // 23503 on PostgreSQL 15, 23001 (restrict_violation) on 17 (PGlite): the service takes both alike.
      (error: unknown) => ['23503', '23001'].includes(String((error as { code?: string }).code)),
    );
    await sql`delete from asset where assetnum in ('FKTOP', 'FKBELOW')`.execute(db);
    const { rows } = await sql`select 1 from assetstatus where assetnum = 'FKTOP'`.execute(db);
    assert.equal(rows.length, 0);
  });
});
