import type { Kysely } from 'kysely';
import { typedView, type DynamicDatabase } from '../../db/schema.js';
import { errors, type MaximoError } from '../../errors.js';
import type { ObjectMeta, ObjectStructure } from '../../metadata/registry.js';
import { ColumnLimits } from '../../oslc/column-limits.js';
import type { Row } from '../../oslc/repository.js';
import { keyValuesOf } from '../../oslc/service.js';
import type { StoredValue } from '../../oslc/values.js';
import { EXPECTED_FIELD, driftHash } from '../drift.js';
import { jsonValue, keyText as describeKey, stagedLines, type JsonRecord } from '../packages.js';
import { isPropertyStructure } from '../properties.js';
import type { Manifest, ManifestEntry } from '../transfer/package-file.js';
import { DEPLOYED_FIELD, DEPLOYED_STAMP_FIELD } from './capture.js';
import { keyText, rootRows, rowKey } from './records.js';
import { propertyValues, rowstampsByKeys } from './repository.js';

/*
 * The check before a back-out writes (docs/migration.md, "Back-out"): every record the deploy wrote is still as the
 * deploy left it, by the drift hash of its deployed root row; a record changed since is named with both values.
 */

/** A record changed since the deploy: per attribute the deployed value and the current one (null: no record). */
export interface BackoutDrift {
  objectstructure: string;
  key: string;
  deployed: JsonRecord | null;
  current: JsonRecord | null;
  attributes: Record<string, { deployed: unknown; current: unknown }>;
}

/** Records checked per statement (the first reads key values and a rowstamp per record). */
const LINES_PER_READ = 2000;

/** The drifted records of an inverse package: the first `limit` of them with their values, and how many in all. */
export async function backoutDrifts(
  db: Kysely<DynamicDatabase>,
  inverseid: number,
  manifest: Manifest,
  structures: readonly ObjectStructure[],
  limit = 100,
): Promise<{ count: number; drifts: BackoutDrift[] }> {
  const found = { count: 0, drifts: [] as BackoutDrift[] };
  const note = (drift: BackoutDrift) => {
    found.count += 1;
    if (found.drifts.length < limit) found.drifts.push(drift);
  };
  const limits = await ColumnLimits.load(db);
  for (const [index, entry] of manifest.entries.entries()) {
    const structure = structures[index]!;
    let lines: JsonRecord[] = [];
    for await (const line of stagedLines(typedView(db), inverseid, entry.cfgdataorder)) {
      lines.push(JSON.parse(line) as JsonRecord);
      if (lines.length < LINES_PER_READ) continue;
      await checkLines(db, limits, structure, entry, lines, note);
      lines = [];
    }
    await checkLines(db, limits, structure, entry, lines, note);
  }
  return found;
}

async function checkLines(
  db: Kysely<DynamicDatabase>,
  limits: ColumnLimits,
  structure: ObjectStructure,
  entry: ManifestEntry,
  lines: readonly JsonRecord[],
  note: (drift: BackoutDrift) => void,
): Promise<void> {
  if (lines.length === 0) return;
  if (isPropertyStructure(structure)) {
    for (const line of lines) await checkProperty(db, structure.name, line, note);
    return;
  }
  const object = structure.root.object;
  const keys = lines.map((line) => keyValuesOf(object, line, {}).values);
  const unproven = await unprovenLines(db, limits, object, lines, keys);
  if (unproven.length === 0) return;
  const rows = await rootRows(
    db,
    limits,
    object,
    unproven.map((index) => keys[index]!),
  );
  const current = new Map(rows.map((row) => [rowKey(object, row), row]));
  for (const index of unproven)
    compareLine(structure, entry, lines[index]!, keys[index]!, current.get(keyText(keys[index]!)), note);
}

/**
 * The drifted records among `lines`, given the stored root rows of their keys (`rows`, read by the caller in the same
 * transaction): what a back-out checks of each chunk before it writes it. A row that still carries the rowstamp the
 * deploy left is as the deploy left it (every write renews the rowstamp); any other line is compared by hash.
 */
export function chunkDrifts(
  structure: ObjectStructure,
  entry: ManifestEntry,
  lines: readonly JsonRecord[],
  keys: readonly StoredValue[][],
  rows: readonly Row[],
  note: (drift: BackoutDrift) => void,
): void {
  const object = structure.root.object;
  const current = new Map(rows.map((row) => [rowKey(object, row), row]));
  lines.forEach((line, index) => {
    const row = current.get(keyText(keys[index]!));
    const stamp = line[DEPLOYED_STAMP_FIELD];
    if (typeof stamp === 'string' && row?.rowstamp !== undefined && String(row.rowstamp) === stamp) return;
    compareLine(structure, entry, line, keys[index]!, row, note);
  });
}

/** One line compared by hash with the stored row of its key (none: no record), noted when it drifted. */
function compareLine(
  structure: ObjectStructure,
  entry: ManifestEntry,
  line: JsonRecord,
  keys: readonly StoredValue[],
  row: Row | undefined,
  note: (drift: BackoutDrift) => void,
): void {
  const object = structure.root.object;
  const deployed = (line[DEPLOYED_FIELD] ?? null) as JsonRecord | null;
  if (deployed === null ? row === undefined : row !== undefined && sameHash(object, entry, line, row)) return;
  note({
    objectstructure: structure.name,
    key: describeKey(object, keys),
    deployed,
    current: row ? currentValues(object, row) : null,
    attributes: deployed && row ? differences(object, entry, deployed, row) : {},
  });
}

/**
 * The indexes of the lines whose record the rowstamps do not prove unchanged, in order: a root row that still carries
 * the rowstamp the deploy left on it was not written since (every write renews it), so it hashes as deployed and is
 * no drift. One narrow statement for the lines that carry a rowstamp; the others (a record the deploy left absent, an
 * inverse captured without rowstamps, a table without them) are all compared by hash.
 */
async function unprovenLines(
  db: Kysely<DynamicDatabase>,
  limits: ColumnLimits,
  object: ObjectMeta,
  lines: readonly JsonRecord[],
  keys: readonly StoredValue[][],
): Promise<number[]> {
  const all = lines.map((_, index) => index);
  const stamped = all.filter(
    (index) =>
      typeof lines[index]![DEPLOYED_STAMP_FIELD] === 'string' &&
      keys[index]!.every((value) => value !== null),
  );
  if (stamped.length === 0 || !limits.column(object, 'rowstamp')) return all;
  const rows = await rowstampsByKeys(
    db,
    limits,
    object,
    stamped.map((index) => keys[index]!),
  );
  const stamps = new Map(rows.map((row) => [rowKey(object, row), String(row.rowstamp)]));
  const proven = new Set(
    stamped.filter((index) => stamps.get(keyText(keys[index]!)) === lines[index]![DEPLOYED_STAMP_FIELD]),
  );
  return all.filter((index) => !proven.has(index));
}

const sameHash = (object: ObjectMeta, entry: ManifestEntry, line: JsonRecord, row: Record<string, unknown>) =>
  driftHash(object, entry.expectedattributes ?? [], row) === line[EXPECTED_FIELD];

function currentValues(object: ObjectMeta, row: Record<string, unknown>): JsonRecord {
  const values: JsonRecord = {};
  for (const key of object.keys) values[key] = jsonValue((row[key] ?? null) as never);
  return values;
}

/** The attributes whose current value hashes otherwise than the deployed one, with both values. */
function differences(
  object: ObjectMeta,
  entry: ManifestEntry,
  deployed: JsonRecord,
  row: Record<string, unknown>,
): BackoutDrift['attributes'] {
  const attributes: BackoutDrift['attributes'] = {};
  for (const name of entry.expectedattributes ?? []) {
    const was = deployed[name] ?? null;
    const now = row[name] ?? null;
    if (driftHash(object, [name], { [name]: was }) !== driftHash(object, [name], { [name]: now }))
      attributes[name] = { deployed: was, current: jsonValue(now as never) };
  }
  return attributes;
}

/** A system property value set by the deploy and changed since. */
export async function checkProperty(
  db: Kysely<DynamicDatabase>,
  objectstructure: string,
  line: JsonRecord,
  note: (drift: BackoutDrift) => void,
): Promise<void> {
  const propname = String(line.propname);
  const deployed = (line[DEPLOYED_FIELD] as { maxpropvalue?: JsonRecord[] } | null)?.maxpropvalue ?? [];
  const stored = new Map(
    (await propertyValues(typedView(db), propname)).map((row) => [row.servername, row.propvalue]),
  );
  for (const value of deployed) {
    const servername = String(value.servername);
    const was = value.propvalue === null || value.propvalue === undefined ? null : String(value.propvalue);
    const now = stored.get(servername) ?? null;
    if ((was ?? '') === (now ?? '')) continue;
    note({
      objectstructure,
      key: `propname=${propname}, servername=${servername}`,
      deployed: { propvalue: was },
      current: { propvalue: now },
      attributes: { propvalue: { deployed: was, current: now } },
    });
  }
}

/**
 * The drifts a back-out finds as it goes through its inverse from the last record to the first: how many, and the
 * one its refusal names, the first in package order (the last found).
 */
export class DriftTally {
  count = 0;
  private named: BackoutDrift | undefined;

  readonly note = (drift: BackoutDrift): void => {
    this.count += 1;
    this.named = drift;
  };

  /** EAS0180E naming the first drifted record with both values; none when no record drifted. */
  refusal(dmpackageid: number): MaximoError | undefined {
    const first = this.named;
    if (!first) return undefined;
    return errors.packageBackoutDrifted(
      String(dmpackageid),
      first.objectstructure,
      first.key,
      describe(first),
      this.count,
    );
  }
}

/** `description deployed "Pump", now "Pump 2"`; a record the deploy removed or left, as present or absent. */
export function describe(drift: BackoutDrift): string {
  const shown = (value: unknown) => (value === null || value === undefined ? 'null' : JSON.stringify(value));
  const attributes = Object.entries(drift.attributes);
  if (attributes.length > 0)
    return attributes
      .map(([name, { deployed, current }]) => `${name} deployed ${shown(deployed)}, now ${shown(current)}`)
      .join('; ');
  return `deployed ${drift.deployed ? 'present' : 'absent'}, now ${drift.current ? 'present' : 'absent'}`;
}
