import type { Kysely, Selectable } from 'kysely';
import { withRecord } from '../audit/repository.js';
import { StatementTemplate } from '../db/prepared-statements.js';
import type { AuditRecord } from '../audit/types.js';
import type { Database } from '../db/schema.js';
import type { MaxPropTable } from './tables.js';

/** A property's definition: its MAXPROP row without the bookkeeping columns. */
export type DefinitionRow = Omit<
  Selectable<MaxPropTable>,
  'maxpropid' | 'changeby' | 'changedate' | 'rowstamp'
>;

/** A stored value as it is at rest: `encryptedvalue` holds the sealed value of an encrypted property. */
export interface ValueRow {
  propname: string;
  servername: string;
  propvalue: string | null;
  encryptedvalue: string | null;
  changeby: string | null;
  changedate: Date | null;
}

export interface HistoryRow {
  propname: string;
  servername: string;
  oldvalue: string | null;
  newvalue: string | null;
  changeby: string;
  changedate: Date;
}

export interface AppliedRow {
  servername: string;
  propname: string;
  propvalue: string | null;
  appliedat: Date;
}

const definitionColumns = [
  'propname',
  'description',
  'maxtype',
  'domainid',
  'rangemin',
  'rangemax',
  'maximodefault',
  'globalonly',
  'instanceonly',
  'liverefresh',
  'onlinechanges',
  'encrypted',
  'masked',
  'nullsallowed',
  'userdefined',
] as const;

const valueColumns = [
  'propname',
  'servername',
  'propvalue',
  'encryptedvalue',
  'changeby',
  'changedate',
] as const;

/** Definitions of the named properties, or of every property when `names` is undefined. */
export async function loadDefinitions(
  db: Kysely<Database>,
  names?: readonly string[],
): Promise<DefinitionRow[]> {
  if (names?.length === 0) return [];
  let query = db.selectFrom('maxprop').select(definitionColumns);
  if (names) query = query.where('propname', 'in', names);
  return query.execute();
}

/** Every server's stored value of the named properties, or of every property when `names` is undefined. */
export async function loadValues(db: Kysely<Database>, names?: readonly string[]): Promise<ValueRow[]> {
  if (names?.length === 0) return [];
  let query = db.selectFrom('maxpropvalue').select(valueColumns);
  if (names) query = query.where('propname', 'in', names);
  return (await query.execute()).map((row) => ({ ...row, changedate: asDate(row.changedate) }));
}

/**
 * The definition, locked until the transaction ends: sets of one property are serialized, so each history row's
 * old value is the value the previous set left.
 */
export async function lockDefinition(db: Kysely<Database>, name: string): Promise<DefinitionRow | undefined> {
  return db
    .selectFrom('maxprop')
    .select(definitionColumns)
    .where('propname', '=', name)
    .forUpdate()
    .executeTakeFirst();
}

/** Registers a member of a property family on its first set (a no-op when another set registered it first). */
export async function insertDefinition(
  db: Kysely<Database>,
  row: DefinitionRow,
  changeby: string,
): Promise<void> {
  await db
    .insertInto('maxprop')
    .values({ ...row, changeby, changedate: new Date() })
    .onConflict((conflict) => conflict.column('propname').doNothing())
    .execute();
}

export async function findValue(
  db: Kysely<Database>,
  name: string,
  serverName: string,
): Promise<ValueRow | undefined> {
  const row = await db
    .selectFrom('maxpropvalue')
    .select(valueColumns)
    .where('propname', '=', name)
    .where('servername', '=', serverName)
    .executeTakeFirst();
  return row && { ...row, changedate: asDate(row.changedate) };
}

export async function saveValue(db: Kysely<Database>, row: ValueRow): Promise<void> {
  await db
    .insertInto('maxpropvalue')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['propname', 'servername']).doUpdateSet({
        propvalue: row.propvalue,
        encryptedvalue: row.encryptedvalue,
        changeby: row.changeby,
        changedate: row.changedate,
      }),
    )
    .execute();
}

/** The history row of a set, and the set's audit record when there is one, in one statement. */
export function historyInsert(db: Kysely<Database>, row: HistoryRow, record?: AuditRecord) {
  return withRecord(db, record).insertInto('maxprophistory').values(row);
}

/**
 * Writes `historyInsert`, from its template (compiled once, sent by name): it runs inside the property's row lock,
 * and with its audit record it is the longest statement a set sends there.
 */
export async function insertHistory(
  db: Kysely<Database>,
  row: HistoryRow,
  record?: AuditRecord,
): Promise<void> {
  await historyTemplate.execute(db, row, record);
}

const historyTemplate = new StatementTemplate(historyInsert);

/** Changes of one property, newest first. */
export async function loadHistory(db: Kysely<Database>, name: string, limit: number): Promise<HistoryRow[]> {
  const rows = await db
    .selectFrom('maxprophistory')
    .select(['propname', 'servername', 'oldvalue', 'newvalue', 'changeby', 'changedate'])
    .where('propname', '=', name)
    .orderBy('changedate', 'desc')
    .orderBy('maxprophistoryid', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, changedate: asDate(row.changedate)! }));
}

/** Records what one server process applied; a later refresh of the same property replaces its row. */
export async function saveApplied(db: Kysely<Database>, rows: readonly AppliedRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('maxpropapplied')
    .values([...rows])
    .onConflict((conflict) =>
      conflict.columns(['servername', 'propname']).doUpdateSet((update) => ({
        propvalue: update.ref('excluded.propvalue'),
        appliedat: update.ref('excluded.appliedat'),
      })),
    )
    .execute();
}

/** What every server process applied for the named properties. */
export async function loadApplied(db: Kysely<Database>, names: readonly string[]): Promise<AppliedRow[]> {
  if (names.length === 0) return [];
  const rows = await db
    .selectFrom('maxpropapplied')
    .select(['servername', 'propname', 'propvalue', 'appliedat'])
    .where('propname', 'in', names)
    .orderBy('servername')
    .execute();
  return rows.map((row) => ({ ...row, appliedat: asDate(row.appliedat)! }));
}

function asDate(value: Date | string | null): Date | null {
  if (value === null) return null;
  return value instanceof Date ? value : new Date(value);
}
