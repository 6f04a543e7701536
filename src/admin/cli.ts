import { parseArgs } from 'node:util';
import { newMasterKey, resealKeys } from '../apikeys/master-key.js';
import { loadMasterKey } from '../apikeys/vault.js';
import { AdminModeService, DEFAULT_LOGOUTMIN, DEFAULT_NUMSESSIONS } from '../adminmode/service.js';
import { generatePassword, hashPassword } from '../auth/password.js';
import { SessionService } from '../auth/sessions.js';
import { setUserPassword, unblockUser, userExists } from '../auth/session-repository.js';
import { loadConfig, type AppConfig } from '../config.js';
import { DataDirectoryLockedError } from '../db/data-dir-lock.js';
import { migrateToLatest, openStorage, type Storage } from '../db/database.js';
import type { Kysely } from 'kysely';
import { processIo } from '../cli/io.js';
import { runRestore } from './restore-command.js';
import { runUpgradeCheck } from './upgrade-command.js';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { sessionsEndedEvent } from '../audit/events.js';
import { AuditTrail, DEFAULT_RETENTION_DAYS } from '../audit/service.js';
import type { AuditEvent, AuditRecorder } from '../audit/types.js';
import type { Database } from '../db/schema.js';

/**
 * Administration from the server's shell, for what cannot wait for an administrator's login (docs/security.md):
 * `npm run admin -- <command>`. Same environment as the server (DATABASE_URL, EAS_DATA_DIR, EAS_MASTER_KEY, ...).
 * On PGlite the server must be stopped first (one process per data directory: the command says so when it finds
 * the directory held); on PostgreSQL running servers learn of the change through the change bus at once.
 */
const USAGE = `Usage: npm run admin -- <command>

Commands:
  unlock <userid>           End the user's block after failed logins (temporary or permanent).
  reset-password <userid>   Give the user a new password (EAS_NEW_PASSWORD, else generated and printed) and unlock it.
  adminmode off             Turn admin mode off at once: logins are open again, on every server process.
  sessions end <userid>     End every session of the user, on every server process.
  reseal-keys               Re-seal every stored API key under the master key in EAS_NEW_MASTER_KEY (rotation).
  restore <archive>         Restore an archive of \`eas backup\` into an empty data directory (restore --help).
  audit verify              Check the audit trail's chain; exits 1 naming the first record altered, removed or
                            inserted out of order.
  audit export --since <date> [--out <file>]
                            Write the audit records of <date> and later as JSON lines (stdout, or the file).
  audit sweep               Remove the audit records older than eas.audit.retentiondays (default 400) now.
  upgrade check             Whether this release can replace the running one a process at a time (rolling
                            upgrade); exits 4 with the reason when it cannot. Changes nothing.
  help, --help, -h          This text.

Same environment as the server (DATABASE_URL, EAS_DB_SCHEMA, EAS_DATA_DIR, EAS_MASTER_KEY). On PostgreSQL the
servers may keep running: every change goes through the database and the change bus, as the API's do. On PGlite a
running server holds the data directory: stop it first, or make the change through its API (admin mode:
npx eas adminmode off; a blocked user: an administrator sets its status back to ACTIVE).
`;

/** Who the shell's changes are recorded as (admin mode's log, docs/adminmode.md). */
const SHELL_USER = 'ADMIN-CLI';

export interface AdminIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/** Runs one command on open storage; returns the exit code. */
export async function runAdmin(
  argv: readonly string[],
  storage: Storage,
  config: AppConfig,
  io: AdminIo,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        since: { type: 'string' },
        out: { type: 'string' },
      },
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    io.out(USAGE);
    return 0;
  }
  const [command, ...rest] = parsed.positionals;
  const userid = rest[0]?.toUpperCase();
  const needsUser = command === 'unlock' || command === 'reset-password';
  if (needsUser && (rest.length !== 1 || !userid)) {
    io.err(`${command} takes one user id.\n\n${USAGE}`);
    return 2;
  }
  const audit = await shellAuditTrail(storage, config);
  try {
    return await runCommand(command, rest, parsed.values, storage, config, io, audit);
  } finally {
    await audit.close();
  }
}

async function runCommand(
  command: string | undefined,
  rest: readonly string[],
  values: { since?: string | undefined; out?: string | undefined },
  storage: Storage,
  config: AppConfig,
  io: AdminIo,
  audit: AuditTrail,
): Promise<number> {
  const userid = rest[0]?.toUpperCase();
  const recorder = shellRecorder(audit);
  switch (command) {
    case 'unlock':
      return unlock(storage, userid!, io, recorder);
    case 'reset-password':
      return resetPassword(storage, userid!, io, recorder);
    case 'audit':
      return auditCommand(rest, values, audit, io);
    case 'adminmode':
      if (rest.length !== 1 || rest[0] !== 'off') {
        io.err(`adminmode takes one argument: off.\n\n${USAGE}`);
        return 2;
      }
      return adminModeOff(storage, config, io, recorder);
    case 'sessions':
      if (rest.length !== 2 || rest[0] !== 'end' || !rest[1]) {
        io.err(`sessions takes: end <userid>.\n\n${USAGE}`);
        return 2;
      }
      return endSessions(storage, config, rest[1].toUpperCase(), io, recorder);
    case 'reseal-keys':
      if (rest.length !== 0) {
        io.err(`reseal-keys takes no arguments.\n\n${USAGE}`);
        return 2;
      }
      return resealCommand(storage, config, io, audit);
    case undefined:
    case 'help':
      io.out(USAGE);
      return command === undefined ? 2 : 0;
    default:
      io.err(`Unknown command ${command}.\n\n${USAGE}`);
      return 2;
  }
}

/** `reseal-keys`: the API keys and the audit trail under the new master key, in one transaction (docs/security.md). */
async function resealCommand(
  storage: Storage,
  config: AppConfig,
  io: AdminIo,
  audit: AuditTrail,
): Promise<number> {
  const where = { configured: config.apiKeys.masterKey !== undefined, dataDir: config.dataDir };
  const current = await loadMasterKey(config.apiKeys.masterKey, config.dataDir);
  const next = newMasterKey(io.env);
  let records = 0;
  const count = await resealKeys(storage, current, next, where, async (transaction, keys) => {
    records = await audit.rekey(transaction, next, {
      type: 'masterkey.rotate',
      user: SHELL_USER,
      scheme: 'SHELL',
      object: 'EASKEYCHECK',
      key: 'EAS_MASTER_KEY',
      detail: { keys },
    });
  });
  io.out(
    `Re-sealed ${count} API key(s) and re-keyed ${records} audit record(s) under the new master key. Start ` +
      `every server with EAS_MASTER_KEY set to the value of EAS_NEW_MASTER_KEY; a process with the old key now ` +
      `refuses to start.\n`,
  );
  return 0;
}

/** Changes the user and tells every running process to drop what it holds of users (the write path's channel). */
async function changeUser<T>(storage: Storage, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const db = storage.db;
  return db.transaction().execute(async (transaction) => {
    const result = await work(transaction);
    await storage.bus.notify<Database>(transaction, 'object', 'MAXUSER');
    return result;
  });
}

async function unlock(storage: Storage, userid: string, io: AdminIo, audit: AuditRecorder): Promise<number> {
  const user = await changeUser(storage, async (db) => {
    const unblocked = await unblockUser(db, userid);
    if (unblocked) await audit.record(db, { type: 'login.unlock', object: 'MAXUSER', key: userid });
    return unblocked;
  });
  if (!user) {
    io.err(`No user ${userid}.\n`);
    return 1;
  }
  io.out(`${user.userid} is unblocked (status ${user.status}); it can log in again.\n`);
  return 0;
}

/** The session service as the server builds it, for the shell's changes to sessions (nothing started). */
function sessionServiceOf(storage: Storage, config: AppConfig): SessionService {
  return new SessionService({
    db: storage.db,
    bus: storage.bus,
    idleMinutes: config.auth.sessionIdleMinutes,
    maxMinutes: config.auth.sessionMaxMinutes,
    maxPerUser: config.auth.sessionsPerUser,
    onBackgroundError: () => undefined,
  });
}

/** Admin mode off through the service the API uses: the row, its log entry and the change bus in one transaction. */
async function adminModeOff(
  storage: Storage,
  config: AppConfig,
  io: AdminIo,
  audit: AuditRecorder,
): Promise<number> {
  const adminMode = new AdminModeService({
    db: storage.db,
    bus: storage.bus,
    sessions: sessionServiceOf(storage, config),
    defaults: () => ({ numsessions: DEFAULT_NUMSESSIONS, logoutmin: DEFAULT_LOGOUTMIN }),
    serverName: config.serverName,
    onBackgroundError: () => undefined,
    audit,
  });
  try {
    await adminMode.turnOff(SHELL_USER);
  } finally {
    adminMode.close();
  }
  io.out('Admin mode is off: every user may log in again.\n');
  return 0;
}

async function endSessions(
  storage: Storage,
  config: AppConfig,
  userid: string,
  io: AdminIo,
  audit: AuditRecorder,
): Promise<number> {
  if (!(await userExists(storage.db, userid))) {
    io.err(`No user ${userid}.\n`);
    return 1;
  }
  const count = await sessionServiceOf(storage, config).endAllOf(userid, (transaction, ended) =>
    audit.record(transaction, sessionsEndedEvent('administrator', ended, userid)),
  );
  io.out(`Ended ${count} session(s) of ${userid}; its cookies are refused by every server process.\n`);
  return 0;
}

async function resetPassword(
  storage: Storage,
  userid: string,
  io: AdminIo,
  audit: AuditRecorder,
): Promise<number> {
  const chosen = io.env.EAS_NEW_PASSWORD;
  if (chosen !== undefined && chosen.length < 8) {
    io.err('EAS_NEW_PASSWORD must have 8 characters or more.\n');
    return 2;
  }
  const password = chosen ?? generatePassword();
  const hash = await hashPassword(password);
  const user = await changeUser(storage, async (db) => {
    const found = await setUserPassword(db, userid, hash);
    const unblocked = found && (await unblockUser(db, userid));
    if (unblocked) await audit.record(db, { type: 'user.password.reset', object: 'MAXUSER', key: userid });
    return unblocked;
  });
  if (!user) {
    io.err(`No user ${userid}.\n`);
    return 1;
  }
  io.out(
    chosen === undefined
      ? `${user.userid} has a new password: ${password}\n`
      : `${user.userid} has the password from EAS_NEW_PASSWORD.\n`,
  );
  return 0;
}

/** The trail as the server keeps it (same master key, same chain), for the shell's records and commands. */
async function shellAuditTrail(storage: Storage, config: AppConfig): Promise<AuditTrail> {
  return new AuditTrail({
    storage,
    masterKey: await loadMasterKey(config.apiKeys.masterKey, config.dataDir),
    serverName: config.serverName,
    retentionDays: () => DEFAULT_RETENTION_DAYS,
  });
}

/** The shell's changes are recorded as made by ADMIN-CLI, authenticated by the shell (docs/audit.md). */
function shellRecorder(audit: AuditTrail): AuditRecorder {
  const shell = (event: AuditEvent): AuditEvent => ({ user: SHELL_USER, scheme: 'SHELL', ...event });
  return {
    record: (db, event) => audit.record(db, shell(event)),
    recordAlone: (event) => audit.recordAlone(shell(event)),
    recordOf: (event) => audit.recordOf(shell(event)),
  };
}

/** `audit verify | export | sweep` (docs/audit.md). */
async function auditCommand(
  rest: readonly string[],
  values: { since?: string | undefined; out?: string | undefined },
  audit: AuditTrail,
  io: AdminIo,
): Promise<number> {
  const [action] = rest;
  if (action === 'verify' && rest.length === 1) {
    const report = await audit.verify();
    if (!report.ok) {
      io.err(`The audit trail does not verify: ${report.problem?.reason ?? 'unknown problem'}.\n`);
      return 1;
    }
    const head = report.head ? `, head position ${report.head.chainseq} digest ${report.head.digest}` : '';
    io.out(
      `The audit trail verifies: ${report.checked} record(s) from position ${report.firstSeq}${head}` +
        `${report.unsealed > 0 ? `; ${report.unsealed} record(s) written a moment ago not sealed yet` : ''}.\n`,
    );
    return 0;
  }
  if (action === 'export' && rest.length === 1) {
    const since = values.since === undefined ? new Date(NaN) : new Date(values.since);
    if (Number.isNaN(since.getTime())) {
      io.err(
        `audit export takes --since <date> (ISO 8601, for example 2026-01-31 or 2026-01-31T08:00:00Z).\n`,
      );
      return 2;
    }
    const out = values.out === undefined ? undefined : createWriteStream(values.out, { flags: 'w' });
    let count = 0;
    for await (const record of audit.export(since)) {
      const line = `${JSON.stringify(record)}\n`;
      if (out) {
        if (!out.write(line)) await once(out, 'drain');
      } else io.out(line);
      count += 1;
    }
    if (out) {
      out.end();
      await finished(out);
      io.err(`Wrote ${count} audit record(s) to ${values.out}.\n`);
    }
    return 0;
  }
  if (action === 'sweep' && rest.length === 1) {
    const removed = await audit.sweep();
    io.out(`Removed ${removed} audit record(s) older than the retention period.\n`);
    return 0;
  }
  io.err(`audit takes: verify, export --since <date> [--out <file>], or sweep.\n\n${USAGE}`);
  return 2;
}

/** The command line of `npm run admin` (`main.ts`): runs one command and leaves with its exit code. */
export async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const io: AdminIo = {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: process.env,
  };
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0]!)) {
    io.out(USAGE);
    process.exit(argv.length === 0 ? 2 : 0);
  }
  const config = loadConfig();
  if (argv[0] === 'restore') {
    const progress = process.stderr.isTTY ? processIo().stderr : undefined;
    process.exit(await runRestore(argv.slice(1), config, io, progress));
  }
  const storage = await openAdminStorage(config, argv);
  let code: number;
  try {
    if (argv[0] === 'upgrade') {
      // Before the migration the other commands run first: the check reads the schema as the running release left it.
      const progress = process.stderr.isTTY ? processIo().stderr : undefined;
      code = await runUpgradeCheck(argv, storage, io, progress);
    } else {
      await migrateToLatest(storage);
      code = await runAdmin(argv, storage, config, io);
    }
  } finally {
    await storage.close();
  }
  process.exit(code);
}

/**
 * How the command's change is made through a running server instead (its API, as an administrator), for the
 * message of a PGlite directory another process holds: each command its own way.
 */
export function throughRunningServer(argv: readonly string[]): string {
  const [command, subject] = argv;
  const user = subject?.toUpperCase() ?? '<userid>';
  switch (command) {
    case 'adminmode':
      return (
        'make the change through the running server: `npx eas adminmode off` (administrator credentials in ' +
        'EAS_USER and EAS_PASSWORD, or EAS_APIKEY), or the API (docs/adminmode.md).'
      );
    case 'unlock':
      return (
        `let an administrator unlock ${user} through the running server: set its status back to ACTIVE ` +
        '(MXAPIPERUSER or MAXUSER, docs/security.md "Failed logins: temporary blocking"); a temporary block also ends by itself after ' +
        'EAS_LOCKOUT_MINUTES.'
      );
    case 'reset-password':
      return `let an administrator give ${user} a new password through the running server's API (docs/security.md).`;
    case 'sessions':
      return `let an administrator end the sessions of ${argv[2]?.toUpperCase() ?? '<userid>'} through the running server (the console's Sessions page, or DELETE /oslc/sessions/<id>).`;
    default:
      return 'stop it first: this command has no way through the running server.';
  }
}

/**
 * The server's storage. A PGlite directory a running server holds cannot be opened by a second process: the
 * error then says what to do instead (docs/security.md, "Recovery from the shell").
 */
async function openAdminStorage(config: AppConfig, argv: readonly string[]): Promise<Storage> {
  try {
    return await openStorage(
      config.databaseUrl
        ? {
            kind: 'postgres',
            url: config.databaseUrl,
            ...(config.databaseSchema && { schema: config.databaseSchema }),
          }
        : { kind: 'pglite', dataDir: config.dataDir },
    );
  } catch (error) {
    if (error instanceof DataDirectoryLockedError)
      throw new Error(
        `a server (pid ${error.ownerPid}) is running on the PGlite data directory ${error.directory}, and only ` +
          `one process may open it. Stop that server and run this command again, or ${throughRunningServer(argv)}`,
        { cause: error },
      );
    throw error;
  }
}
