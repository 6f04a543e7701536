import type { Kysely } from 'kysely';
import { dynamicView, typedView, type DynamicDatabase } from '../../db/schema.js';
import type { ObjectStructure } from '../../metadata/registry.js';
import { ColumnLimits } from '../../oslc/column-limits.js';
import { keyValuesOf } from '../../oslc/service.js';
import type { MigrationContext } from '../context.js';
import { DELETE_ACTION, keyText as describeKey, stagedLines, type JsonRecord } from '../packages.js';
import { isPropertyStructure } from '../properties.js';
import { backoutPlan } from './apply.js';
import { backoutDrifts, type BackoutDrift } from './check.js';
import { keyText, storedRecords } from './records.js';
import { propertyValues } from './repository.js';

type Change = { key: string; attributes: Record<string, { from: unknown; to: unknown }> };

/** What a back-out would write, per object structure, in the shape of a deploy's preview. */
export interface BackoutPreview {
  pkgdefname: string;
  dmpackageid: number;
  backout: true;
  /** The inverse package the back-out applies. */
  inversepackageid: number;
  objects: Array<{
    objectstructure: string;
    /** Records the deploy deleted, added again. */
    add: string[];
    /** Records the deploy changed: per attribute (or child collection) the current value and the restored one. */
    change: Change[];
    /** Records the deploy added, deleted again. */
    delete: string[];
    /** Records changed since the deploy: the back-out refuses them unless forced. */
    drift: string[];
  }>;
  /** Each changed record with the deployed and the current values. */
  drifts: BackoutDrift[];
  driftcount: number;
  /** Configuration changes undone (`REMOVE ASSET.MIGRATED`); they need admin mode. */
  structural: string[];
  adminmode: boolean;
}

/** Records compared per statement. */
const LINES_PER_READ = 500;

/** `POST /dm/preview` with `backout: true`: what `POST /dm/backout` would write, without writing. */
export async function previewBackout(
  context: Pick<MigrationContext, 'db' | 'storage' | 'resources'>,
  pkgdefname: string,
  dmpackageid: number,
): Promise<BackoutPreview> {
  const plan = await backoutPlan(context, pkgdefname, dmpackageid, 'preview of a back-out');
  const db = dynamicView(context.storage.db);
  const objects: BackoutPreview['objects'] = [];
  const limits = await ColumnLimits.load(db);
  const found = await backoutDrifts(db, plan.inverse.dmpackageid, plan.manifest, plan.structures);
  for (const [index, entry] of plan.manifest.entries.entries()) {
    const structure = plan.structures[index]!;
    const outcome: BackoutPreview['objects'][number] = {
      objectstructure: structure.name,
      add: [],
      change: [],
      delete: [],
      drift: [],
    };
    let lines: JsonRecord[] = [];
    for await (const line of stagedLines(context.db, plan.inverse.dmpackageid, entry.cfgdataorder)) {
      lines.push(JSON.parse(line) as JsonRecord);
      if (lines.length < LINES_PER_READ) continue;
      await previewLines(db, limits, structure, lines, outcome);
      lines = [];
    }
    await previewLines(db, limits, structure, lines, outcome);
    outcome.drift.push(
      ...found.drifts.filter((drift) => drift.objectstructure === structure.name).map((drift) => drift.key),
    );
    objects.push(outcome);
  }
  const structural = (plan.manifest.backout?.structural ?? []).map(
    (change) => `${change.changetype} ${change.objectname}.${change.attributename}`,
  );
  return {
    pkgdefname: plan.deployed.pkgdefname,
    dmpackageid,
    backout: true,
    inversepackageid: plan.inverse.dmpackageid,
    objects,
    drifts: found.drifts,
    driftcount: found.count,
    structural,
    adminmode: structural.length > 0,
  };
}

async function previewLines(
  db: Kysely<DynamicDatabase>,
  limits: ColumnLimits,
  structure: ObjectStructure,
  lines: readonly JsonRecord[],
  outcome: BackoutPreview['objects'][number],
): Promise<void> {
  if (lines.length === 0) return;
  if (isPropertyStructure(structure)) {
    for (const line of lines) outcome.change.push(...(await propertyChanges(db, line)));
    return;
  }
  const object = structure.root.object;
  const keys = lines.map((line) => keyValuesOf(object, line, {}).values);
  const stored = await storedRecords(db, limits, structure.root, keys);
  lines.forEach((line, index) => {
    const key = describeKey(object, keys[index]!);
    const current = stored.get(keyText(keys[index]!));
    if (line._action === DELETE_ACTION) {
      if (current) outcome.delete.push(key);
      return;
    }
    if (!current) {
      outcome.add.push(key);
      return;
    }
    const attributes: Change['attributes'] = {};
    for (const [name, to] of Object.entries(line)) {
      if (name.startsWith('_') || !(name in current.record)) continue;
      const from = current.record[name];
      if (JSON.stringify(from ?? null) !== JSON.stringify(to ?? null)) attributes[name] = { from, to };
    }
    if (Object.keys(attributes).length > 0) outcome.change.push({ key, attributes });
  });
}

async function propertyChanges(db: Kysely<DynamicDatabase>, line: JsonRecord): Promise<Change[]> {
  const propname = String(line.propname);
  const values = Array.isArray(line.maxpropvalue) ? (line.maxpropvalue as JsonRecord[]) : [];
  const stored = new Map(
    (await propertyValues(typedView(db), propname)).map((row) => [row.servername, row.propvalue]),
  );
  const changes: Change[] = [];
  for (const value of values) {
    const servername = String(value.servername);
    const from = stored.has(servername) ? (stored.get(servername) ?? null) : null;
    const to = value._absent === true ? null : ((value.propvalue as string | null) ?? null);
    if (from !== to || (value._absent === true && stored.has(servername)))
      changes.push({
        key: `propname=${propname}, servername=${servername}`,
        attributes: { propvalue: { from, to } },
      });
  }
  return changes;
}
