import type { UserProfile } from '../../auth/types.js';
import { openStorage, type Storage } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { errors, isMaximoError } from '../../errors.js';
import { packageEvent } from '../../audit/events.js';
import type { MigrationContext } from '../context.js';
import {
  PACKAGE_STATUS,
  definitionNamed,
  manifestOf,
  packageOf,
  packageRecord,
  type PackageRecord,
} from '../packages.js';
import * as repository from '../repository.js';
import type { Db, PackageRow, PackageTarget } from '../repository.js';
import type { Manifest } from '../transfer/package-file.js';
import { receivedValues } from '../transfer/received.js';

/**
 * `POST /dm/distribute`: to the named target, or every target of the definition. A FILE target makes the package
 * file downloadable; a DATABASE target receives the package as a target-side record ready to deploy. A CHANGE
 * definition's listener is deactivated.
 */
export async function distributePackage(
  context: Pick<MigrationContext, 'db' | 'storage' | 'seal' | 'audit'>,
  pkgdefname: string,
  dmpackageid: number,
  targetname: string | undefined,
  user: UserProfile,
): Promise<PackageRecord> {
  const { db, storage } = context;
  const definition = await definitionNamed(db, pkgdefname);
  const row = await packageOf(db, definition.pkgdefname, dmpackageid);
  if (row.side !== 'SOURCE' || row.status !== PACKAGE_STATUS.created)
    throw errors.packageStatusRefused(String(dmpackageid), row.status, 'distribute');
  const targets = await repository.definitionTargets(db, definition.pkgdefname);
  const chosen =
    targetname === undefined
      ? targets
      : targets.filter((target) => target.targetname === targetname.toUpperCase());
  if (targetname !== undefined && chosen.length === 0)
    throw errors.packageTargetNotFound(targetname, definition.pkgdefname);
  const messages: string[] = [];
  for (const target of chosen) {
    if (target.type === 'DATABASE') {
      const received = await sendToDatabase(context, target, row);
      messages.push(
        `Package ${row.package} distributed to the database of target ${target.targetname} as package ${received}.`,
      );
    } else {
      messages.push(
        `Package ${row.package} is ready for download as ${row.filename ?? ''} (target ${target.targetname}).`,
      );
    }
  }
  if (chosen.length === 0) messages.push(`Package ${row.package} has no target: it is ready for download.`);
  const updated = await db.transaction().execute(async (trx) => {
    if (definition.type === 'CHANGE') {
      await repository.setDefinitionActive(trx, definition.pkgdefname, false);
      await storage.bus.notify<Database>(trx, 'object', 'DMPACKAGEDEF');
    }
    await context.audit.record(
      trx,
      packageEvent('distribute', row, { targets: chosen.map((target) => target.targetname) }),
    );
    return repository.updatePackage(trx, dmpackageid, {
      distributionmessage: messages.join(' ').slice(0, 1000),
      changeby: user.userid,
    });
  });
  if (definition.type === 'CHANGE') storage.bus.deliverLocally('object', 'DMPACKAGEDEF');
  return { ...packageRecord(updated), distributionmessage: updated.distributionmessage ?? '' };
}

/** Writes the package into a DATABASE target as a target-side record with its staging rows, in one transaction. */
async function sendToDatabase(
  context: Pick<MigrationContext, 'db' | 'seal'>,
  target: PackageTarget,
  row: PackageRow,
): Promise<number> {
  const remote = await openTarget(context, target);
  try {
    const manifest = await manifestOf(context.db, row.dmpackageid);
    return await remote.db.transaction().execute(async (trx) => copyPackage(context.db, trx, row, manifest));
  } catch (error) {
    if (isMaximoError(error)) throw error;
    throw errors.packageTargetUnreachable(
      target.targetname,
      'writing the package failed (is the target migrated to this release?)',
    );
  } finally {
    await remote.close();
  }
}

/** The target's database, opened with its URL and its (unsealed) credentials, one connection. */
async function openTarget(context: Pick<MigrationContext, 'seal'>, target: PackageTarget): Promise<Storage> {
  if (!target.url) throw errors.packageTargetUnreachable(target.targetname, 'the target has no database URL');
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    throw errors.packageTargetUnreachable(target.targetname, 'the database URL is not valid');
  }
  if (target.username) url.username = encodeURIComponent(target.username);
  if (target.password) {
    const password = context.seal.open(target.password);
    if (password === undefined)
      throw errors.packageTargetUnreachable(target.targetname, 'the stored password cannot be opened');
    url.password = encodeURIComponent(password);
  }
  try {
    return await openStorage({
      kind: 'postgres',
      url: url.toString(),
      ...(target.schemaname && { schema: target.schemaname }),
      poolSize: 1,
      onFault: () => undefined,
    });
  } catch {
    throw errors.packageTargetUnreachable(target.targetname, 'the database cannot be reached');
  }
}

/** The package's record, manifest and chunks copied from `db` (here) into the target's transaction `trx`. */
async function copyPackage(db: Db, trx: Db, row: PackageRow, manifest: Manifest): Promise<number> {
  const existing = await repository.findReceived(trx, row.pkgdefname, row.source, row.package);
  if (existing) {
    if (existing.status === PACKAGE_STATUS.deployed) return existing.dmpackageid;
    await repository.deletePackage(trx, existing.dmpackageid);
  }
  const received = await repository.insertPackage(trx, {
    ...receivedValues(manifest, row.filename),
  });
  await repository.insertStaging(trx, received.dmpackageid, {
    type: 'MANIFEST',
    cfgobject: null,
    cfgdataorder: 0,
    chunk: 0,
    cfgobjectcount: manifest.entries.length,
    content: JSON.stringify(manifest),
  });
  for (const entry of manifest.entries) {
    let chunk = 0;
    for await (const content of repository.stagedChunks(db, row.dmpackageid, entry.cfgdataorder)) {
      await repository.insertStaging(trx, received.dmpackageid, {
        type: 'CFGDATA',
        cfgobject: entry.objectstructure,
        cfgdataorder: entry.cfgdataorder,
        chunk: chunk++,
        cfgobjectcount: content.split('\n').length,
        content,
      });
    }
  }
  return received.dmpackageid;
}
