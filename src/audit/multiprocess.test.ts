import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startServer, stopServersAndDropSchema, type ServerProcess } from '../../test/helpers/processes.js';
import { openStorage } from '../db/database.js';

/**
 * The audit chain with two real server processes (`src/server.ts`) writing events at once on one PostgreSQL schema:
 * key creations, property sets and failed logins on both; every event has its record, the chain verifies, and a record
 * edited by SQL is named. PGlite is one process by design, so without EAS_TEST_DATABASE_URL this file registers nothing.
 */
const url = process.env.EAS_TEST_DATABASE_URL;

const ADMIN_PASSWORD = 'audit-multiprocess-pw';
const MASTER_KEY = 'audit-multiprocess-master-key-0123456789';
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };
const ROUNDS = 15;

if (url) {
  describe('audit chain across two server processes', () => {
    const schema = `eas_test_audit_${process.pid}_${randomBytes(3).toString('hex')}`;
    let first: ServerProcess;
    let second: ServerProcess;

    before(async () => {
      const settings = {
        databaseUrl: url,
        schema,
        adminPassword: ADMIN_PASSWORD,
        env: { EAS_MASTER_KEY: MASTER_KEY },
      };
      first = await startServer({ name: 'AUDITA', ...settings });
      second = await startServer({ name: 'AUDITB', ...settings });
    });
    after(() => stopServersAndDropSchema([first, second], url, schema));

    const verify = async (base: string) => {
      const response = await fetch(`${base}/oslc/audit/verify`, { headers: admin });
      assert.equal(response.status, 200);
      return (await response.json()) as { ok: boolean; checked: number; problem?: { auditid: number } };
    };

    test('events written at once on both processes: one record each, and the chain verifies', async () => {
      const work: Array<Promise<void>> = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const server of [first, second]) {
          work.push(
            fetch(`${server.base}/oslc/apitoken/create`, {
              method: 'POST',
              headers: { ...admin, 'content-type': 'application/json' },
              body: '{"expiration": -1}',
            }).then((response) => assert.equal(response.status, 200)),
            fetch(`${server.base}/oslc/service/system?action=wsmethod:setProperty`, {
              method: 'POST',
              headers: { ...admin, 'content-type': 'application/json' },
              body: JSON.stringify({
                propName: 'mxe.oslc.maxpagesize',
                serverName: 'COMMON',
                propValue: String(100 + round * 2 + (server === first ? 0 : 1)),
              }),
            }).then((response) => assert.equal(response.status, 200)),
            fetch(`${server.base}/oslc/login`, {
              method: 'POST',
              headers: { maxauth: Buffer.from(`NOSUCHUSER${round}:wrong-password`).toString('base64') },
            }).then((response) => assert.equal(response.status, 401)),
          );
        }
      }
      await Promise.all(work);
      const report = await verify(first.base);
      assert.equal(report.ok, true, JSON.stringify(report));

      const storage = await openStorage({ kind: 'postgres', url, schema, poolSize: 1 });
      try {
        const counts = await sql<{ eventtype: string; servername: string; n: number }>`
          select eventtype, servername, count(*)::int as n from easaudit
          where eventtype in ('apikey.create', 'apikey.regenerate', 'property.set', 'login.failure')
          group by eventtype, servername`.execute(storage.db);
        const count = (type: string | string[], server: string) =>
          counts.rows
            .filter((row) => [type].flat().includes(row.eventtype) && row.servername === server)
            .reduce((sum, row) => sum + row.n, 0);
        for (const server of ['AUDITA', 'AUDITB']) {
          assert.equal(count(['apikey.create', 'apikey.regenerate'], server), ROUNDS, server);
          assert.equal(count('property.set', server), ROUNDS, server);
          assert.equal(count('login.failure', server), ROUNDS, server);
        }
        // Sealed by both processes in turn: one chain without gaps. Records of the login bookkeeping written after
        // the verification may still wait for their seal (a second after they are written): not counted.
        const chain = await sql<{ n: number; first: number; last: number }>`
          select count(chainseq)::int as n, min(chainseq)::int as first, max(chainseq)::int as last
          from easaudit`.execute(storage.db);
        const { n, first: start, last } = chain.rows[0]!;
        assert.equal(start, 1);
        assert.equal(last, n);

        const victim = await sql<{ auditid: number }>`
          select auditid from easaudit where eventtype = 'property.set' order by chainseq limit 1 offset 3`.execute(
          storage.db,
        );
        const auditid = Number(victim.rows[0]!.auditid);
        await sql`update easaudit set aftervalue = '{"value":"999"}' where auditid = ${auditid}`.execute(
          storage.db,
        );
        const broken = await verify(second.base);
        assert.equal(broken.ok, false);
        assert.equal(Number(broken.problem?.auditid), auditid);
      } finally {
        await storage.close();
      }
    });
  });
}
