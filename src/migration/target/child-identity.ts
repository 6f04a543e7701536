import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../../db/schema.js';
import type { ObjectStructure, StructureNode } from '../../metadata/registry.js';
import type { BatchRecord } from '../../oslc/batch-writer.js';
import type { ColumnLimits } from '../../oslc/column-limits.js';
import type { Row } from '../../oslc/repository.js';
import { keyText, rootRows, rowExporter } from '../backout/records.js';
import { childRows } from '../backout/repository.js';
import type { JsonRecord } from '../packages.js';

/*
 * Children keyed by their unique id (work logs) on the target (docs/migration.md, "Work logs and attachments"): a
 * package cannot carry their key, which differs between deployments, so the write path would add every carried
 * child again on each deploy. Before a chunk is written, each such child the package carries is given the unique id
 * of a stored child of the same record that holds the same values (each stored child taken once); only the others
 * are added (merged, the matched ones are not sent at all; replaced, they keep their stored rows). A second deploy of the same package then finds every child stored and leaves the record unchanged.
 */

/** The direct child collections whose object's only key is its unique id. */
function identityKeyed(structure: ObjectStructure): StructureNode[] {
  return structure.root.children.filter(
    (child) => child.object.keys.length === 1 && child.object.keys[0] === child.object.uniqueId,
  );
}

function carriedEntries(body: JsonRecord, child: StructureNode): JsonRecord[] {
  const entries = body[child.name];
  if (!Array.isArray(entries)) return [];
  return (entries as JsonRecord[]).filter(
    (entry) =>
      entry !== null &&
      typeof entry === 'object' &&
      (entry[child.object.uniqueId] === undefined || entry[child.object.uniqueId] === null),
  );
}

/**
 * Gives the carried children of the chunk's records the unique ids of the stored children they equal. Reads nothing
 * when no record carries such a child: one statement for the records' rows and one per child collection otherwise.
 */
export async function matchStoredChildren(
  db: Kysely<DynamicDatabase>,
  limits: () => Promise<ColumnLimits>,
  structure: ObjectStructure,
  records: readonly BatchRecord[],
  merge: boolean,
): Promise<void> {
  const children = identityKeyed(structure);
  const carrying = records.filter(
    (record) => !record.delete && children.some((child) => carriedEntries(record.body, child).length > 0),
  );
  if (carrying.length === 0) return;
  const object = structure.root.object;
  const parents = await rootRows(
    db,
    await limits(),
    object,
    carrying.map((record) => record.keys),
  );
  if (parents.length === 0) return;
  const parentByKey = new Map(
    parents.map((row) => [keyText(object.keys.map((key) => row[key] ?? null)), row]),
  );
  for (const child of children) {
    const stored = await childRows(db, await limits(), child, parents);
    const byParent = new Map<string, Row[]>();
    for (const row of stored) {
      const key = keyText(child.on.map(([, childAttribute]) => row[childAttribute] ?? null));
      byParent.set(key, [...(byParent.get(key) ?? []), row]);
    }
    const exportOf = rowExporter(child.object);
    for (const record of carrying) {
      const parent = parentByKey.get(keyText(record.keys));
      if (!parent) continue;
      const key = keyText(child.on.map(([parentAttribute]) => parent[parentAttribute] ?? null));
      const candidates = (byParent.get(key) ?? []).map((row) => ({ row, values: exportOf(row) }));
      const matched = new Set<JsonRecord>();
      for (const entry of carriedEntries(record.body, child)) {
        const at = candidates.findIndex(({ values }) => sameCarriedValues(entry, values));
        if (at < 0) continue;
        entry[child.object.uniqueId] = Number(candidates[at]!.row[child.object.uniqueId]);
        candidates.splice(at, 1);
        matched.add(entry);
      }
      // Merged (AddChange), a child equal to its stored one has nothing to write: it is left out, so that a record
      // whose children are all there is unchanged (no write, no stamp, no modifier on its logs).
      if (merge && matched.size > 0) leaveOut(record.body, child.name, matched);
    }
  }
}

function leaveOut(body: JsonRecord, name: string, matched: ReadonlySet<JsonRecord>): void {
  const kept = (body[name] as JsonRecord[]).filter((entry) => !matched.has(entry));
  if (kept.length > 0) body[name] = kept;
  else delete body[name];
}

/** Whether every attribute a carried entry names holds the stored child's value (both as a package writes them). */
function sameCarriedValues(entry: JsonRecord, stored: JsonRecord): boolean {
  for (const [name, value] of Object.entries(entry)) {
    if (!(name in stored)) continue;
    if (JSON.stringify(value ?? null) !== JSON.stringify(stored[name] ?? null)) return false;
  }
  return true;
}
