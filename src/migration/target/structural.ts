import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { AttributeChange } from '../../dbconfig/service.js';
import type { ObjectStructure } from '../../metadata/registry.js';
import type { MigrationContext } from '../context.js';
import type { Manifest } from '../transfer/package-file.js';

/** The configuration changes a package needs on this deployment: its custom attributes that are missing or differ. */
export async function structuralChanges(
  context: Pick<MigrationContext, 'dbconfig'>,
  manifest: Manifest,
): Promise<AttributeChange[]> {
  const wanted = manifest.attributes ?? [];
  if (wanted.length === 0) return [];
  const present = new Map(
    (await context.dbconfig.listCustomAttributes()).map((row) => [
      `${row.objectname}.${row.attributename}`,
      row,
    ]),
  );
  const changes: AttributeChange[] = [];
  for (const attribute of wanted) {
    const current = present.get(`${attribute.objectname}.${attribute.attributename}`);
    const same =
      current !== undefined &&
      current.maxtype === attribute.maxtype &&
      current.length === attribute.length &&
      current.scale === attribute.scale &&
      current.required === attribute.required &&
      current.defaultvalue === attribute.defaultvalue &&
      current.domainid === attribute.domainid &&
      current.title === attribute.title;
    if (!same) changes.push({ ...attribute, changetype: current ? 'CHANGE' : 'ADD' });
  }
  return changes;
}

/**
 * The package's configuration applied in the writing transaction (a deploy's, or a preview's it rolls back): it
 * commits only with the records, which are written against the metadata this transaction sees, the attributes it
 * adds included. Answers the structures as that metadata has them.
 */
export async function applyStructural(
  context: Pick<MigrationContext, 'dbconfig' | 'origin'>,
  structures: readonly ObjectStructure[],
  structural: readonly AttributeChange[],
  trx: Kysely<Database>,
  userid: string,
): Promise<readonly ObjectStructure[]> {
  if (structural.length === 0) return structures;
  await context.dbconfig.stageChanges(structural, userid, { transaction: trx });
  await context.dbconfig.applyPending(userid, { transaction: trx, origin: context.origin });
  const metadata = await context.dbconfig.metadataWithin(trx);
  return structures.map((structure) => metadata.findObjectStructure(structure.name)!);
}
