import type { Readable } from 'node:stream';
import { errors } from '../../errors.js';
import { packageEvent } from '../../audit/events.js';
import type { MigrationContext } from '../context.js';
import { PACKAGE_STATUS, manifestOf, packageOf, recordCounts, stagedLines } from '../packages.js';
import { isInverse } from '../backout/store.js';
import { writePackageFile, type DataSource } from './package-file.js';

/** `GET /dm/download`: the package file, streamed from staging. */
export async function downloadPackage(
  context: Pick<MigrationContext, 'db' | 'audit'>,
  pkgdefname: string,
  dmpackageid: number,
): Promise<{ filename: string; file: Readable }> {
  const { db } = context;
  const row = await packageOf(db, pkgdefname, dmpackageid);
  // An inverse package (docs/migration.md, "Back-out") is downloaded like a created one.
  if ((row.side !== 'SOURCE' && !isInverse(row)) || row.status !== PACKAGE_STATUS.created)
    throw errors.packageStatusRefused(String(dmpackageid), row.status, 'download');
  const manifest = await manifestOf(db, dmpackageid);
  // Nothing is written: the record has a transaction of its own, before the file is sent.
  await context.audit.recordAlone(packageEvent('download', row, { records: recordCounts(manifest) }));
  const sources: DataSource[] = manifest.entries.map((entry) => ({
    name: entry.name,
    lines: () => stagedLines(db, dmpackageid, entry.cfgdataorder),
  }));
  return {
    filename: row.filename ?? `${row.pkgdefname}_${row.dmpackageid}.zip`,
    file: writePackageFile(manifest, sources),
  };
}
