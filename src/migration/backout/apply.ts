import type { UserProfile } from '../../auth/types.js';
import { typedView } from '../../db/schema.js';
import { errors, isMaximoError, type MaximoError } from '../../errors.js';
import type { ObjectStructure } from '../../metadata/registry.js';
import type { BatchRecord, BatchWriter } from '../../oslc/batch-writer.js';
import { ColumnLimits } from '../../oslc/column-limits.js';
import { keyValuesOf, type ResourceWriter } from '../../oslc/service.js';
import type { StoredValue } from '../../oslc/values.js';
import type { PropertySets } from '../../properties/service.js';
import { giveTurnWhenDue } from '../../util/event-loop-turns.js';
import { packageEvent } from '../../audit/events.js';
import type { MigrationContext } from '../context.js';
import { EXPECTED_FIELD } from '../drift.js';
import {
  DELETE_ACTION,
  PACKAGE_STATUS,
  formatCount,
  keyText,
  manifestOf,
  packageOf,
  type JsonRecord,
} from '../packages.js';
import { isPropertyStructure } from '../properties.js';
import * as packages from '../repository.js';
import type { PackageRow } from '../repository.js';
import { requireAdminMode } from '../target/admin-mode.js';
import type { DeployProgress } from '../target/progress.js';
import type { Manifest, ManifestEntry } from '../transfer/package-file.js';
import { DEPLOYED_FIELD, DEPLOYED_STAMP_FIELD } from './capture.js';
import { DriftTally, checkProperty, chunkDrifts } from './check.js';
import { rootRows } from './records.js';
import { removeDeployedAttachments } from '../attachments/carried.js';
import { restoreProperty } from './properties.js';
import { chunksLastFirst, findInverse, historyOf, insertHistory } from './repository.js';

export type BackoutContext = Pick<
  MigrationContext,
  'db' | 'resources' | 'dbconfig' | 'guard' | 'properties' | 'audit' | 'origin'
> & {
  progress: DeployProgress;
  /** Called after each chunk a back-out wrote, inside its transaction (tests interrupt a back-out there). */
  afterChunk?: (() => Promise<void>) | undefined;
};

export interface BackoutOutcome {
  warningmsg: string;
}

/** A back-out's inverse package, read and checked before its transaction. */
export interface BackoutPlan {
  deployed: PackageRow;
  inverse: PackageRow;
  manifest: Manifest;
  structures: ObjectStructure[];
}

/** Statuses a package may be backed out from: an interrupted back-out left BACKOUT_INPROGRESS behind. */
const BACKABLE: ReadonlySet<string> = new Set([PACKAGE_STATUS.deployed, PACKAGE_STATUS.backoutInProgress]);

/** The deployed package and its inverse, or the refusal: not deployed, backed out already, no inverse. */
export async function backoutPlan(
  context: Pick<MigrationContext, 'db' | 'resources'>,
  pkgdefname: string,
  dmpackageid: number,
  operation = 'back-out',
): Promise<BackoutPlan> {
  const deployed = await packageOf(context.db, pkgdefname, dmpackageid);
  if (deployed.status === PACKAGE_STATUS.backedOut) {
    const last = (await historyOf(context.db, dmpackageid)).filter((row) => row.action === 'BACKOUT').at(-1);
    throw errors.packageBackedOut(
      String(dmpackageid),
      last?.changeby ?? deployed.changeby ?? '?',
      (last?.changedate ?? deployed.statusdate).toISOString(),
    );
  }
  if (deployed.side !== 'TARGET' || !BACKABLE.has(deployed.status))
    throw errors.packageStatusRefused(String(dmpackageid), deployed.status, operation);
  const inverse = await findInverse(context.db, dmpackageid);
  if (!inverse) throw errors.packageWithoutInverse(String(dmpackageid));
  const manifest = await manifestOf(context.db, inverse.dmpackageid);
  const structures = manifest.entries.map((entry) => {
    const structure = context.resources.findObjectStructure(entry.objectstructure);
    if (!structure)
      throw errors.packageBackoutRefused(
        entry.objectstructure,
        '*',
        'the object structure does not exist here.',
      );
    return structure;
  });
  return { deployed, inverse, manifest, structures };
}

/**
 * `POST /dm/backout`: the inverse package captured at deploy applied in one transaction, from its last record to its
 * first, through the write path; then the configuration restored. Refused when a record changed since the deploy
 * unless `force`; any refusal rolls everything back and leaves the package DEPLOYED.
 */
export async function backoutPackage(
  context: BackoutContext,
  pkgdefname: string,
  dmpackageid: number,
  user: UserProfile,
  force = false,
): Promise<BackoutOutcome> {
  const plan = await backoutPlan(context, pkgdefname, dmpackageid);
  const structural = plan.manifest.backout?.structural ?? [];
  if (structural.length > 0) await requireAdminMode(context, dmpackageid);
  const propertySets = plan.structures.some(isPropertyStructure)
    ? await context.properties.prepareSets(user, context.origin)
    : undefined;
  const started = await packages.updatePackage(context.db, dmpackageid, {
    status: PACKAGE_STATUS.backoutInProgress,
    progressstatus: 'Backing out',
    changeby: user.userid,
  });
  context.progress.began(started);
  try {
    const written = await context.resources.writeWith(
      user,
      { origin: context.origin },
      (writer) => writeInverse(context, plan, writer, user, { force, propertySets }),
      () => ({ structure: plan.structures[0]!, uniqueId: 0 }),
    );
    if (structural.length > 0) await context.dbconfig.refresh();
    await propertySets?.refresh();
    return {
      warningmsg: `Package ${plan.deployed.package} was backed out: ${formatCount(written)} records restored, ${structural.length} configuration changes undone.`,
    };
  } catch (error) {
    // Another back-out committed meanwhile: its BACKEDOUT stands.
    if (isMaximoError(error) && error.reasonCode === 'EAS0181E') throw error;
    await packages.updatePackage(context.db, dmpackageid, {
      status: PACKAGE_STATUS.deployed,
      progressstatus: `Back-out failed: ${isMaximoError(error) ? error.message : 'error'}`.slice(0, 200),
    });
    throw error;
  } finally {
    context.progress.ended(dmpackageid);
  }
}

/** What the chunks of one back-out share: its transaction, its batch, and the drift check (none with `force`). */
interface Restoring {
  db: ResourceWriter['db'];
  trx: ReturnType<typeof typedView>;
  limits: ColumnLimits;
  batch: BatchWriter;
  drifts: DriftTally | undefined;
  propertySets: PropertySets | undefined;
}

/**
 * The back-out's transaction, in one pass over the inverse from its last chunk to its first: each chunk checked (its
 * stored rows read once, for the check and the batch), then written; once a record has drifted nothing more is
 * written and the rest is only checked, so that the refusal counts them all; then the configuration; BACKEDOUT.
 */
async function writeInverse(
  context: BackoutContext,
  plan: BackoutPlan,
  writer: ResourceWriter,
  user: UserProfile,
  options: { force: boolean; propertySets: PropertySets | undefined },
): Promise<number> {
  const { deployed, inverse, manifest, structures } = plan;
  const trx = typedView(writer.db);
  await packages.lockDeploy(trx, deployed.dmpackageid);
  const now = await packages.findPackage(trx, deployed.dmpackageid);
  if (now?.status === PACKAGE_STATUS.backedOut)
    throw errors.packageBackedOut(
      String(deployed.dmpackageid),
      now.changeby ?? '?',
      now.statusdate.toISOString(),
    );
  const restoring: Restoring = {
    db: writer.db,
    trx,
    limits: await ColumnLimits.load(writer.db),
    batch: writer.batch(),
    drifts: options.force ? undefined : new DriftTally(),
    propertySets: options.propertySets,
  };
  const total = manifest.entries.reduce((sum, entry) => sum + entry.count, 0);
  let done = 0;
  for (let index = manifest.entries.length - 1; index >= 0; index -= 1) {
    const entry = manifest.entries[index]!;
    for await (const content of chunksLastFirst(trx, inverse.dmpackageid, entry.cfgdataorder)) {
      const lines = content.split('\n').reverse();
      await restoreChunk(restoring, structures[index]!, entry, lines);
      await giveTurnWhenDue();
      if (restoring.drifts && restoring.drifts.count > 0) continue;
      done += lines.length;
      await context.progress.report(
        deployed.dmpackageid,
        `Backing out: ${formatCount(done)} of ${formatCount(total)} records`,
      );
      await context.afterChunk?.();
    }
  }
  const refusal = restoring.drifts?.refusal(deployed.dmpackageid);
  if (refusal) throw refusal;
  // The attachments the deploys added, on records the back-out kept (those of removed records went with them).
  await removeDeployedAttachments(trx, deployed.dmpackageid);
  await restoreStructure(context, manifest, user, trx);
  const message = `Backed out: ${formatCount(done)} records restored`;
  await context.audit.record(
    trx,
    packageEvent('backout', deployed, {
      restored: done,
      structural: manifest.backout?.structural?.length ?? 0,
    }),
  );
  await insertHistory(trx, {
    dmpackageid: deployed.dmpackageid,
    action: 'BACKOUT',
    status: PACKAGE_STATUS.backedOut,
    message,
    changeby: user.userid,
  });
  await packages.updatePackage(trx, deployed.dmpackageid, {
    status: PACKAGE_STATUS.backedOut,
    progressstatus: message,
    changeby: user.userid,
  });
  return done;
}

/**
 * One chunk of inverse lines (last first): checked unless `force`, and written unless a record drifted (in this
 * chunk or an earlier one). Records: their stored root rows read in one statement, which the check compares and the
 * batch matches the records against (it does not read them again); properties: through the property service.
 */
async function restoreChunk(
  restoring: Restoring,
  structure: ObjectStructure,
  entry: ManifestEntry,
  texts: readonly string[],
): Promise<void> {
  const { drifts, propertySets } = restoring;
  const lines = texts.map((text) => JSON.parse(text) as JsonRecord);
  if (isPropertyStructure(structure)) {
    if (drifts)
      for (const line of lines) await checkProperty(restoring.db, structure.name, line, drifts.note);
    if (!propertySets || (drifts && drifts.count > 0)) return;
    for (const line of lines) await restoreProperty(propertySets, restoring.trx, line);
    return;
  }
  const object = structure.root.object;
  const keys = lines.map((line) => keyValuesOf(object, line, {}).values);
  const rows = await rootRows(restoring.db, restoring.limits, object, keys);
  if (drifts) chunkDrifts(structure, entry, lines, keys, rows, drifts.note);
  if (drifts && drifts.count > 0) return;
  const records = lines.map((line, at) => inverseRecord(line, keys[at]!));
  await restoring.batch.sync(
    structure.root,
    records,
    false,
    (at, refused) => restoreRefused(structure, records[at]!.keys, refused),
    rows,
  );
}

/** The custom attributes as they were before the deploy: the added ones removed, the changed ones changed back. */
async function restoreStructure(
  context: Pick<MigrationContext, 'dbconfig' | 'origin'>,
  manifest: Manifest,
  user: UserProfile,
  trx: ReturnType<typeof typedView>,
): Promise<void> {
  const structural = manifest.backout?.structural ?? [];
  if (structural.length === 0) return;
  const changes = structural.map((change) => ({ ...change.attribute, ...change }));
  await context.dbconfig.stageChanges(
    changes.map(({ attribute: _attribute, ...change }) => change),
    user.userid,
    { transaction: trx },
  );
  await context.dbconfig.applyPending(user.userid, { transaction: trx, origin: context.origin });
}

/** One inverse line as a record of a batch: the deploy's guard fields left out, a deletion marked. */
function inverseRecord(line: JsonRecord, keys: StoredValue[]): BatchRecord {
  const {
    [EXPECTED_FIELD]: _expected,
    [DEPLOYED_FIELD]: _deployed,
    [DEPLOYED_STAMP_FIELD]: _stamp,
    ...body
  } = line;
  return { body, keys, delete: body._action === DELETE_ACTION };
}

function restoreRefused(
  structure: ObjectStructure,
  keys: readonly StoredValue[],
  refused: MaximoError,
): MaximoError {
  const object = structure.root.object;
  return errors.packageBackoutRefused(
    structure.name,
    keys.length === 0 ? '' : keyText(object, keys),
    refused.message,
    refused.detail.attrName,
  );
}
