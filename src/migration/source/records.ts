import type { Kysely } from 'kysely';
import { dynamicView, type DynamicDatabase } from '../../db/schema.js';
import { errors } from '../../errors.js';
import type { ObjectMeta, ObjectStructure, StructureNode } from '../../metadata/registry.js';
import { DOCLINKS_MEMBER } from '../attachments/carried.js';
import {
  QueryParseError,
  parseOrderBy,
  parseSelect,
  parseWhere,
  type MemberRecord,
  type QueryPlan,
} from '../../oslc/query/index.js';
import { findByKeys } from '../../oslc/repository.js';
import type { ResourceService } from '../../oslc/service.js';
import type { StoredValue } from '../../oslc/values.js';
import type { MigrationContext } from '../context.js';
import { EXPECTED_FIELD, childDriftAttributes, childRowsOf, driftAttributes, recordHash } from '../drift.js';
import { DELETE_ACTION, jsonValue, type JsonRecord } from '../packages.js';
import { carried } from '../properties.js';
import * as repository from '../repository.js';

/**
 * The plan of a SNAPSHOT structure's records: every attribute, in unique id order, matching its where clause. A
 * clause that does not parse is the client's error (400 BMXAA8744E), never a failure of the server.
 */
export function snapshotPlan(
  resources: Pick<ResourceService, 'plan'>,
  structure: ObjectStructure,
  where: string | null,
): QueryPlan {
  const object = structure.root.object;
  let clause;
  try {
    clause = where !== null && where.trim() !== '' ? parseWhere(where) : undefined;
  } catch (error) {
    if (error instanceof QueryParseError)
      throw errors.queryNotParsed(`The where clause of ${structure.name}: ${error.message}`);
    throw error;
  }
  return resources.plan(structure, {
    select: parseSelect(selectAll(structure.root)),
    orderBy: parseOrderBy(`+${object.uniqueId}`),
    ...(clause && { where: clause }),
  });
}

/** `*` and every child collection, nested: the whole record as the package carries it. */
function selectAll(node: StructureNode): string {
  return ['*', ...node.children.map((child) => `${child.name}{${selectAll(child)}}`)].join(',');
}

/**
 * A member as the package carries it: what a client may write, no unique ids, stamps or derived values. Nulls are
 * carried: a value cleared here is cleared on the target (docs/migration.md).
 */
function exportRecord(member: MemberRecord): JsonRecord {
  const object = member.node.object;
  const record: JsonRecord = {};
  for (const attribute of object.attributes.values()) {
    if (attribute.generated || attribute.writeOnly || attribute.name === object.uniqueId) continue;
    if (!(attribute.name in member.values)) continue;
    const value = member.values[attribute.name] ?? null;
    record[attribute.name] = value === null ? null : jsonValue(value);
  }
  for (const [name, children] of member.children) record[name] = children.map(exportRecord);
  return record;
}

/**
 * The records of a SNAPSHOT structure matching its where clause, a page at a time in unique id order, each page
 * after the last unique id of the one before (an offset would read every earlier record again: quadratic).
 */
export async function* snapshotLines(
  resources: Pick<ResourceService, 'plan' | 'page'>,
  structure: ObjectStructure,
  where: string | null,
  pageSize: number,
  /** The attachments of a page's records: a reader of each record's, which its line carries (src/migration/attachments). */
  attachmentsOf?: (
    object: ObjectMeta,
    uniqueIds: number[],
  ) => Promise<(uniqueId: number) => Promise<JsonRecord[] | undefined>>,
): AsyncGenerator<string> {
  const object = structure.root.object;
  const uniqueId = object.attributes.get(object.uniqueId)!;
  const plan = snapshotPlan(resources, structure, where);
  let after: number | undefined;
  for (;;) {
    const page = await resources.page({
      plan,
      window: { limit: pageSize, offset: 0 },
      ...(after !== undefined && {
        extraFilters: [
          {
            combine: 'and',
            predicates: [
              { op: 'gt', column: { via: [], viaTables: [], object, attribute: uniqueId }, value: after },
            ],
          },
        ],
      }),
      withCount: false,
      reader: null,
    });
    const attachments = await attachmentsOf?.(
      object,
      page.members.map((member) => Number(member.values[object.uniqueId])),
    );
    for (const member of page.members) {
      if (!carried(structure, member)) continue;
      const record = exportRecord(member);
      const doclinks = await attachments?.(Number(member.values[object.uniqueId]));
      if (doclinks) record[DOCLINKS_MEMBER] = doclinks;
      yield JSON.stringify(record);
    }
    if (!page.hasMore || page.members.length === 0) return;
    after = Number(page.members.at(-1)!.values[object.uniqueId]);
  }
}

/**
 * The records a CHANGE definition tracked: each changed record as it is now, or its deletion; each with the drift
 * hash the target's row is expected to have (docs/migration.md, "Drift guard"): the hash before the record's first
 * write since `periodStart`, or, for a record not written since, its hash now (the previous package carried it so).
 */
export async function* changeLines(
  context: Pick<MigrationContext, 'db' | 'storage' | 'resources'>,
  pkgdefname: string,
  structure: ObjectStructure,
  periodStart: number,
): AsyncGenerator<string> {
  const { resources } = context;
  const object = structure.root.object;
  const names = driftAttributes(object);
  const plan = resources.plan(structure, { select: parseSelect(selectAll(structure.root)) });
  const changes = await repository.trackedChanges(context.db, pkgdefname, structure.name, periodStart);
  const dynamicDb: Kysely<DynamicDatabase> = dynamicView(context.storage.db);
  for (const change of changes) {
    const keys = JSON.parse(change.keyvalues) as StoredValue[];
    const keyRecord = Object.fromEntries(object.keys.map((key, index) => [key, keys[index] ?? null]));
    const row = change.operation === 'delete' ? undefined : await findByKeys(dynamicDb, object, keys);
    // Added in the period (no before hash), or deleted before it: nothing the target's row must match.
    const children = childDriftAttributes(structure);
    const expected = change.inperiod
      ? change.firstbefore
      : row
        ? recordHash(structure, names, children, row, await childRowsOf(dynamicDb, structure, children, row))
        : null;
    const guard = expected === null ? {} : { [EXPECTED_FIELD]: expected };
    if (!row) {
      yield JSON.stringify({ ...keyRecord, _action: DELETE_ACTION, ...guard });
      continue;
    }
    const page = await resources.page({
      plan,
      window: { limit: 1, offset: 0 },
      extraFilters: [resources.byUniqueId(structure, Number(row[object.uniqueId]))],
      withCount: false,
      reader: null,
    });
    const member = page.members[0];
    if (member) yield JSON.stringify({ ...exportRecord(member), ...guard });
  }
}
