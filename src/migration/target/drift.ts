import type { Kysely } from 'kysely';
import { typedView, type DynamicDatabase } from '../../db/schema.js';
import { errors } from '../../errors.js';
import type { ObjectStructure } from '../../metadata/registry.js';
import { findByKeys } from '../../oslc/repository.js';
import { keyValuesOf } from '../../oslc/service.js';
import { EXPECTED_FIELD, recordDrifted } from '../drift.js';
import { keyText, stagedLines, type JsonRecord } from '../packages.js';
import type { Manifest } from '../transfer/package-file.js';

/**
 * The records whose row (and child rows, when the package's hashes cover them) here differ from the state the
 * source expected (docs/migration.md, "Drift guard"), by structure, in package order.
 */
export async function* driftedRecords(
  db: Kysely<DynamicDatabase>,
  manifest: Manifest,
  structures: readonly ObjectStructure[],
  dmpackageid: number,
): AsyncGenerator<{ structure: string; key: string }> {
  for (const [index, entry] of manifest.entries.entries()) {
    if (entry.expectedattributes === undefined) continue;
    const structure = structures[index]!;
    const object = structure.root.object;
    for await (const line of stagedLines(typedView(db), dmpackageid, entry.cfgdataorder)) {
      const record = JSON.parse(line) as JsonRecord;
      if (record[EXPECTED_FIELD] === undefined) continue;
      const { values } = keyValuesOf(object, record, {});
      const existing = await findByKeys(db, object, values);
      if (await recordDrifted(db, structure, entry, record, existing))
        yield { structure: entry.objectstructure, key: keyText(object, values) };
    }
  }
}

/** Refuses the deploy when a record here differs from the state the source expected (drift guard). */
export async function refuseDrift(
  db: Kysely<DynamicDatabase>,
  manifest: Manifest,
  structures: readonly ObjectStructure[],
  dmpackageid: number,
): Promise<void> {
  let first: { structure: string; key: string } | undefined;
  let count = 0;
  for await (const drifted of driftedRecords(db, manifest, structures, dmpackageid)) {
    count += 1;
    first ??= drifted;
  }
  if (first) throw errors.packageDrifted(first.structure, first.key, count);
}
