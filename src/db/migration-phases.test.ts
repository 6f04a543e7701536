import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openTestStorage, TEST_DATABASE_URL } from '../../test/helpers/storage.js';
import { migrateToLatest, registryOf, SchemaRefusedError, type Storage } from './database.js';
import { registeredProcesses, SCHEMA_LEVEL } from './process-registry.js';

/**
 * Migration phases (src/db/README.md, "Phases") on a real schema: what a newer release left that this build can or
 * cannot serve, and, on PostgreSQL, a contract migration held back while a process of an earlier release is
 * registered. The rolling upgrade with real processes of two releases is src/db/rolling-upgrade.multiprocess.test.ts.
 */
const CONTRACT = '0034-upgrade-tkstatus-index';

describe('migration phases', () => {
  let storage: Storage;
  before(async () => {
    storage = await openTestStorage({ demo: false });
  });
  after(() => storage.close());

  /** Records `name` as applied by a newer release, with `phase` (none: not recorded); answers how to undo it. */
  async function newerMigration(name: string, phase: string | undefined): Promise<() => Promise<void>> {
    await sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
      storage.db,
    );
    if (phase !== undefined)
      await sql`insert into easmigration (name, phase) values (${name}, ${phase})`.execute(storage.db);
    return async () => {
      await sql`delete from kysely_migration where name = ${name}`.execute(storage.db);
      await sql`delete from easmigration where name = ${name}`.execute(storage.db);
    };
  }

  test('every applied migration has its phase recorded', async () => {
    const { rows } = await sql<{ name: string; phase: string }>`select name, phase from easmigration`.execute(
      storage.db,
    );
    const phases = new Map(rows.map((row) => [row.name, row.phase]));
    assert.equal(phases.get('0029-ticket-optional-site'), 'offline');
    assert.equal(phases.get('0032-attachments-owner-delete'), 'expand');
    assert.equal(phases.get(CONTRACT), 'contract');
  });

  test('a newer release that only expanded the schema is served', async () => {
    const undo = await newerMigration('0099-future-table', 'expand');
    try {
      assert.deepEqual(await migrateToLatest(storage), []);
    } finally {
      await undo();
    }
  });

  for (const phase of ['contract', 'offline', undefined]) {
    test(`a newer release's ${phase ?? 'unrecorded'} migration is refused, naming it`, async () => {
      const undo = await newerMigration('0099-future-change', phase);
      try {
        await assert.rejects(migrateToLatest(storage), (error: Error) => {
          assert.ok(error instanceof SchemaRefusedError);
          assert.match(
            error.message,
            new RegExp(`migration 0099-future-change \\(${phase ?? 'phase not recorded'}\\)`),
          );
          return true;
        });
      } finally {
        await undo();
      }
    });
  }

  if (TEST_DATABASE_URL) {
    test('a contract migration waits while a process of an earlier release is registered', async () => {
      const registry = registryOf(storage)!;
      const own = await registeredProcesses(storage.db, registry.applicationName);
      assert.deepEqual(own, [{ pid: registry.ownPid, level: SCHEMA_LEVEL }]);
      await sql`delete from kysely_migration where name = ${CONTRACT}`.execute(storage.db);
      // An earlier release's change-bus connection: the same name, no level.
      const earlier = new pg.Client({
        connectionString: TEST_DATABASE_URL,
        application_name: registry.applicationName,
      });
      await earlier.connect();
      try {
        assert.deepEqual(await migrateToLatest(storage), []);
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from kysely_migration
          where name = ${CONTRACT}`.execute(storage.db);
        assert.equal(rows[0]!.n, 0);
      } finally {
        await earlier.end();
      }
      // Its connection may linger in pg_stat_activity for a moment after it closed.
      for (
        let waited = 0;
        (await registeredProcesses(storage.db, registry.applicationName)).length > 1;
        waited++
      ) {
        assert.ok(waited < 50, 'the closed connection is still registered');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.deepEqual(await migrateToLatest(storage), [CONTRACT]);
    });
  }
});
