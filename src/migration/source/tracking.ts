import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../../db/schema.js';
import type { ObjectStructure, StructureNode } from '../../metadata/registry.js';
import { findAll, type Row } from '../../oslc/repository.js';

/*
 * Which writes a CHANGE definition tracks (docs/migration.md, "CHANGE tracking"): a write of a covered structure's
 * root, or of a row of any of its child collections, which marks the root record it belongs to as changed.
 */

/** Where an object sits in a structure an active CHANGE definition covers: the nodes from the root down to it. */
export interface TrackedNode {
  pkgdefname: string;
  structure: ObjectStructure;
  path: readonly StructureNode[];
}

/** Object name → every place it has in a covered structure (as root or as a child collection). */
export type TrackingMap = Map<string, TrackedNode[]>;

export function trackingMapOf(
  covered: ReadonlyArray<{ pkgdefname: string; structure: ObjectStructure }>,
): TrackingMap {
  const map: TrackingMap = new Map();
  const visit = (pkgdefname: string, structure: ObjectStructure, path: readonly StructureNode[]) => {
    const node = path.at(-1)!;
    const list = map.get(node.object.name) ?? [];
    list.push({ pkgdefname, structure, path });
    map.set(node.object.name, list);
    for (const child of node.children) visit(pkgdefname, structure, [...path, child]);
  };
  for (const { pkgdefname, structure } of covered) visit(pkgdefname, structure, [structure.root]);
  return map;
}

/**
 * The root rows a written row of `path`'s last node belongs to, found through the joins of the structure, level by
 * level (none when a join value is null).
 */
export async function rootRowsOf(
  db: Kysely<DynamicDatabase>,
  path: readonly StructureNode[],
  row: Readonly<Row>,
): Promise<Row[]> {
  let rows: Row[] = [row];
  for (let level = path.length - 1; level > 0 && rows.length > 0; level -= 1) {
    const node = path[level]!;
    const parent = path[level - 1]!;
    const parents = new Map<string, Row>();
    for (const child of rows) {
      const pairs = node.on.map(
        ([parentAttribute, childAttribute]) => [parentAttribute, child[childAttribute] ?? null] as const,
      );
      // A null matches nothing, but in a null-safe child's join (findAll compares it with `is null`).
      if (pairs.length === 0 || (!node.nullSafe && pairs.some(([, value]) => value === null))) continue;
      for (const found of await findAll(db, parent.object.table, pairs))
        parents.set(String(found[parent.object.uniqueId]), found);
    }
    rows = [...parents.values()];
  }
  return rows;
}
