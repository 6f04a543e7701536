import type { UserProfile } from '../../auth/types.js';
import { errors } from '../../errors.js';
import { packageEvent } from '../../audit/events.js';
import type { MigrationContext } from '../context.js';
import { PACKAGE_STATUS, packageOf, packageRecord, type PackageRecord } from '../packages.js';
import { removeInverse } from '../backout/store.js';
import * as repository from '../repository.js';

/** `POST /dm/close`: the staging rows deleted, the package CLOSED. */
export async function closePackage(
  context: Pick<MigrationContext, 'db' | 'audit'>,
  pkgdefname: string,
  dmpackageid: number,
  user: UserProfile,
): Promise<PackageRecord> {
  const row = await packageOf(context.db, pkgdefname, dmpackageid);
  if (row.status === PACKAGE_STATUS.createInProgress || row.status === PACKAGE_STATUS.deployInProgress)
    throw errors.packageStatusRefused(String(dmpackageid), row.status, 'close');
  const closed = await context.db.transaction().execute(async (trx) => {
    await repository.deleteStaging(trx, dmpackageid);
    await removeInverse(trx, dmpackageid);
    await context.audit.record(trx, packageEvent('close', row, { status: row.status }));
    return repository.updatePackage(trx, dmpackageid, {
      status: PACKAGE_STATUS.closed,
      progressstatus: 'Closed',
      changeby: user.userid,
    });
  });
  return packageRecord(closed);
}

/** `POST /dm/delete`: the package and its content removed. */
export async function deletePackage(
  context: Pick<MigrationContext, 'db' | 'audit'>,
  pkgdefname: string,
  dmpackageid: number,
): Promise<void> {
  const row = await packageOf(context.db, pkgdefname, dmpackageid);
  if (row.status === PACKAGE_STATUS.createInProgress || row.status === PACKAGE_STATUS.deployInProgress)
    throw errors.packageStatusRefused(String(dmpackageid), row.status, 'delete');
  await context.db.transaction().execute(async (trx) => {
    const staged = await repository.stagedRecordCount(trx, dmpackageid);
    await context.audit.record(trx, packageEvent('delete', row, { status: row.status, records: staged }));
    await repository.deletePackage(trx, dmpackageid);
  });
}
