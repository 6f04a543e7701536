import { sql, type Kysely, type Selectable } from 'kysely';
import type { DynamicDatabase } from '../../db/schema.js';
import type { ObjectMeta, StructureNode } from '../../metadata/registry.js';
import type { ColumnLimits } from '../../oslc/column-limits.js';
import { nullPartMatches } from '../../oslc/batch-repository.js';
import type { Row } from '../../oslc/repository.js';
import type { StoredValue } from '../../oslc/values.js';
import type { Db, PackageRow } from '../repository.js';
import type { DmPkgHistoryTable } from '../tables.js';

/** SQL of back-out (docs/migration.md, "Back-out"): prior states read set-wise, inverse packages, the history. */

type Dynamic = Kysely<DynamicDatabase>;
export type HistoryRow = Selectable<DmPkgHistoryTable>;

/**
 * `(a, b) in (select * from unnest($1::varchar[], $2::bigint[]))` over `columns` of `object`'s table: one array per
 * column rather than a list of tuples, whose expression the parser nests once per tuple (a deep stack on thousands).
 */
function tuplesIn(
  limits: ColumnLimits,
  object: ObjectMeta,
  columns: readonly string[],
  tuples: readonly (readonly StoredValue[])[],
) {
  const left = sql.join(columns.map((column) => sql.ref(column)));
  const arrays = columns.map((column, index) => {
    const type = limits.column(object, column)?.dataType ?? 'text';
    return sql`${tuples.map((tuple) => tuple[index] ?? null)}::${sql.raw(type)}[]`;
  });
  return sql`(${left}) in (select * from unnest(${sql.join(arrays)}))`;
}

/** The stored rows of `object` whose keys are among `keyTuples` (none with a null part), in one statement. */
export async function rowsByKeys(
  db: Dynamic,
  limits: ColumnLimits,
  object: ObjectMeta,
  keyTuples: readonly (readonly StoredValue[])[],
): Promise<Row[]> {
  if (keyTuples.length === 0) return [];
  const result = await sql<Row>`select * from ${sql.table(object.table)}
    where ${tuplesIn(limits, object, object.keys, keyTuples)}`.execute(db);
  return result.rows;
}

/**
 * The key values and rowstamp of the stored rows of `object` whose keys are among `keyTuples` (none with a null
 * part), in one statement: what the back-out's check compares before it reads whole rows.
 */
export async function rowstampsByKeys(
  db: Dynamic,
  limits: ColumnLimits,
  object: ObjectMeta,
  keyTuples: readonly (readonly StoredValue[])[],
): Promise<Row[]> {
  if (keyTuples.length === 0) return [];
  const columns = sql.join([...object.keys, 'rowstamp'].map((column) => sql.ref(column)));
  const result = await sql<Row>`select ${columns} from ${sql.table(object.table)}
    where ${tuplesIn(limits, object, object.keys, keyTuples)}`.execute(db);
  return result.rows;
}

/** The rows of a child collection under any of `parents`, in one statement, in unique id order. */
export async function childRows(
  db: Dynamic,
  limits: ColumnLimits,
  child: StructureNode,
  parents: readonly Row[],
): Promise<Row[]> {
  const joined = parents.map((parent) =>
    child.on.map(([parentAttribute]) => parent[parentAttribute] ?? null),
  );
  const tuples = joined.filter((tuple) => tuple.every((value) => value !== null));
  const columns = child.on.map(([, childAttribute]) => childAttribute);
  // A null join value matches nothing, as `in` compares, but in a null-safe child's join, where it matches a null.
  const partial = child.nullSafe ? nullPartMatches(columns, joined) : undefined;
  if (tuples.length === 0 && !partial) return [];
  const complete = tuples.length > 0 ? tuplesIn(limits, child.object, columns, tuples) : sql`false`;
  const fixed = Object.entries(child.values ?? {}).map(
    ([column, value]) => sql` and ${sql.ref(column)} = ${value}`,
  );
  const result = await sql<Row>`select * from ${sql.table(child.object.table)}
    where ${partial ? sql`(${complete} or ${partial})` : complete}${sql.join(fixed, sql``)}
    order by ${sql.ref(child.object.uniqueId)}`.execute(db);
  return result.rows;
}

/** The inverse package of a deployed package, if a deploy captured one. */
export async function findInverse(db: Db, dmpackageid: number): Promise<PackageRow | undefined> {
  return db.selectFrom('dmpackage').selectAll().where('inverseof', '=', dmpackageid).executeTakeFirst();
}

export async function insertInverse(
  db: Db,
  deployed: PackageRow,
  values: { source: string; package: string; createby: string },
): Promise<PackageRow> {
  return db
    .insertInto('dmpackage')
    .values({
      pkgdefname: deployed.pkgdefname,
      source: values.source,
      package: values.package,
      type: 'INVERSE',
      status: 'CREATED',
      filename: `${values.package}.zip`,
      readme: `The back-out of package ${deployed.package} (${deployed.dmpackageid})`,
      createby: values.createby,
      changeby: values.createby,
      progressstatus: 'Capturing',
      distributionmessage: null,
      side: 'TARGET',
      inverseof: deployed.dmpackageid,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertHistory(
  db: Db,
  entry: { dmpackageid: number; action: string; status: string; message: string | null; changeby: string },
): Promise<void> {
  await db.insertInto('dmpkghistory').values(entry).execute();
}

export async function historyOf(db: Db, dmpackageid: number): Promise<HistoryRow[]> {
  return db
    .selectFrom('dmpkghistory')
    .selectAll()
    .where('dmpackageid', '=', dmpackageid)
    .orderBy('dmpkghistoryid')
    .execute();
}

/**
 * The chunks of one object's inverse records, last first: an inverse is applied from its end. Read eight at a time
 * (a few MiB: a chunk of deleted records carries each one's deployed row), so the reads are few round trips.
 */
export async function* chunksLastFirst(
  db: Db,
  dmpackageid: number,
  cfgdataorder: number,
): AsyncGenerator<string> {
  const CHUNKS_PER_READ = 8;
  let before: number | undefined;
  for (;;) {
    let query = db
      .selectFrom('dmpkgstaging')
      .select(['chunk', 'content'])
      .where('dmpackageid', '=', dmpackageid)
      .where('type', '=', 'CFGDATA')
      .where('cfgdataorder', '=', cfgdataorder);
    if (before !== undefined) query = query.where('chunk', '<', before);
    const rows = await query.orderBy('chunk', 'desc').limit(CHUNKS_PER_READ).execute();
    for (const row of rows) yield row.content;
    if (rows.length < CHUNKS_PER_READ) return;
    before = rows.at(-1)!.chunk;
  }
}

/** The stored values of one property per server name (encrypted values are never carried, so never read). */
export async function propertyValues(
  db: Db,
  propname: string,
): Promise<Array<{ servername: string; propvalue: string | null }>> {
  const result = await sql<{ servername: string; propvalue: string | null }>`
    select servername, propvalue from maxpropvalue where propname = ${propname} order by servername`.execute(
    db,
  );
  return result.rows;
}

/** The value a server name of a property falls back to without a value of its own: COMMON's, else the default. */
export async function inheritedValue(db: Db, propname: string, servername: string): Promise<string | null> {
  const result = await sql<{ propvalue: string | null }>`
    select coalesce(
      (select propvalue from maxpropvalue where propname = ${propname} and servername = 'COMMON' and ${servername} <> 'COMMON'),
      (select maximodefault from maxprop where propname = ${propname})) as propvalue`.execute(db);
  return result.rows[0]?.propvalue ?? null;
}

/**
 * Removes a property's value of one server name the deploy had added, once a back-out set it to the value it
 * falls back to (through the property service, so history and other processes hear of it): as before the deploy.
 */
export async function removeClearedValue(db: Db, propname: string, servername: string): Promise<void> {
  await sql`delete from maxpropvalue where propname = ${propname} and servername = ${servername}
    and encryptedvalue is null`.execute(db);
}
