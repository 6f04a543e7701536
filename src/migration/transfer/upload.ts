import type { UserProfile } from '../../auth/types.js';
import { errors } from '../../errors.js';
import { packageEvent } from '../../audit/events.js';
import type { MigrationContext } from '../context.js';
import { PACKAGE_STATUS, packageRecord, recordCounts, type PackageRecord } from '../packages.js';
import * as repository from '../repository.js';
import type { Db, PackageRow } from '../repository.js';
import { readPackageFile, type Manifest } from './package-file.js';
import { receivedValues } from './received.js';

/**
 * `POST /dm/upload`: the file at `path` (the request body, on disk) checked whole and stored as a target-side
 * package in one transaction; a file refused leaves nothing behind. The same package uploaded again answers the
 * record it made the first time.
 */
export async function uploadPackage(
  context: Pick<MigrationContext, 'db' | 'audit'>,
  path: string,
  filename: string,
  user: UserProfile,
): Promise<PackageRecord> {
  const stored = await context.db.transaction().execute(async (trx) => {
    let received: PackageRow | undefined;
    const manifest = await readPackageFile(
      path,
      1000,
      async (entry, lines, batch) => {
        if (!received) return;
        await repository.insertStaging(trx, received.dmpackageid, {
          type: 'CFGDATA',
          cfgobject: entry.objectstructure,
          cfgdataorder: entry.cfgdataorder,
          chunk: batch,
          cfgobjectcount: lines.length,
          content: lines.join('\n'),
        });
      },
      async (manifest) => {
        received = await receive(trx, manifest, filename, user);
        if (received)
          await context.audit.record(
            trx,
            packageEvent('upload', received, { records: recordCounts(manifest) }),
          );
        return received !== undefined;
      },
    );
    return (
      received ?? (await repository.findReceived(trx, manifest.pkgdefname, manifest.source, manifest.package))
    );
  });
  if (!stored) throw errors.internal();
  return packageRecord(stored);
}

/**
 * The target-side record of a checked manifest, with its manifest staged; none when the same package is already
 * deployed or deploying here (the file's records are then not stored again).
 */
async function receive(
  trx: Db,
  manifest: Manifest,
  filename: string,
  user: UserProfile,
): Promise<PackageRow | undefined> {
  const existing = await repository.findReceived(trx, manifest.pkgdefname, manifest.source, manifest.package);
  if (existing) {
    if (existing.status === PACKAGE_STATUS.deployed || existing.status === PACKAGE_STATUS.deployInProgress)
      return undefined;
    await repository.deletePackage(trx, existing.dmpackageid);
  }
  const received = await repository.insertPackage(trx, {
    ...receivedValues(manifest, filename),
    changeby: user.userid,
  });
  await repository.insertStaging(trx, received.dmpackageid, {
    type: 'MANIFEST',
    cfgobject: null,
    cfgdataorder: 0,
    chunk: 0,
    cfgobjectcount: manifest.entries.length,
    content: JSON.stringify(manifest),
  });
  return received;
}
