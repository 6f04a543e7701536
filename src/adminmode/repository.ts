import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { AdminModeAction, AdminModeValue } from './tables.js';

export interface AdminModeRow {
  state: AdminModeValue;
  generation: number;
  numsessions: number | null;
  logoutmin: number | null;
  changeby: string | null;
  changedate: Date | null;
  servername: string | null;
  logoutdate: Date | null;
  ondate: Date | null;
}

const stateColumns = [
  'state',
  'generation',
  'numsessions',
  'logoutmin',
  'changeby',
  'changedate',
  'servername',
  'logoutdate',
  'ondate',
] as const;

/** The numeric columns come back as numbers on both engines, but as strings from some drivers' older versions. */
function normalize(row: AdminModeRow): AdminModeRow {
  return {
    ...row,
    state: Number(row.state) as AdminModeValue,
    generation: Number(row.generation),
    numsessions: row.numsessions === null ? null : Number(row.numsessions),
    logoutmin: row.logoutmin === null ? null : Number(row.logoutmin),
  };
}

/** The one row; `forUpdate` takes its lock for the rest of the transaction (changes and admission counts queue). */
export async function readState(db: Kysely<Database>, forUpdate = false): Promise<AdminModeRow> {
  let query = db.selectFrom('adminmode').select(stateColumns).where('adminmodeid', '=', 1);
  if (forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new Error('The adminmode row is missing: run the migrations');
  return normalize(row);
}

export interface StateChange {
  state: AdminModeValue;
  numsessions: number | null;
  logoutmin: number | null;
  changeby: string | null;
  changedate: Date;
  servername: string;
  logoutdate: Date | null;
  ondate: Date | null;
}

/**
 * Writes the new state when the row is still at `generation` (what the caller read, under lock or not): answers the
 * new row, or undefined when another change came first.
 */
export async function writeState(
  db: Kysely<Database>,
  generation: number,
  change: StateChange,
): Promise<AdminModeRow | undefined> {
  const row = await db
    .updateTable('adminmode')
    .set({ ...change, generation: generation + 1 })
    .where('adminmodeid', '=', 1)
    .where('generation', '=', generation)
    .returning(stateColumns)
    .executeTakeFirst();
  return row && normalize(row);
}

export interface LogEntry {
  action: AdminModeAction;
  fromstate: AdminModeValue;
  tostate: AdminModeValue;
  numsessions: number | null;
  logoutmin: number | null;
  changeby: string | null;
  changedate: Date;
  servername: string;
  endedsessions: number;
}

export async function insertLogEntry(db: Kysely<Database>, entry: LogEntry): Promise<void> {
  await db.insertInto('adminmodelog').values(entry).execute();
}

export interface LoggedChange extends LogEntry {
  adminmodelogid: number;
}

/** The latest changes, newest first. */
export async function latestLogEntries(db: Kysely<Database>, limit: number): Promise<LoggedChange[]> {
  const rows = await db
    .selectFrom('adminmodelog')
    .select([
      'adminmodelogid',
      'action',
      'fromstate',
      'tostate',
      'numsessions',
      'logoutmin',
      'changeby',
      'changedate',
      'servername',
      'endedsessions',
    ])
    .orderBy('adminmodelogid', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    ...row,
    adminmodelogid: Number(row.adminmodelogid),
    fromstate: Number(row.fromstate) as AdminModeValue,
    tostate: Number(row.tostate) as AdminModeValue,
    numsessions: row.numsessions === null ? null : Number(row.numsessions),
    logoutmin: row.logoutmin === null ? null : Number(row.logoutmin),
    endedsessions: Number(row.endedsessions),
  }));
}

/** Users of a group with the admin-mode login right, as a subquery. */
function allowedUsers(db: Kysely<Database>) {
  return db
    .selectFrom('groupuser')
    .innerJoin('maxgroup', 'maxgroup.groupname', 'groupuser.groupname')
    .select('groupuser.userid')
    .where('maxgroup.adminmodelogin', '=', true);
}

/** Whether the user is in a group with the admin-mode login right. */
export async function mayLogInDuringAdminMode(db: Kysely<Database>, userid: string): Promise<boolean> {
  const row = await allowedUsers(db).where('groupuser.userid', '=', userid).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * Live sessions (not past their end, active since `activeSince`) of users who may, or may not (`allowed`), log in
 * during admin mode.
 */
export async function countLiveSessions(
  db: Kysely<Database>,
  allowed: boolean,
  now: Date,
  activeSince: Date,
): Promise<number> {
  const row = await db
    .selectFrom('maxsession')
    .select(sql<string>`count(*)`.as('count'))
    .where('expires', '>', now)
    .where('lastactive', '>=', activeSince)
    .where('userid', allowed ? 'in' : 'not in', allowedUsers(db))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Ends every session of users who may not log in during admin mode; answers them, for the change bus. */
export async function deleteOrdinarySessions(
  db: Kysely<Database>,
): Promise<Array<{ sessionhash: string; tokenhash: string | null; userid: string }>> {
  return db
    .deleteFrom('maxsession')
    .where('userid', 'not in', allowedUsers(db))
    .returning(['sessionhash', 'tokenhash', 'userid'])
    .execute();
}
