import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import { errors } from '../errors.js';
import type { ObjectStructure, StructureNode } from '../metadata/registry.js';
import type { ColumnRef, Filter } from './query/index.js';
import * as repository from './repository.js';
import type { Row } from './repository.js';

/**
 * Addresses below a resource (docs/compatibility.md, "Child collections"): `<child>` names a child collection,
 * `<child>/<n>-<unique id>` one of its members (a `localref`), and so on down the object structure.
 */
export interface ChildStep {
  /** Child collection name as written (matched without regard to case). */
  name: string;
  /** Unique id of the member, when the step names one. */
  member?: number;
}

export interface ChildTarget {
  /** The addressed child node of the object structure. */
  node: StructureNode;
  /** The row the addressed collection hangs under (the resource, or a child member above). */
  parent: Row;
  parentNode: StructureNode;
  /** The addressed member; absent when the address is the collection. */
  member?: Row;
}

const MEMBER_SEGMENT = /^\d{1,9}-(\d{1,15})$/;
const MAX_UNIQUE_ID = 2_147_483_647;

/** The steps of a child address, or undefined when it is not one (an empty segment, a member without collection). */
export function parseChildPath(text: string): ChildStep[] | undefined {
  const segments = text.replace(/\/+$/, '').split('/');
  const steps: ChildStep[] = [];
  for (let index = 0; index < segments.length; index += 2) {
    const name = segments[index]!;
    if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) return undefined;
    const memberText = segments[index + 1];
    if (memberText === undefined) {
      steps.push({ name: name.toLowerCase() });
      continue;
    }
    const member = MEMBER_SEGMENT.exec(memberText);
    // Unique ids are 32-bit columns: a larger number names no row (and must not reach the database as one).
    if (!member || Number(member[1]) > MAX_UNIQUE_ID) return undefined;
    steps.push({ name: name.toLowerCase(), member: Number(member[1]) });
  }
  return steps.length > 0 ? steps : undefined;
}

/** The attribute values a child takes from its parent (the join of the object structure). */
export function inheritedValues(node: StructureNode, parent: Row): Row {
  return Object.fromEntries(node.on.map(([from, to]) => [to, parent[from] ?? null]));
}

/**
 * Walks a child address from the resource down; a name that is no child of the node, or a member that does not
 * hang under the row above, is "not found".
 */
export async function resolveChildPath(
  db: Kysely<DynamicDatabase>,
  structure: ObjectStructure,
  id: string,
  uniqueId: number,
  steps: readonly ChildStep[],
): Promise<ChildTarget> {
  let parentNode = structure.root;
  let parent = await repository.findByUniqueId(db, parentNode.object, uniqueId);
  if (!parent) throw errors.resourceNotFound(structure.name, id);
  for (const [index, step] of steps.entries()) {
    const node = parentNode.children.find((child) => child.name.toLowerCase() === step.name);
    // The resource exists: a name the structure lacks must not read as a missing record (docs/errors.md).
    if (!node) throw errors.unknownChildCollection(structure.name, step.name, id);
    const last = index === steps.length - 1;
    if (step.member === undefined) {
      if (!last) throw errors.resourceNotFound(structure.name, `${id}/${step.name}`);
      return { node, parent, parentNode };
    }
    const member = await repository.findByUniqueId(db, node.object, step.member);
    const inherited = inheritedValues(node, parent);
    if (
      !member ||
      !Object.entries(inherited).every(([name, value]) => value !== null && member[name] === value)
    ) {
      throw errors.resourceNotFound(node.object.name, String(step.member));
    }
    if (last) return { node, parent, parentNode, member };
    parentNode = node;
    parent = member;
  }
  throw errors.resourceNotFound(structure.name, id);
}

/** The filter that scopes a child collection to the rows of one parent (the collection query's own filter). */
export function childScope(node: StructureNode, parent: Row): Filter {
  return {
    combine: 'and',
    predicates: node.on.map(([from, to]) => {
      const column: ColumnRef = {
        via: [],
        viaTables: [],
        object: node.object,
        attribute: node.object.attributes.get(to)!,
      };
      const value = parent[from] ?? null;
      // A null join value of a null-safe child matches a null; otherwise `=` matches nothing, as in the join.
      if (value === null && node.nullSafe) return { op: 'isNull' as const, column };
      return { op: 'eq' as const, column, value };
    }),
  };
}

/** Filter on a node's unique id. */
export function uniqueIdFilter(node: StructureNode, uniqueId: number): Filter {
  const object = node.object;
  const column: ColumnRef = {
    via: [],
    viaTables: [],
    object,
    attribute: object.attributes.get(object.uniqueId)!,
  };
  return { combine: 'and', predicates: [{ op: 'eq', column, value: uniqueId }] };
}

const structuresByNode = new WeakMap<StructureNode, ObjectStructure>();

/**
 * A child collection as an object structure of its own (its node as root), so that it is queried by the same
 * parse, plan, compile and execute stages as any collection. One per node, kept: plans are cached by its name.
 */
export function childStructure(
  structure: ObjectStructure,
  node: StructureNode,
  path: string,
): ObjectStructure {
  let child = structuresByNode.get(node);
  if (!child) {
    child = {
      name: `${structure.name}/${path}`,
      description: structure.description,
      root: node,
      savedQueries: [],
    };
    structuresByNode.set(node, child);
  }
  return child;
}
