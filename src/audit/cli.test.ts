import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { captureIo } from '../../test/helpers/cli-io.js';
import { startListeningServer, type ListeningServer } from '../../test/helpers/http-server.js';
import { ADMIN_PASSWORD } from '../../test/helpers/storage.js';
import { runCli } from '../cli/program.js';

/**
 * Events caused through the `eas` command line (docs/cli.md) in the audit trail (docs/audit.md): keys created,
 * made for a user, revoked and deleted, a property set, admin mode on and off. Each command leaves exactly one record
 * of its event, by the administrator whose credentials the command used; read back as a client would, through
 * MXAPIAUDIT (after `GET <root>/audit/verify`, which seals what is waiting).
 */
const admin = { maxauth: Buffer.from(`MAXADMIN:${ADMIN_PASSWORD}`).toString('base64') };

interface AuditEntry {
  auditid: number;
  eventtype: string;
  outcome: string;
  userid: string;
  authscheme: string;
  objectkey?: string;
  chainseq?: number;
}

describe('audit trail: events caused through the eas command line', () => {
  let server: ListeningServer;
  let env: { [name: string]: string };
  before(async () => {
    server = await startListeningServer('AUDITCLI');
    env = { EAS_URL: server.base, EAS_USER: 'MAXADMIN', EAS_PASSWORD: ADMIN_PASSWORD };
  });
  after(() => server?.close());

  async function get(path: string): Promise<{ [name: string]: unknown }> {
    const response = await fetch(`${server.base}/oslc${path}`, { headers: admin });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as { [name: string]: unknown };
  }

  /** The records after `since`, sealed, without the logins (the command's own, batched per client). */
  async function recordsAfter(since: number): Promise<AuditEntry[]> {
    const verified = await get('/audit/verify');
    assert.equal(verified.ok, true, JSON.stringify(verified));
    const where = encodeURIComponent(`auditid>${since}`);
    const page = await get(
      `/os/mxapiaudit?lean=1&oslc.select=*&oslc.orderBy=%2Bauditid&oslc.pageSize=100&oslc.where=${where}`,
    );
    const rows = page.member as AuditEntry[];
    return rows.filter((row) => !row.eventtype.startsWith('login.'));
  }

  async function lastId(): Promise<number> {
    const page = await get('/os/mxapiaudit?lean=1&oslc.select=auditid&oslc.orderBy=-auditid&oslc.pageSize=1');
    return Number((page.member as AuditEntry[])[0]?.auditid ?? 0);
  }

  /** Runs `eas args`; answers the one record it left, of `type`. */
  async function oneRecord(type: string, args: string[]): Promise<AuditEntry> {
    const since = await lastId();
    const captured = captureIo(env);
    const code = await runCli(args, captured.io);
    assert.equal(code, 0, `eas ${args.join(' ')}: ${captured.stderr()}`);
    const rows = await recordsAfter(since);
    assert.deepEqual(
      rows.map((row) => row.eventtype),
      [type],
      `eas ${args.join(' ')}: ${JSON.stringify(rows)}`,
    );
    const row = rows[0]!;
    assert.equal(row.userid, 'MAXADMIN');
    assert.equal(row.outcome, 'SUCCESS');
    assert.equal(row.authscheme, 'MAXAUTH', 'the credentials the command was given');
    assert.ok(row.chainseq !== undefined, 'sealed');
    return row;
  }

  test('API keys: created, made for a user, revoked, deleted; one record each', async () => {
    await oneRecord('apikey.create', ['apikey', 'create']);
    const made = await oneRecord('apikey.admin.insert', ['apikey', 'create', '--user', 'smith']);
    assert.equal(made.objectkey, 'SMITH');
    await oneRecord('apikey.revoke', ['apikey', 'revoke']);
    const deleted = await oneRecord('apikey.admin.delete', ['apikey', 'delete', 'smith']);
    assert.equal(deleted.objectkey, 'SMITH');
  });

  test('a property set, and admin mode on and off; one record each', async () => {
    const set = await oneRecord('property.set', ['prop', 'set', 'mxe.oslc.maxpagesize', '321']);
    assert.equal(set.objectkey, 'mxe.oslc.maxpagesize/COMMON');
    const cors = await oneRecord('cors.set', [
      'prop',
      'set',
      'mxe.oslc.aclalloworigin',
      'https://apps.example',
    ]);
    assert.equal(cors.objectkey, 'mxe.oslc.aclalloworigin/COMMON');
    await oneRecord('adminmode.on', ['adminmode', 'on', '--logoutmin', '0']);
    await oneRecord('adminmode.off', ['adminmode', 'off']);
  });
});
