import type { UserProfile } from '../../auth/types.js';
import { dynamicView, typedView } from '../../db/schema.js';
import { errors, isMaximoError, type MaximoError } from '../../errors.js';
import type { ObjectStructure } from '../../metadata/registry.js';
import type { BatchOutcome, BatchRecord } from '../../oslc/batch-writer.js';
import type { Row } from '../../oslc/repository.js';
import type { ResourceWriter } from '../../oslc/service.js';
import type { StoredValue } from '../../oslc/values.js';
import { packageEvent } from '../../audit/events.js';
import type { MigrationContext } from '../context.js';
import { refusalRemedy } from '../refusal-remedy.js';
import { deployablePackage, jsonValue, keyText, stagedLines, type JsonRecord } from '../packages.js';
import { isPropertyStructure, previewProperty } from '../properties.js';
import type { Manifest } from '../transfer/package-file.js';
import { syncRecords, type Counts } from './deploy.js';
import { driftedRecords } from './drift.js';
import { applyStructural, structuralChanges } from './structural.js';

type Change = {
  key: string;
  attributes: Record<string, { from: unknown; to: unknown }>;
  /** Child collections the record sends that differ from the stored ones. */
  children?: string[];
};

/** Per object structure: what the deploy would add, change (attribute by attribute), delete and refuse. */
export interface PreviewObject {
  objectstructure: string;
  add: string[];
  change: Change[];
  delete: string[];
  /** Records equal to the target's: the deploy leaves them as they are. */
  unchanged: number;
  /** Records the target holds in another state than the source expected (docs/migration.md, "Drift guard"). */
  drift: string[];
  /** Records the deploy would refuse, each with the reason it would give and where it is fixed. */
  refused: Array<{ key: string; reason: string; remedy: string }>;
}

/**
 * Refusals that share their reason and remedy (145 assets naming the missing site BEDFORD), told once with their
 * count: what an administrator reads first (docs/migration.md, "Preview").
 */
export interface RefusalGroup {
  reasoncode: string;
  reason: string;
  remedy: string;
  /** Records refused for this reason, all structures. */
  count: number;
  /** Per object structure, how many of them. */
  objectstructures: Array<{ objectstructure: string; count: number }>;
  /** The keys of the first few of them. */
  examples: string[];
}

/** Keys listed per group as examples (every key stays in the objects' `refused`). */
const GROUP_EXAMPLES = 3;

export interface PreviewOutcome {
  pkgdefname: string;
  dmpackageid: number;
  objects: PreviewObject[];
  /** Custom attributes the deploy would add or change (`ADD ASSET.MIGRATED`). */
  structural: string[];
  /** Whether the deploy needs admin mode (it changes the configuration): it turns it on and off for the deploy. */
  adminmode: boolean;
  /** The deploy's counts: a deploy of the package now answers these (unless it is refused); `refused` beside them. */
  counts: Counts & { refused: number };
  /** Records the deploy would refuse, all structures: the deploy writes nothing while there is one. */
  refusals: number;
  /** The refusals grouped by reason and remedy, the largest group first. */
  refusalgroups: RefusalGroup[];
  /** False when the trial stopped at a failure it could not go past: records after it were not checked. */
  complete: boolean;
}

type PreviewContext = Pick<
  MigrationContext,
  'db' | 'storage' | 'resources' | 'properties' | 'dbconfig' | 'audit' | 'origin'
>;

/** Ends the trial's transaction: a preview never commits. */
class TrialOver extends Error {
  constructor(readonly counts: Counts) {
    super('The preview rolls back its trial deploy');
  }
}

/**
 * `POST /dm/preview` (same body as deploy): the deploy itself, run in a transaction that is rolled back, so that its
 * checks (references such as sites, locations and value lists, the user's rights) and its counts are the deploy's:
 * the records it would add, change (attribute by attribute) and delete, those it would refuse with the reason, the
 * records that drifted, the structural changes and whether admin mode is needed. Nothing is written.
 */
export async function previewPackage(
  context: PreviewContext,
  pkgdefname: string,
  dmpackageid: number,
  user: UserProfile,
): Promise<PreviewOutcome> {
  const { row, manifest, structures } = await deployablePackage(context, pkgdefname, dmpackageid, 'preview');
  const structural = await structuralChanges(context, manifest);
  const trial = new Trial(manifest, structures);
  // The deploy's drift guard, before the trial writes anything (a forced deploy writes these records anyway).
  for await (const drifted of driftedRecords(
    dynamicView(context.storage.db),
    manifest,
    structures,
    dmpackageid,
  ))
    trial.objects.find((object) => object.objectstructure === drifted.structure)?.drift.push(drifted.key);
  let counts: Counts | undefined;
  try {
    counts = await trial.run(context, dmpackageid, structural, user);
  } catch (error) {
    if (!trial.stopped(error)) throw error;
  }
  await trial.properties(context, dmpackageid);
  const refusals = trial.objects.reduce((sum, object) => sum + object.refused.length, 0);
  const answered =
    counts !== undefined && refusals === 0 && !trial.leftAttributesOut() ? counts : trial.counts();
  // The trial rolled back: the record has a transaction of its own.
  await context.audit.recordAlone(packageEvent('preview', row, { ...answered, refusals }));
  return {
    pkgdefname: row.pkgdefname,
    dmpackageid,
    objects: trial.objects,
    structural: structural.map(
      (change) => `${change.changetype} ${change.objectname}.${change.attributename}`,
    ),
    adminmode: structural.length > 0,
    // With a refusal the deploy writes nothing; the counts are then those of the records it would accept.
    counts: { ...answered, refused: refusals },
    refusals,
    refusalgroups: trial.refusalGroups(),
    complete: counts !== undefined,
  };
}

/** The trial deploy of a preview: what it heard of each record, by structure. */
class Trial {
  readonly objects: PreviewObject[];
  private readonly byName = new Map<string, PreviewObject>();
  /** The stored rows of the chunk under way, by the record's index: the changes are told from them. */
  private stored = new Map<number, Row | undefined>();
  private readonly refusedErrors = new WeakSet<MaximoError>();
  /** The refusals by reason and remedy, in the order first heard. */
  private readonly groups = new Map<string, RefusalGroup>();
  /** Per object: the custom attributes the trial left out (admin mode off); a record that sets one changes. */
  private readonly leftOut = new Map<string, string[]>();

  constructor(
    private readonly manifest: Manifest,
    private readonly structures: readonly ObjectStructure[],
  ) {
    this.objects = structures.map((structure) => {
      const object: PreviewObject = {
        objectstructure: structure.name,
        add: [],
        change: [],
        delete: [],
        unchanged: 0,
        drift: [],
        refused: [],
      };
      this.byName.set(structure.name, object);
      return object;
    });
  }

  async run(
    context: PreviewContext,
    dmpackageid: number,
    structural: Parameters<typeof applyStructural>[2],
    user: UserProfile,
  ): Promise<Counts> {
    const propertySets = this.structures.some(isPropertyStructure)
      ? await context.properties.prepareSets(user, context.origin)
      : undefined;
    try {
      await context.resources.writeWith(
        user,
        { origin: context.origin },
        async (writer: ResourceWriter) => {
          const trx = typedView(writer.db);
          const written = await this.structural(context, structural, trx, user.userid);
          const batch = writer.batch().trial((index, row) => this.stored.set(index, row));
          const merge = this.manifest.xmlaction === 'AddChange';
          const plan = {
            dmpackageid,
            manifest: this.manifest,
            structures: written,
            propertySets,
            merge,
            user,
          };
          const hooks = {
            refused: (structure: ObjectStructure, keys: readonly StoredValue[], error: MaximoError) =>
              this.refused(structure, keys, error),
            synced: (
              structure: ObjectStructure,
              records: readonly BatchRecord[],
              outcomes: readonly BatchOutcome[],
            ) => this.synced(structure, records, outcomes),
          };
          throw new TrialOver(await syncRecords(trx, plan, batch, hooks, async () => undefined));
        },
        () => ({ structure: this.structures[0]!, uniqueId: 0 }),
      );
    } catch (error) {
      if (error instanceof TrialOver) return error.counts;
      throw error;
    }
    throw new Error('The preview trial committed');
  }

  /**
   * The structures the trial writes against: with the package's custom attributes applied in the trial's transaction
   * while admin mode allows it; else (the deploy will turn it on) as they are here, the new attributes left out.
   */
  private async structural(
    context: PreviewContext,
    structural: Parameters<typeof applyStructural>[2],
    trx: Parameters<typeof applyStructural>[3],
    userid: string,
  ): Promise<readonly ObjectStructure[]> {
    try {
      return await applyStructural(context, this.structures, structural, trx, userid);
    } catch (error) {
      if (!isMaximoError(error) || error.reasonCode !== 'BMXAA0578E') throw error;
      // Applied in a transaction, a table's new column would lock it for every reader until the trial ends.
      for (const change of structural)
        this.leftOut.set(change.objectname, [
          ...(this.leftOut.get(change.objectname) ?? []),
          change.attributename.toLowerCase(),
        ]);
      return this.structures;
    }
  }

  /** Whether the trial left the package's custom attributes out (its counts then are the preview's own). */
  leftAttributesOut(): boolean {
    return this.leftOut.size > 0;
  }

  /** The values a record sets of the attributes the trial left out, if any. */
  private newAttributes(structure: ObjectStructure, body: JsonRecord): Change['attributes'] | undefined {
    const names = this.leftOut.get(structure.root.object.name) ?? [];
    const set = names.filter((name) => body[name] !== undefined && body[name] !== null && body[name] !== '');
    if (set.length === 0) return undefined;
    return Object.fromEntries(set.map((name) => [name, { from: null, to: body[name] }]));
  }

  /** Whether the trial ended on a refusal it already listed (one it could not go past). */
  stopped(error: unknown): boolean {
    return isMaximoError(error) && this.refusedErrors.has(error);
  }

  /** The counts of the records heard so far (a trial that stopped). */
  counts(): Counts {
    let added = 0;
    let changed = 0;
    let deleted = 0;
    let unchanged = 0;
    for (const object of this.objects) {
      added += object.add.length;
      changed += object.change.length;
      deleted += object.delete.length;
      unchanged += object.unchanged;
    }
    return { added, changed, unchanged, deleted };
  }

  /** System properties: their changes value by value (their trial counted them; they have no rows to compare). */
  async properties(context: PreviewContext, dmpackageid: number): Promise<void> {
    for (const [index, entry] of this.manifest.entries.entries()) {
      if (!isPropertyStructure(this.structures[index]!)) continue;
      const object = this.objects[index]!;
      for await (const line of stagedLines(context.db, dmpackageid, entry.cfgdataorder))
        object.change.push(...(await previewProperty(context.properties, JSON.parse(line) as JsonRecord)));
    }
  }

  private refused(structure: ObjectStructure, keys: readonly StoredValue[], error: MaximoError): MaximoError {
    const key = keys.length === 0 ? '' : keyText(structure.root.object, keys);
    const refusal = errors.packageRecordRefused(structure.name, key, error.message, error.detail.attrName);
    this.refusedErrors.add(refusal);
    const listed = this.byName.get(structure.name)!.refused;
    if (!listed.some((entry) => entry.key === key)) {
      const remedy = refusalRemedy(structure, error);
      listed.push({ key, reason: error.message, remedy });
      this.group(structure.name, key, error, remedy);
    }
    return refusal;
  }

  private group(objectstructure: string, key: string, error: MaximoError, remedy: string): void {
    const id = JSON.stringify([error.message, remedy]);
    let group = this.groups.get(id);
    if (group === undefined) {
      group = {
        reasoncode: error.reasonCode,
        reason: error.message,
        remedy,
        count: 0,
        objectstructures: [],
        examples: [],
      };
      this.groups.set(id, group);
    }
    group.count += 1;
    const per = group.objectstructures.find((entry) => entry.objectstructure === objectstructure);
    if (per) per.count += 1;
    else group.objectstructures.push({ objectstructure, count: 1 });
    if (group.examples.length < GROUP_EXAMPLES) group.examples.push(`${objectstructure} ${key}`);
  }

  /** The refusal groups, the largest first (equal ones in the order first heard). */
  refusalGroups(): RefusalGroup[] {
    return [...this.groups.values()].sort((a, b) => b.count - a.count);
  }

  private synced(
    structure: ObjectStructure,
    records: readonly BatchRecord[],
    outcomes: readonly BatchOutcome[],
  ): void {
    const index = this.structures.findIndex((candidate) => candidate.name === structure.name);
    const original = this.structures[index]!.root.object;
    const object = this.byName.get(structure.name)!;
    const refused = new Set(object.refused.map((entry) => entry.key));
    for (const [at, record] of records.entries()) {
      const key = keyText(original, record.keys);
      const row = this.stored.get(at);
      if (refused.has(key)) continue;
      const outcome = outcomes[at]!;
      const newValues = this.newAttributes(structure, record.body);
      if (outcome === 'unchanged' && newValues === undefined) object.unchanged += 1;
      else if (outcome === 'unchanged') object.change.push({ key, attributes: newValues! });
      else if (outcome === 'added') object.add.push(key);
      else if (outcome === 'deleted') object.delete.push(key);
      else object.change.push(changeOf(structure, key, record.body, row));
    }
    this.stored = new Map();
  }
}

/** A record the deploy changes: the root attributes that differ, and the child collections it sends. */
function changeOf(structure: ObjectStructure, key: string, body: JsonRecord, row: Row | undefined): Change {
  const object = structure.root.object;
  const attributes: Change['attributes'] = {};
  for (const [name, value] of Object.entries(body)) {
    if (!object.attributes.has(name) || Array.isArray(value)) continue;
    const stored = jsonValue(row?.[name] ?? null);
    if (String(stored ?? '') !== String(value ?? '')) attributes[name] = { from: stored, to: value };
  }
  const children = structure.root.children
    .map((child) => child.name)
    .filter((name) => Array.isArray(body[name]));
  return children.length > 0 ? { key, attributes, children } : { key, attributes };
}
