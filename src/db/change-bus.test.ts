import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { pgliteTemplate, TEST_DATABASE_URL } from '../../test/helpers/storage.js';
import { Confirmations, PGliteChangeBus, PostgresChangeBus, type ChangeBus } from './change-bus.js';
import { pgliteParsers } from './database.js';
import { PGliteDialect } from './pglite-dialect.js';

/** Long enough that a confirmation resolved by its timeout shows as the test's own timeout. */
const NEVER_MS = 3_600_000;
const TEST_TIMEOUT = { timeout: 20_000 };

/** Notifies `payload` on `session`, then confirms, in one transaction; resolves once the confirmation is heard. */
async function notifyConfirmed(db: Kysely<object>, bus: ChangeBus, payload: string): Promise<void> {
  const confirmation = await db.transaction().execute(async (transaction) => {
    await bus.notify(transaction, 'session', payload);
    return bus.confirm(transaction);
  });
  await confirmation.heard;
}

describe('confirmations', () => {
  test('resolve once as many distinct processes as expected have heard the token', async () => {
    const confirmations = new Confirmations(NEVER_MS);
    const token = confirmations.newToken();
    assert.ok(confirmations.isOwn(token));
    assert.equal(new Confirmations().isOwn(token), false);
    let heard = false;
    const confirmation = confirmations.expect(token, 2);
    void confirmation.heard.then(() => (heard = true));
    confirmations.heard(token, 'process-a');
    confirmations.heard(token, 'process-a');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(heard, false, 'one process heard twice is one');
    confirmations.heard(token, 'process-b');
    await confirmation.heard;
    assert.equal(heard, true);
  });

  test('resolve at once when no process listens, on cancel, and after the bounded wait', async () => {
    const confirmations = new Confirmations(20);
    await confirmations.expect(confirmations.newToken(), 0).heard;
    const cancelled = new Confirmations(NEVER_MS).expect('token', 1);
    cancelled.cancel();
    await cancelled.heard;
    const started = Date.now();
    // The wait's timer does not hold a process open (a server's sockets do): this test's timer does.
    const alive = setInterval(() => undefined, 1000);
    await confirmations.expect(confirmations.newToken(), 1).heard;
    clearInterval(alive);
    assert.ok(Date.now() - started >= 15, 'waited for the process that never answered');
  });
});

describe('confirmations on PGlite', () => {
  let pglite: PGlite;
  before(async () => {
    // Created and ready here: on a loaded machine loading the data directory alone can outlast the test's timeout,
    // which is meant for a confirmation that is never heard.
    pglite = await PGlite.create({ loadDataDir: await pgliteTemplate(), parsers: pgliteParsers });
  });
  after(() => pglite.close());

  test(
    'two buses on one database: the confirmation is heard after both ran their handlers',
    TEST_TIMEOUT,
    async () => {
      const db = new Kysely<object>({ dialect: new PGliteDialect(pglite) });
      const writer = new PGliteChangeBus(pglite, 'confirm_test', NEVER_MS);
      const other = new PGliteChangeBus(pglite, 'confirm_test', NEVER_MS);
      await writer.start();
      await other.start();
      const heardByOther: string[] = [];
      await other.listen('session', (payload) => heardByOther.push(payload));
      await notifyConfirmed(db, writer, 'ended-1');
      assert.deepEqual(heardByOther, ['ended-1']);
      await writer.close();
      await other.close();
    },
  );
});

if (TEST_DATABASE_URL) {
  const url = TEST_DATABASE_URL;
  describe('confirmations on PostgreSQL', () => {
    const prefix = `eas_confirm_${process.pid}_${randomBytes(3).toString('hex')}`;
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const db = new Kysely<object>({ dialect: new PostgresDialect({ pool }) });
    const connect = async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    };
    /** A process that hears every notification `delayMs` late (busy, or far away), in order. */
    const connectLate = (delayMs: number) => async () => {
      const client = await connect();
      const emit = client.emit.bind(client);
      client.emit = (event: string | symbol, ...args: unknown[]): boolean => {
        if (event !== 'notification') return emit(event, ...args);
        setTimeout(() => emit(event, ...args), delayMs);
        return true;
      };
      return client;
    };

    after(() => db.destroy());

    test(
      'the writer hears the confirmation only after a late process ran its handlers',
      TEST_TIMEOUT,
      async () => {
        const writer = new PostgresChangeBus(connect, prefix, NEVER_MS);
        const late = new PostgresChangeBus(connectLate(300), prefix, NEVER_MS);
        await writer.start();
        await late.start();
        try {
          const heardLate: string[] = [];
          await late.listen('session', (payload) => heardLate.push(payload));
          await notifyConfirmed(db, writer, 'ended-1');
          assert.deepEqual(heardLate, ['ended-1'], 'the late process dropped it before the writer went on');
        } finally {
          await writer.close();
          await late.close();
        }
      },
    );

    test('a process whose listening connection closed is not waited for', TEST_TIMEOUT, async () => {
      const writer = new PostgresChangeBus(connect, prefix, NEVER_MS);
      const gone = new PostgresChangeBus(connect, prefix, NEVER_MS);
      await writer.start();
      await gone.start();
      await gone.close();
      try {
        // The closed connection may linger in pg_stat_activity for a moment: the bounded wait would end the test.
        for (let attempt = 0; attempt < 50; attempt += 1) {
          const { rows } = await pool.query<{ n: number }>(
            'select count(*)::int as n from pg_stat_activity where application_name = $1',
            [writer.applicationName],
          );
          if (rows[0]!.n === 1) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await notifyConfirmed(db, writer, 'ended-2');
      } finally {
        await writer.close();
      }
    });
  });
}
