import type { UserProfile } from '../../auth/types.js';
import { dynamicView, typedView } from '../../db/schema.js';
import type { AttributeChange } from '../../dbconfig/service.js';
import { errors, isMaximoError, type MaximoError } from '../../errors.js';
import type { ObjectStructure } from '../../metadata/registry.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { BatchOutcome, BatchRecord, BatchWriter } from '../../oslc/batch-writer.js';
import { keyValuesOf, type ResourceWriter } from '../../oslc/service.js';
import type { StoredValue } from '../../oslc/values.js';
import type { PropertySets } from '../../properties/service.js';
import { giveTurnWhenDue } from '../../util/event-loop-turns.js';
import { packageEvent } from '../../audit/events.js';
import type { MigrationContext } from '../context.js';
import {
  DELETE_ACTION,
  deployablePackage,
  PACKAGE_STATUS,
  formatCount,
  keyText,
  recordCounts,
  type JsonRecord,
} from '../packages.js';
import { deployProperty, isPropertyStructure } from '../properties.js';
import * as repository from '../repository.js';
import type { PackageRow } from '../repository.js';
import type { Manifest } from '../transfer/package-file.js';
import { requireAdminMode } from './admin-mode.js';
import { refuseDrift } from './drift.js';
import type { DeployProgress, DeployResultObserver } from './progress.js';
import { InverseCapture } from '../backout/capture.js';
import { keyText as recordKey } from '../backout/records.js';
import type { Row } from '../../oslc/repository.js';
import { refusalRemedy } from '../refusal-remedy.js';
import { StagedChunks } from './staged-chunks.js';
import { ColumnLimits } from '../../oslc/column-limits.js';
import { deployAttachments, takeAttachments } from '../attachments/carried.js';
import { matchStoredChildren } from './child-identity.js';
import { applyStructural, structuralChanges } from './structural.js';

export interface DeployOutcome {
  warningmsg: string;
}

type DeployContext = Pick<
  MigrationContext,
  'db' | 'resources' | 'dbconfig' | 'guard' | 'properties' | 'sourceIdentity' | 'audit' | 'origin'
> & {
  progress: DeployProgress;
  /** Hears how each deploy that started writing ended. */
  onResult?: DeployResultObserver | undefined;
};

export type Counts = { added: number; changed: number; unchanged: number; deleted: number };

/** What a deploy writes, read and checked before its transaction. */
interface DeployPlan {
  row: PackageRow;
  /** `deploy`, or `complete` (`/dm/completedeploy`): the audit record's event (docs/audit.md). */
  action: 'deploy' | 'complete';
  manifest: Manifest;
  structures: ObjectStructure[];
  structural: AttributeChange[];
  propertySets: PropertySets | undefined;
  force: boolean;
}

/**
 * `POST /dm/deploy`: every record of the package through the write path, in one transaction: added when the
 * target has no record with its keys, else changed (merged for AddChange, replaced for Replace), or deleted.
 * Any refusal rolls everything back and names the record; the package is then DEPLOY_ERROR. So does drift (a
 * record this deployment holds in another state than the source expected) unless `force`.
 */
export async function deployPackage(
  context: DeployContext,
  pkgdefname: string,
  dmpackageid: number,
  user: UserProfile,
  { force = false, completing = false }: { force?: boolean; completing?: boolean } = {},
): Promise<DeployOutcome> {
  const { row, manifest, structures } = await deployablePackage(context, pkgdefname, dmpackageid, 'deploy');
  const structural = await structuralChanges(context, manifest);
  if (structural.length > 0) await requireAdminMode(context, dmpackageid);
  // System properties are set through the property service's rules (docs/migration.md, "System properties").
  const propertySets = structures.some(isPropertyStructure)
    ? await context.properties.prepareSets(user, context.origin)
    : undefined;
  const started = await repository.updatePackage(context.db, dmpackageid, {
    status: PACKAGE_STATUS.deployInProgress,
    progressstatus: 'Deploying',
    changeby: user.userid,
  });
  context.progress.began(started);
  const plan: DeployPlan = {
    row,
    manifest,
    structures,
    structural,
    propertySets,
    force,
    action: completing ? 'complete' : 'deploy',
  };
  try {
    const counts = await context.resources.writeWith(
      user,
      { origin: context.origin },
      (writer) => writePackage(context, plan, writer, user),
      () => ({ structure: structures[0]!, uniqueId: 0 }),
    );
    if (structural.length > 0) await context.dbconfig.refresh();
    await propertySets?.refresh();
    context.onResult?.('deployed');
    return {
      warningmsg: `BMXAA8040I - Package ${row.package} was deployed: ${manifest.entries
        .map((entry) => `${entry.count} ${entry.objectstructure}`)
        .join(
          ', ',
        )} (${counts.added} added, ${counts.changed} changed, ${counts.unchanged} unchanged, ${counts.deleted} deleted).`,
    };
  } catch (error) {
    context.onResult?.('failed');
    await repository.updatePackage(context.db, dmpackageid, {
      status: PACKAGE_STATUS.deployError,
      progressstatus: (isMaximoError(error) ? error.message : 'Deploy failed').slice(0, 200),
    });
    throw error;
  } finally {
    await context.progress.finished(dmpackageid);
  }
}

/** The deploy's transaction: drift checked, configuration applied, every record written; the package DEPLOYED. */
async function writePackage(
  context: DeployContext,
  plan: DeployPlan,
  writer: ResourceWriter,
  user: UserProfile,
): Promise<Counts> {
  const { manifest, structures, structural, propertySets } = plan;
  const { dmpackageid } = plan.row;
  const trx = typedView(writer.db);
  await repository.lockDeploy(trx, dmpackageid);
  // The inverse package (docs/migration.md, "Back-out"), opened before the configuration changes.
  const inverse = await InverseCapture.begin(context, trx, dmpackageid, structural, user);
  // Before anything is written, and before the structural changes, so both sides hash the same columns.
  if (!plan.force) await refuseDrift(writer.db, manifest, structures, dmpackageid);
  const written = await applyStructural(context, structures, structural, trx, user.userid);
  const total = manifest.entries.reduce((sum, entry) => sum + entry.count, 0);
  const counts = await syncRecords(
    trx,
    {
      dmpackageid,
      manifest,
      structures: written,
      propertySets,
      merge: manifest.xmlaction === 'AddChange',
      user,
    },
    // The inverse of an added record is built from the row its insert answered, not read again.
    writer.batch().keepInserted(),
    { refused: recordRefused, inverse },
    async (done) => {
      // The records' checks run in JavaScript between the statements (docs/migration.md, "Progress").
      await giveTurnWhenDue();
      await context.progress.report(
        dmpackageid,
        `Deploying: ${formatCount(done)} of ${formatCount(total)} records`,
      );
    },
  );
  const deployed = `Deployed: ${counts.added} added, ${counts.changed} changed, ${counts.unchanged} unchanged, ${counts.deleted} deleted`;
  await inverse.finish(user, deployed);
  await context.audit.record(
    trx,
    packageEvent(plan.action, plan.row, { records: recordCounts(manifest), ...counts }),
  );
  await repository.updatePackage(trx, dmpackageid, {
    status: PACKAGE_STATUS.deployed,
    progressstatus: deployed,
  });
  return counts;
}

/** The records of a package, as a deploy and its preview write them. */
export interface RecordsPlan {
  dmpackageid: number;
  manifest: Manifest;
  /** Per manifest entry, as this transaction sees it (with the attributes it added). */
  structures: readonly ObjectStructure[];
  propertySets: PropertySets | undefined;
  merge: boolean;
  /** Who deploys: the creator of what is written outside the write path (attachments without their own). */
  user: UserProfile;
}

/** What the deploy (or its preview) hears of each staged chunk's records. */
export interface RecordsHooks {
  /** The error of a refused record (a preview notes it and goes on). */
  refused(structure: ObjectStructure, keys: readonly StoredValue[], refused: MaximoError): MaximoError;
  /** The deploy's inverse package (docs/migration.md, "Back-out"): each chunk's prior state, before it is written. */
  inverse?: InverseCapture;
  /** A chunk's records and their outcomes, once written. */
  synced?(
    structure: ObjectStructure,
    records: readonly BatchRecord[],
    outcomes: readonly BatchOutcome[],
  ): void;
}

/**
 * Every record of the package through the batch, a staged chunk at a time (nothing of a chunk kept after it); the
 * counts. `chunkDone` hears the records done so far after each chunk. Once a chunk's inserts are sent, two things
 * are done while the database writes them (BatchWriter.alongside): the inverse of the chunk before, when it reads
 * nothing more, is built, and the next chunk is read and parsed (docs/migration.md, "Deploy: speed").
 */
export async function syncRecords(
  trx: Kysely<Database>,
  plan: RecordsPlan,
  batch: BatchWriter,
  hooks: RecordsHooks,
  chunkDone: (done: number) => Promise<void>,
): Promise<Counts> {
  const { dmpackageid, manifest, structures, propertySets } = plan;
  const counts: Counts = { added: 0, changed: 0, unchanged: 0, deleted: 0 };
  const deferred = new DeferredInverse();
  let chunks: StagedChunks | undefined;
  // Loaded by the first chunk that carries work logs or attachments (a statement the others do not need).
  let columnLimits: Promise<ColumnLimits> | undefined;
  const limits = () => (columnLimits ??= ColumnLimits.load(trx));
  let done = 0;
  try {
    for (const [index, entry] of manifest.entries.entries()) {
      const structure = structures[index]!;
      const reader = (chunks = new StagedChunks(trx, dmpackageid, entry.cfgdataorder));
      for (let chunk = await reader.take(); chunk; chunk = await reader.take()) {
        const { lines, bodies } = chunk;
        if (propertySets && isPropertyStructure(structure)) {
          await deferred.settle();
          await hooks.inverse?.properties(structure, entry, lines);
          for (const body of bodies) counts[await deployProperty(propertySets, trx, body)] += 1;
        } else {
          const attachments = takeAttachments(bodies);
          const records = bodies.map((body) => batchRecord(structure, body, hooks));
          await matchStoredChildren(dynamicView(trx), limits, structure, records, plan.merge);
          const prior = await hooks.inverse?.before(structure, entry, records);
          // The inverse package has read the chunk's stored rows just now: the batch matches against those.
          const known = prior && [...prior.stored.values()].map(({ row }) => row);
          batch.alongside(() => {
            deferred.start();
            reader.readAhead();
          });
          const outcomes = await batch.sync(
            structure.root,
            records,
            plan.merge,
            (at, refused) => hooks.refused(structure, records[at]!.keys, refused),
            known,
          );
          await deferred.settle();
          const inserted = batch.takeInserted();
          const after = () => hooks.inverse?.after(prior, outcomes, inserted) ?? Promise.resolve();
          if (readsNothingMore(records, outcomes, inserted)) deferred.defer(after);
          else await after();
          const attached = await deployAttachments(
            {
              db: trx,
              limits,
              dmpackageid,
              user: plan.user,
              refused: (keys, why) => hooks.refused(structure, keys, why),
            },
            structure.root.object,
            records,
            attachments,
          );
          hooks.synced?.(structure, records, outcomes);
          // A record left as it was that received attachments was changed by the deploy.
          outcomes.forEach((outcome, at) => {
            counts[outcome === 'unchanged' && attached.has(at) ? 'changed' : outcome] += 1;
          });
        }
        done += lines.length;
        await chunkDone(done);
      }
    }
    await deferred.settle();
  } catch (error) {
    // Its statements belong to the transaction the caller rolls back: they end first.
    batch.alongside(undefined);
    await deferred.abandon();
    await chunks?.abandon();
    throw error;
  }
  return counts;
}

/**
 * The inverse of the last chunk, built while the batch writes the next one (`start`, which the batch runs once that
 * chunk's inserts are sent) or when it settles: its statements are sent after those inserts, in the transaction's
 * order.
 */
class DeferredInverse {
  private task: (() => Promise<void>) | undefined;
  private running: Promise<void> | undefined;

  defer(task: () => Promise<void>): void {
    this.task = task;
  }

  /** The deferred inverse built and staged (started now if the batch has not started it). */
  async settle(): Promise<void> {
    this.start();
    const running = this.running;
    this.running = undefined;
    await running;
  }

  /** After a failure: what was started has ended, what was not is dropped. */
  async abandon(): Promise<void> {
    this.task = undefined;
    await this.running?.catch(() => undefined);
    this.running = undefined;
  }

  start(): void {
    const task = this.task;
    this.task = undefined;
    if (!task) return;
    this.running = task();
    // Awaited at `settle`; marked handled meanwhile, as a failure is only seen there.
    this.running.catch(() => undefined);
  }
}

/**
 * Whether a written chunk's inverse needs no read of the records: every record sent once, each either unchanged or
 * added by a multi-row insert that answered its row (BatchWriter.takeInserted). Only then may the next chunk write
 * before the inverse is built, as nothing it would read could have moved.
 */
function readsNothingMore(
  records: readonly BatchRecord[],
  outcomes: readonly BatchOutcome[],
  inserted: readonly Row[],
): boolean {
  let added = 0;
  for (const outcome of outcomes) {
    if (outcome === 'added') added += 1;
    else if (outcome !== 'unchanged') return false;
  }
  if (inserted.length !== added) return false;
  return new Set(records.map((record) => recordKey(record.keys))).size === records.length;
}

/** One parsed line of a package as a record of a batch: its key values read, a missing one refused. */
function batchRecord(structure: ObjectStructure, body: JsonRecord, hooks: RecordsHooks): BatchRecord {
  const object = structure.root.object;
  let keys: StoredValue[] = [];
  try {
    const read = keyValuesOf(object, body, {});
    keys = read.values;
    if (read.missing !== undefined)
      throw errors.requiredField(read.missing, object.name, read.missing, object.name.toLowerCase());
  } catch (error) {
    if (!isMaximoError(error)) throw error;
    throw hooks.refused(structure, keys, error);
  }
  return { body, keys, delete: body._action === DELETE_ACTION };
}

/** The error of a record the target refuses: the structure, the record's key and the reason (EAS0165E). */
export function recordRefused(
  structure: ObjectStructure,
  keys: readonly StoredValue[],
  refused: MaximoError,
): MaximoError {
  const object = structure.root.object;
  return errors.packageRecordRefused(
    structure.name,
    keys.length === 0 ? '' : keyText(object, keys),
    refused.message,
    refused.detail.attrName,
    refusalRemedy(structure, refused),
  );
}
