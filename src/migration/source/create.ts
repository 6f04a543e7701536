import { createHash } from 'node:crypto';
import type { UserProfile } from '../../auth/types.js';
import { isMaximoError } from '../../errors.js';
import type { ObjectStructure, StructureNode } from '../../metadata/registry.js';
import { giveTurnWhenDue } from '../../util/event-loop-turns.js';
import { packageEvent } from '../../audit/events.js';
import type { MigrationContext } from '../context.js';
import { childDriftAttributes, driftAttributes } from '../drift.js';
import {
  PACKAGE_STATUS,
  definitionNamed,
  describeCounts,
  formatCount,
  packageRecord,
  recordCounts,
  type PackageRecord,
} from '../packages.js';
import * as repository from '../repository.js';
import type { Db, PackageDefinition, PackageRow } from '../repository.js';
import {
  FORMAT_VERSION,
  FORMAT_VERSION_WITHOUT_DRIFT,
  STAGED_CHUNK_CHARS,
  type Manifest,
  type ManifestEntry,
} from '../transfer/package-file.js';
import { contentOf, refuseUniqueIdKeys } from './definitions.js';
import { changeLines, snapshotLines } from './records.js';
import { exportedAttachments } from '../attachments/carried.js';

type CreateContext = Pick<
  MigrationContext,
  'db' | 'storage' | 'resources' | 'dbconfig' | 'sourceIdentity' | 'audit'
>;
type Content = Awaited<ReturnType<typeof contentOf>>;

/** `POST /dm/create`: the package's records read into staging, its manifest written; status CREATED. */
export async function createPackage(
  context: CreateContext,
  pkgdefname: string,
  readme: string | undefined,
  user: UserProfile,
): Promise<PackageRecord> {
  const definition = await definitionNamed(context.db, pkgdefname);
  const content = await contentOf(context, definition);
  if (definition.type === 'CHANGE') {
    for (const { structure } of content) refuseUniqueIdKeys(definition.pkgdefname, structure);
  }
  const created = await openPackage(context, definition, readme, user);
  // A CHANGE package's period starts at the previous package's mark (docs/migration.md, "Drift guard").
  const period =
    definition.type === 'CHANGE'
      ? await repository.markPackage(context.db, definition.pkgdefname, created.dmpackageid)
      : undefined;
  try {
    const entries = await stageContent(context, definition, created, content, period?.periodStart);
    const manifest: Manifest = {
      formatVersion: period ? FORMAT_VERSION : FORMAT_VERSION_WITHOUT_DRIFT,
      source: created.source,
      pkgdefname: created.pkgdefname,
      type: definition.type,
      xmlaction: definition.xmlaction,
      package: created.package,
      ...(readme !== undefined && { readme }),
      createby: user.userid,
      createdate: created.createdate.toISOString(),
      entries,
      attributes: await customAttributesOf(
        context,
        content.map((entry) => entry.structure),
      ),
    };
    return packageRecord(await finishPackage(context, created, manifest));
  } catch (error) {
    if (period) await repository.removeMark(context.db, period.mark);
    await repository.deleteStaging(context.db, created.dmpackageid);
    await repository.updatePackage(context.db, created.dmpackageid, {
      status: PACKAGE_STATUS.createError,
      progressstatus: isMaximoError(error) ? error.message.slice(0, 200) : 'Creation failed',
    });
    throw error;
  }
}

/** The source-side package record, CREATE_INPROGRESS, with its file name, in a transaction of its own. */
async function openPackage(
  context: Pick<MigrationContext, 'db' | 'sourceIdentity'>,
  definition: PackageDefinition,
  readme: string | undefined,
  user: UserProfile,
): Promise<PackageRow> {
  return context.db.transaction().execute(async (trx) => {
    const row = await repository.insertPackage(trx, {
      pkgdefname: definition.pkgdefname,
      source: context.sourceIdentity(),
      package: `${definition.pkgdefname}_${Date.now().toString(36).toUpperCase()}`,
      type: definition.type,
      status: PACKAGE_STATUS.createInProgress,
      filename: null,
      readme: readme ?? null,
      createby: user.userid,
      changeby: user.userid,
      progressstatus: 'Reading records',
      distributionmessage: null,
      side: 'SOURCE',
    });
    return repository.updatePackage(trx, row.dmpackageid, {
      filename: `${definition.pkgdefname}_${row.dmpackageid}.zip`,
    });
  });
}

/** Every content structure's records staged in order (a CHANGE package's changes since `periodStart`). */
async function stageContent(
  context: CreateContext,
  definition: PackageDefinition,
  created: PackageRow,
  content: Content,
  periodStart: number | undefined,
): Promise<ManifestEntry[]> {
  const entries: ManifestEntry[] = [];
  for (const { structure, where, order } of content) {
    const lines =
      periodStart !== undefined
        ? changeLines(context, definition.pkgdefname, structure, periodStart)
        : snapshotLines(context.resources, structure, where, definition.batchsize, (object, ids) =>
            exportedAttachments(
              context.db,
              context.storage.attachmentsDir,
              definition.pkgdefname,
              object,
              ids,
            ),
          );
    const progress = (count: number) =>
      repository.updatePackage(context.db, created.dmpackageid, {
        progressstatus: `Reading: ${formatCount(count)} ${structure.name} records (${order} of ${content.length} object structures)`,
      });
    const entry = await stage(
      context.db,
      created.dmpackageid,
      structure.name,
      order,
      lines,
      definition.batchsize,
      progress,
    );
    entries.push(
      periodStart !== undefined
        ? {
            ...entry,
            expectedattributes: driftAttributes(structure.root.object),
            expectedchildren: childDriftAttributes(structure),
          }
        : entry,
    );
    await repository.updatePackage(context.db, created.dmpackageid, {
      progressstatus: `Read ${entries.length} of ${content.length} object structures`,
    });
  }
  return entries;
}

/** The manifest stored and the package CREATED, in one transaction. */
async function finishPackage(
  context: Pick<MigrationContext, 'db' | 'audit'>,
  created: PackageRow,
  manifest: Manifest,
): Promise<PackageRow> {
  const { dmpackageid } = created;
  return context.db.transaction().execute(async (trx) => {
    await context.audit.record(trx, packageEvent('create', created, { records: recordCounts(manifest) }));
    await repository.insertStaging(trx, dmpackageid, {
      type: 'MANIFEST',
      cfgobject: null,
      cfgdataorder: 0,
      chunk: 0,
      cfgobjectcount: manifest.entries.length,
      content: JSON.stringify(manifest),
    });
    return repository.updatePackage(trx, dmpackageid, {
      status: PACKAGE_STATUS.created,
      progressstatus: `Created: ${describeCounts(manifest.entries)}`,
    });
  });
}

/** The custom attributes of every object of the structures (root and children), as the manifest carries them. */
async function customAttributesOf(
  context: Pick<MigrationContext, 'dbconfig'>,
  structures: readonly ObjectStructure[],
): Promise<NonNullable<Manifest['attributes']>> {
  const objects = new Set<string>();
  const visit = (node: StructureNode) => {
    objects.add(node.object.name);
    node.children.forEach(visit);
  };
  structures.forEach((structure) => visit(structure.root));
  const rows = await context.dbconfig.listCustomAttributes();
  return rows
    .filter((row) => objects.has(row.objectname))
    .map((row) => ({
      objectname: row.objectname,
      attributename: row.attributename,
      maxtype: row.maxtype,
      length: row.length,
      scale: row.scale,
      required: row.required,
      defaultvalue: row.defaultvalue,
      domainid: row.domainid,
      title: row.title,
    }));
}

/** Writes one object's lines into staging chunks, counting, sizing and hashing them as the file will hold them. */
async function stage(
  db: Db,
  dmpackageid: number,
  objectstructure: string,
  order: number,
  lines: AsyncIterable<string>,
  batchSize: number,
  /** Hears the records staged so far after each chunk (the package's progress, docs/migration.md "Progress"). */
  progress: (count: number) => Promise<unknown>,
): Promise<ManifestEntry> {
  const hash = createHash('sha256');
  let bytes = 0;
  let count = 0;
  let chunk = 0;
  let batch: string[] = [];
  let batchChars = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    batchChars = 0;
    await repository.insertStaging(db, dmpackageid, {
      type: 'CFGDATA',
      cfgobject: objectstructure,
      cfgdataorder: order,
      chunk: chunk++,
      cfgobjectcount: batch.length,
      content: batch.join('\n'),
    });
    batch = [];
    await giveTurnWhenDue();
    await progress(count);
  };
  for await (const line of lines) {
    const bytesOfLine = Buffer.from(`${line}\n`);
    hash.update(bytesOfLine);
    bytes += bytesOfLine.length;
    count += 1;
    batch.push(line);
    batchChars += line.length;
    if (batch.length >= batchSize || batchChars >= STAGED_CHUNK_CHARS) await flush();
  }
  await flush();
  return {
    name: `data/${String(order).padStart(3, '0')}-${objectstructure}.ndjson`,
    objectstructure,
    cfgdataorder: order,
    count,
    bytes,
    sha256: hash.digest('hex'),
  };
}
