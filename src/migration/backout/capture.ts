import { setImmediate } from 'node:timers/promises';
import { createHash, type Hash } from 'node:crypto';
import type { UserProfile } from '../../auth/types.js';
import { dynamicView } from '../../db/schema.js';
import type { AttributeChange } from '../../dbconfig/service.js';
import type { ObjectMeta, ObjectStructure } from '../../metadata/registry.js';
import type { BatchOutcome, BatchRecord } from '../../oslc/batch-writer.js';
import { ColumnLimits } from '../../oslc/column-limits.js';
import type { Row } from '../../oslc/repository.js';
import type { StoredValue } from '../../oslc/values.js';
import type { MigrationContext } from '../context.js';
import { EXPECTED_FIELD, driftAttributes, driftHasher } from '../drift.js';
import { DELETE_ACTION, describeCounts, jsonValue, type JsonRecord } from '../packages.js';
import { isPropertyStructure } from '../properties.js';
import * as packages from '../repository.js';
import type { Db, PackageRow } from '../repository.js';
import { FORMAT_VERSION, type Manifest, type ManifestEntry } from '../transfer/package-file.js';
import { keyText, rootRows, rowExporter, rowKey, storedRecords, type StoredRecord } from './records.js';
import { findInverse, insertHistory, insertInverse, propertyValues } from './repository.js';

/*
 * The inverse package, captured inside the deploy's transaction (docs/migration.md, "Back-out"): per chunk the deploy
 * writes, the prior state of its records read in one statement per object before, and their deployed root rows
 * after; staged as a package of the same format, committed (or rolled back) with the deploy.
 */

/** Field of an inverse line: the deployed root row's values, or null when the deploy left no record. */
export const DEPLOYED_FIELD = '_deployed';

/**
 * Field of an inverse line: the rowstamp the deploy left on the record's root row (absent when it left none, or in an
 * inverse captured before it was kept). Every write renews a rowstamp, so a root row that still carries it is as the
 * deploy left it, and the back-out's check needs no hash of it (check.ts).
 */
export const DEPLOYED_STAMP_FIELD = '_deployedstamp';

/** Inverse lines built between two turns of the event loop (see `after`). */
const LINES_PER_TURN = 100;

type Structural = NonNullable<Manifest['backout']>['structural'];

/** One deploy chunk's records and their state before it was written. */
export interface ChunkPrior {
  structure: ObjectStructure;
  entry: ManifestEntry;
  records: readonly BatchRecord[];
  stored: ReadonlyMap<string, StoredRecord>;
}

interface EntryState {
  objectstructure: string;
  order: number;
  chunk: number;
  count: number;
  bytes: number;
  hash: Hash;
  names?: string[];
}

type CaptureContext = Pick<MigrationContext, 'dbconfig' | 'sourceIdentity'>;

export class InverseCapture {
  private readonly entries = new Map<number, EntryState>();

  private constructor(
    private readonly db: Db,
    private readonly deployed: PackageRow,
    /** Undefined when the package already has an inverse: a redeploy keeps the state before the first deploy. */
    private readonly inverse: PackageRow | undefined,
    private readonly structural: Structural,
    /** The catalog's column types, which the set-wise reads bind their key arrays with. */
    private readonly limits: ColumnLimits,
  ) {}

  /** Opens the inverse package of a deploy, before the deploy applies its configuration changes. */
  static async begin(
    context: CaptureContext,
    trx: Db,
    dmpackageid: number,
    changes: readonly AttributeChange[],
    user: UserProfile,
  ): Promise<InverseCapture> {
    const deployed = (await packages.findPackage(trx, dmpackageid))!;
    const limits = await ColumnLimits.load(trx);
    if (await findInverse(trx, dmpackageid)) return new InverseCapture(trx, deployed, undefined, [], limits);
    const present = new Map(
      (await context.dbconfig.listCustomAttributes({ transaction: trx })).map((row) => [
        `${row.objectname}.${row.attributename}`,
        row,
      ]),
    );
    const structural: Structural = changes.map((change) => {
      const prior = present.get(`${change.objectname}.${change.attributename}`);
      const named = { objectname: change.objectname, attributename: change.attributename };
      if (!prior) return { changetype: 'REMOVE', ...named };
      const { changeby: _by, changedate: _date, ...attribute } = prior;
      return { changetype: 'CHANGE', ...named, attribute };
    });
    const inverse = await insertInverse(trx, deployed, {
      source: context.sourceIdentity(),
      package: `BACKOUT_${dmpackageid}`,
      createby: user.userid,
    });
    return new InverseCapture(trx, deployed, inverse, structural, limits);
  }

  /** The prior state of a chunk's records, children included, before the deploy writes them. */
  async before(
    structure: ObjectStructure,
    entry: ManifestEntry,
    records: readonly BatchRecord[],
  ): Promise<ChunkPrior | undefined> {
    if (!this.inverse) return undefined;
    const keys = records.map((record) => record.keys);
    return {
      structure,
      entry,
      records,
      stored: await storedRecords(dynamicView(this.db), this.limits, structure.root, keys),
    };
  }

  /**
   * The inverse of a written chunk: per record the deploy added, changed or deleted, what restores it. `inserted`:
   * the stored rows the batch's inserts answered (BatchWriter.takeInserted); a record added once and found there is
   * not read again, which is what a package of new records is made of.
   */
  async after(
    prior: ChunkPrior | undefined,
    outcomes: readonly BatchOutcome[],
    inserted: readonly Row[] = [],
  ): Promise<void> {
    if (!prior) return;
    const { structure, records, stored } = prior;
    const object = structure.root.object;
    const names = driftAttributes(object);
    const hash = driftHasher(object, names);
    const exportOf = rowExporter(object);
    const written = new Map<string, { record: BatchRecord; times: number; added: boolean }>();
    records.forEach((record, index) => {
      const key = keyText(record.keys);
      const seen = written.get(key);
      if (seen) seen.times += 1;
      else if (outcomes[index] !== 'unchanged')
        written.set(key, { record, times: 1, added: outcomes[index] === 'added' });
    });
    const deployed = new Map<string, Row>();
    for (const row of inserted) {
      const key = rowKey(object, row);
      const record = written.get(key);
      if (record?.added && record.times === 1) deployed.set(key, row);
    }
    const toRead = [...written].filter(([key]) => !deployed.has(key)).map(([, { record }]) => record.keys);
    for (const row of await rootRows(dynamicView(this.db), this.limits, object, toRead))
      deployed.set(rowKey(object, row), row);
    const lines: string[] = [];
    let sinceTurn = 0;
    for (const [key, { record, times }] of written) {
      // Built while the database writes the deploy's next chunk: turns let its answers in and its next statements out.
      if (++sinceTurn === LINES_PER_TURN) {
        sinceTurn = 0;
        await setImmediate();
      }
      const before = stored.get(key);
      const after = deployed.get(key);
      if (!before && !after) continue;
      // A record sent once restores what it sent; one sent more than once, or deleted, restores whole.
      const restore = before && (!after || times > 1 ? before.record : sentPart(prior, before, record));
      lines.push(inverseLine(object, record.keys, restore, after, hash, exportOf));
    }
    await this.stage(prior.entry, lines, names);
  }

  /** The prior values of the system properties a chunk of MXAPIPROPERTY records sets, before it sets them. */
  async properties(
    structure: ObjectStructure,
    entry: ManifestEntry,
    lines: readonly string[],
  ): Promise<void> {
    if (!this.inverse || !isPropertyStructure(structure)) return;
    const inverse: string[] = [];
    for (const line of lines) {
      const record = JSON.parse(line) as JsonRecord;
      const propname = typeof record.propname === 'string' ? record.propname : '';
      const sent = Array.isArray(record.maxpropvalue) ? (record.maxpropvalue as JsonRecord[]) : [];
      const stored = new Map(
        (await propertyValues(this.db, propname)).map((row) => [row.servername, row.propvalue]),
      );
      const maxpropvalue = sent.map((value) => ({
        servername: value.servername,
        propvalue: stored.get(String(value.servername)) ?? null,
        _absent: !stored.has(String(value.servername)),
      }));
      inverse.push(JSON.stringify({ propname, maxpropvalue, [DEPLOYED_FIELD]: { maxpropvalue: sent } }));
    }
    await this.stage(entry, inverse, undefined);
  }

  /** The inverse's manifest, and the deploy in the package's history; the last step of the deploy's transaction. */
  async finish(user: UserProfile, message: string): Promise<void> {
    await insertHistory(this.db, {
      dmpackageid: this.deployed.dmpackageid,
      action: 'DEPLOY',
      status: 'DEPLOYED',
      message,
      changeby: user.userid,
    });
    if (!this.inverse) return;
    const entries: ManifestEntry[] = [...this.entries.values()]
      .sort((a, b) => a.order - b.order)
      .map((state) => ({
        name: `data/${String(state.order).padStart(3, '0')}-${state.objectstructure}.ndjson`,
        objectstructure: state.objectstructure,
        cfgdataorder: state.order,
        count: state.count,
        bytes: state.bytes,
        sha256: state.hash.digest('hex'),
        ...(state.names && { expectedattributes: state.names }),
      }));
    const manifest: Manifest = {
      formatVersion: FORMAT_VERSION,
      source: this.inverse.source,
      pkgdefname: this.inverse.pkgdefname,
      type: 'SNAPSHOT',
      xmlaction: 'Replace',
      package: this.inverse.package,
      readme: this.inverse.readme ?? '',
      createby: user.userid,
      createdate: this.inverse.createdate.toISOString(),
      entries,
      attributes: [],
      backout: { inverseof: this.deployed.dmpackageid, structural: this.structural },
    };
    await packages.insertStaging(this.db, this.inverse.dmpackageid, {
      type: 'MANIFEST',
      cfgobject: null,
      cfgdataorder: 0,
      chunk: 0,
      cfgobjectcount: entries.length,
      content: JSON.stringify(manifest),
    });
    await packages.updatePackage(this.db, this.inverse.dmpackageid, {
      progressstatus: `Captured: ${describeCounts(entries)}, ${this.structural.length} configuration changes`,
    });
  }

  /** One chunk of inverse lines staged, counted and hashed as the package file will hold them. */
  private async stage(entry: ManifestEntry, lines: readonly string[], names: string[] | undefined) {
    if (lines.length === 0) return;
    let state = this.entries.get(entry.cfgdataorder);
    if (!state) {
      state = {
        objectstructure: entry.objectstructure,
        order: entry.cfgdataorder,
        chunk: 0,
        count: 0,
        bytes: 0,
        hash: createHash('sha256'),
        ...(names && { names }),
      };
      this.entries.set(entry.cfgdataorder, state);
    }
    // The file holds each line followed by a newline: the chunk's content and one newline, hashed in one update.
    const content = lines.join('\n');
    const bytes = Buffer.from(`${content}\n`);
    state.hash.update(bytes);
    state.bytes += bytes.length;
    state.count += lines.length;
    await packages.insertStaging(this.db, this.inverse!.dmpackageid, {
      type: 'CFGDATA',
      cfgobject: entry.objectstructure,
      cfgdataorder: entry.cfgdataorder,
      chunk: state.chunk++,
      cfgobjectcount: lines.length,
      content,
    });
  }
}

/**
 * One line of the inverse: the prior values to restore, or (`restore` undefined: the deploy added the record) its
 * key and the delete action; then the guard of the row the deploy left, or a null `_deployed` when it left none. The
 * fields are assigned in the order the lines have always held them (building and spreading a guard object was most
 * of a line's cost).
 */
export function inverseLine(
  object: ObjectMeta,
  keys: readonly StoredValue[],
  restore: JsonRecord | undefined,
  after: Row | undefined,
  hash: (row: Row) => string,
  exportOf: (row: Row) => JsonRecord,
): string {
  let line: JsonRecord;
  if (restore) line = { ...restore };
  else {
    line = {};
    object.keys.forEach((name, index) => {
      line[name] = jsonValue(keys[index] ?? null);
    });
    line._action = DELETE_ACTION;
  }
  if (after) {
    line[EXPECTED_FIELD] = hash(after);
    line[DEPLOYED_FIELD] = exportOf(after);
    if (after.rowstamp !== null && after.rowstamp !== undefined)
      line[DEPLOYED_STAMP_FIELD] = String(after.rowstamp);
  } else line[DEPLOYED_FIELD] = null;
  return JSON.stringify(line);
}

/** The prior values of what a changed record's line sent: its key, attributes and whole child collections. */
function sentPart(prior: ChunkPrior, before: StoredRecord, record: BatchRecord): JsonRecord {
  const node = prior.structure.root;
  const part: JsonRecord = {};
  for (const key of node.object.keys) part[key] = before.record[key] ?? null;
  for (const sent of Object.keys(record.body)) {
    const name = sent.toLowerCase();
    if (name in before.record) part[name] = before.record[name];
  }
  return part;
}
