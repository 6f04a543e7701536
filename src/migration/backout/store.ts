import type { Db } from '../repository.js';
import type { PackageRow } from '../repository.js';
import { findInverse, historyOf } from './repository.js';

/*
 * Where an inverse package shows (docs/migration.md, "Back-out"): with the package record of the deployed package,
 * with the history of that package; and where it goes: it is removed with the deployed package.
 */

/** What the package record adds for back-out: the inverse package, the package an inverse undoes, the history. */
export interface BackoutFacts {
  inversepackageid?: number;
  inverseof?: number;
  history: Array<{
    action: string;
    status: string;
    message: string | null;
    changeby: string;
    changedate: string;
  }>;
}

export async function backoutFacts(db: Db, row: PackageRow): Promise<BackoutFacts> {
  const inverse = await findInverse(db, row.dmpackageid);
  const history = await historyOf(db, row.dmpackageid);
  return {
    ...(inverse && { inversepackageid: inverse.dmpackageid }),
    ...(row.inverseof !== null && { inverseof: Number(row.inverseof) }),
    history: history.map((entry) => ({
      action: entry.action,
      status: entry.status,
      message: entry.message,
      changeby: entry.changeby,
      changedate: entry.changedate.toISOString(),
    })),
  };
}

/** The inverse package of a package being closed: it undoes a deploy that is no longer kept (staging cascades). */
export async function removeInverse(db: Db, dmpackageid: number): Promise<void> {
  await db.deleteFrom('dmpackage').where('inverseof', '=', dmpackageid).execute();
}

/** Whether a package is an inverse package (downloadable as it is, never deployed). */
export const isInverse = (row: PackageRow): boolean => row.inverseof !== null;
