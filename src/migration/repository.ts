import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import type { DmPackageDefTable, DmPackageTable, DmPkgDefContentTable, DmPkgDstTrgtTable } from './tables.js';

export type Db = Kysely<Database>;
export type PackageDefinition = Selectable<DmPackageDefTable>;
export type PackageContent = Selectable<DmPkgDefContentTable>;
export type PackageTarget = Selectable<DmPkgDstTrgtTable>;
export type PackageRow = Selectable<DmPackageTable>;
export type PackageValues = Omit<DmPackageTable, 'dmpackageid' | 'statusdate' | 'createdate' | 'inverseof'>;

export async function findDefinition(db: Db, pkgdefname: string): Promise<PackageDefinition | undefined> {
  return db.selectFrom('dmpackagedef').selectAll().where('pkgdefname', '=', pkgdefname).executeTakeFirst();
}

export async function lockDefinition(db: Db, pkgdefname: string): Promise<PackageDefinition | undefined> {
  return db
    .selectFrom('dmpackagedef')
    .selectAll()
    .where('pkgdefname', '=', pkgdefname)
    .forUpdate()
    .executeTakeFirst();
}

export async function definitionContent(db: Db, pkgdefname: string): Promise<PackageContent[]> {
  return db
    .selectFrom('dmpkgdefcontent')
    .select(['pkgdefname', 'objectstructure', 'whereclause', 'cfgdataorder'])
    .where('pkgdefname', '=', pkgdefname)
    .orderBy('cfgdataorder')
    .orderBy('objectstructure')
    .execute();
}

export async function definitionTargets(db: Db, pkgdefname: string): Promise<PackageTarget[]> {
  return db
    .selectFrom('dmpkgdsttrgt')
    .select(['pkgdefname', 'targetname', 'type', 'url', 'username', 'password', 'schemaname'])
    .where('pkgdefname', '=', pkgdefname)
    .orderBy('targetname')
    .execute();
}

export async function setDefinitionActive(db: Db, pkgdefname: string, active: boolean): Promise<void> {
  await db.updateTable('dmpackagedef').set({ active }).where('pkgdefname', '=', pkgdefname).execute();
}

/** CHANGE definitions being tracked: name and the object structures each covers. */
export async function activeChangeDefinitions(
  db: Db,
): Promise<Array<{ pkgdefname: string; objectstructure: string }>> {
  return db
    .selectFrom('dmpackagedef as d')
    .innerJoin('dmpkgdefcontent as c', 'c.pkgdefname', 'd.pkgdefname')
    .select(['d.pkgdefname', 'c.objectstructure'])
    .where('d.type', '=', 'CHANGE')
    .where('d.active', '=', true)
    .execute();
}

export async function insertPackage(db: Db, values: PackageValues): Promise<PackageRow> {
  return db.insertInto('dmpackage').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findPackage(db: Db, dmpackageid: number): Promise<PackageRow | undefined> {
  return db.selectFrom('dmpackage').selectAll().where('dmpackageid', '=', dmpackageid).executeTakeFirst();
}

/**
 * Serializes deploys of one package for the rest of the transaction: an advisory lock rather than the row's, so the
 * deploy's progress can still be written to the row meanwhile (docs/migration.md, "Progress"). Advisory locks belong
 * to the whole database: the key names the schema too, so that deployments sharing a database in schemas of their
 * own never wait for each other's deploys of a package with the same number.
 */
export async function lockDeploy(db: Db, dmpackageid: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(coalesce(current_schema(), '') || '.dmpackage'), ${dmpackageid}::int)`.execute(
    db,
  );
}

/** The progress text of a package in the given status (a no-op once it moved on). */
export async function updateProgress(
  db: Db,
  dmpackageid: number,
  status: string,
  progressstatus: string,
): Promise<void> {
  await db
    .updateTable('dmpackage')
    .set({ progressstatus })
    .where('dmpackageid', '=', dmpackageid)
    .where('status', '=', status)
    .execute();
}

/** A target-side package already received: the same package of the same definition from the same source. */
export async function findReceived(
  db: Db,
  pkgdefname: string,
  source: string,
  packageName: string,
): Promise<PackageRow | undefined> {
  return db
    .selectFrom('dmpackage')
    .selectAll()
    .where('pkgdefname', '=', pkgdefname)
    .where('source', '=', source)
    .where('package', '=', packageName)
    .where('side', '=', 'TARGET')
    .executeTakeFirst();
}

export async function updatePackage(
  db: Db,
  dmpackageid: number,
  values: Partial<
    Pick<PackageRow, 'status' | 'progressstatus' | 'distributionmessage' | 'changeby' | 'filename'>
  >,
): Promise<PackageRow> {
  const statusdate = values.status === undefined ? {} : { statusdate: new Date() };
  return db
    .updateTable('dmpackage')
    .set({ ...values, ...statusdate })
    .where('dmpackageid', '=', dmpackageid)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deletePackage(db: Db, dmpackageid: number): Promise<void> {
  await db.deleteFrom('dmpackage').where('dmpackageid', '=', dmpackageid).execute();
}

export interface StagingRow {
  type: 'MANIFEST' | 'CFGDATA';
  cfgobject: string | null;
  cfgdataorder: number;
  chunk: number;
  cfgobjectcount: number;
  content: string;
}

export async function insertStaging(db: Db, dmpackageid: number, row: StagingRow): Promise<void> {
  await db
    .insertInto('dmpkgstaging')
    .values({ dmpackageid, ...row })
    .execute();
}

export async function deleteStaging(db: Db, dmpackageid: number): Promise<void> {
  await db.deleteFrom('dmpkgstaging').where('dmpackageid', '=', dmpackageid).execute();
}

/** How many records a package's staging still holds (0 once closed). */
export async function stagedRecordCount(db: Db, dmpackageid: number): Promise<number> {
  const row = await db
    .selectFrom('dmpkgstaging')
    .select((eb) => eb.fn.sum<string | number | null>('cfgobjectcount').as('records'))
    .where('dmpackageid', '=', dmpackageid)
    .where('type', '=', 'CFGDATA')
    .executeTakeFirst();
  return Number(row?.records ?? 0);
}

export async function readManifest(db: Db, dmpackageid: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('dmpkgstaging')
    .select('content')
    .where('dmpackageid', '=', dmpackageid)
    .where('type', '=', 'MANIFEST')
    .executeTakeFirst();
  return row?.content;
}

/** The chunks of one object's data, a few at a time in order, so a large package is never read whole. */
export async function* stagedChunks(
  db: Db,
  dmpackageid: number,
  cfgdataorder: number,
): AsyncGenerator<string> {
  const CHUNKS_PER_READ = 4;
  let after = -1;
  for (;;) {
    const rows = await db
      .selectFrom('dmpkgstaging')
      .select(['chunk', 'content'])
      .where('dmpackageid', '=', dmpackageid)
      .where('type', '=', 'CFGDATA')
      .where('cfgdataorder', '=', cfgdataorder)
      .where('chunk', '>', after)
      .orderBy('chunk')
      .limit(CHUNKS_PER_READ)
      .execute();
    for (const row of rows) yield row.content;
    if (rows.length < CHUNKS_PER_READ) return;
    after = rows.at(-1)!.chunk;
  }
}

export async function recordChange(
  db: Db,
  pkgdefname: string,
  objectstructure: string,
  operation: string,
  keyvalues: string,
  beforehash: string | null,
): Promise<void> {
  await db
    .insertInto('dmpkgchange')
    .values({ pkgdefname, objectstructure, operation, keyvalues, beforehash })
    .execute();
}

/** The operation of the history rows that mark where a package was created (docs/migration.md, "Drift guard"). */
const PACKAGE_MARK = 'package';

/**
 * Marks in the tracked history that a package is being created: the id of the previous mark (0 when none, as after
 * a reset), where this package's period starts, and the id of the new mark, removed again if the creation fails.
 */
export async function markPackage(
  db: Db,
  pkgdefname: string,
  dmpackageid: number,
): Promise<{ periodStart: number; mark: number }> {
  const previous = await db
    .selectFrom('dmpkgchange')
    .select((eb) => eb.fn.max('dmpkgchangeid').as('last'))
    .where('pkgdefname', '=', pkgdefname)
    .where('operation', '=', PACKAGE_MARK)
    .executeTakeFirst();
  const inserted = await db
    .insertInto('dmpkgchange')
    .values({
      pkgdefname,
      objectstructure: '',
      operation: PACKAGE_MARK,
      keyvalues: String(dmpackageid),
      beforehash: null,
    })
    .returning('dmpkgchangeid')
    .executeTakeFirstOrThrow();
  return { periodStart: Number(previous?.last ?? 0), mark: Number(inserted.dmpkgchangeid) };
}

export async function removeMark(db: Db, mark: number): Promise<void> {
  await db.deleteFrom('dmpkgchange').where('dmpkgchangeid', '=', mark).execute();
}

/** One tracked record: its last operation, and its first write of the period when it was written in the period. */
export interface TrackedChange {
  operation: string;
  keyvalues: string;
  /** Whether the record was written after `periodStart`; `firstbefore` is then that first write's before hash. */
  inperiod: boolean;
  firstbefore: string | null;
}

/**
 * The tracked changes of a CHANGE definition, the last operation per record, in the order they last changed, each
 * with the before hash of its first write after `periodStart` (the previous package's mark).
 */
export async function trackedChanges(
  db: Db,
  pkgdefname: string,
  objectstructure: string,
  periodStart = 0,
): Promise<TrackedChange[]> {
  // Two sorted passes joined by key, rather than a look-up per record: histories grow to many thousand rows.
  const result = await sql<TrackedChange>`
    with last as (
      select distinct on (keyvalues) keyvalues, operation, dmpkgchangeid from dmpkgchange
      where pkgdefname = ${pkgdefname} and objectstructure = ${objectstructure}
      order by keyvalues, dmpkgchangeid desc),
    first as (
      select distinct on (keyvalues) keyvalues, beforehash from dmpkgchange
      where pkgdefname = ${pkgdefname} and objectstructure = ${objectstructure} and dmpkgchangeid > ${periodStart}
      order by keyvalues, dmpkgchangeid)
    select last.operation, last.keyvalues, first.keyvalues is not null as inperiod, first.beforehash as firstbefore
    from last left join first on first.keyvalues = last.keyvalues
    order by last.dmpkgchangeid`.execute(db);
  return result.rows;
}

export async function clearChanges(db: Db, pkgdefname: string): Promise<void> {
  await db.deleteFrom('dmpkgchange').where('pkgdefname', '=', pkgdefname).execute();
}
