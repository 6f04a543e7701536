import type { AttributeDef, ChildDef, ObjectDef, ObjectStructureDef } from './types.js';

/**
 * Checks the whole metadata graph when a registry is built, so a wrong name stops start-up with the definition it is
 * in instead of failing the first request that reaches it: every relation, reference and child join names objects
 * and attributes that exist, every domain id is a known domain, every lookup lists an existing object structure.
 */
export class MetadataError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid metadata:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
    this.name = 'MetadataError';
  }
}

type Pairs = ReadonlyArray<readonly [string, string]>;

export function validateMetadata(
  objects: readonly ObjectDef[],
  structures: readonly ObjectStructureDef[],
  domainIds: ReadonlySet<string>,
): void {
  const problems: string[] = [];
  const byName = new Map<string, ObjectDef>();
  for (const def of objects) {
    if (byName.has(def.name)) problems.push(`object ${def.name}: defined twice`);
    byName.set(def.name, def);
  }
  const structureRoots = new Map<string, string>();
  for (const def of structures) {
    for (const name of [def.name, ...(def.aliases ?? [])]) {
      if (structureRoots.has(name.toUpperCase()))
        problems.push(`object structure ${def.name}: name ${name} taken`);
      structureRoots.set(name.toUpperCase(), def.root);
    }
  }
  const has = (object: ObjectDef | undefined, attribute: string) =>
    object?.attributes.some((candidate) => candidate.name === attribute) ?? false;
  /** Problems of join pairs (attribute of `from`, attribute of `to`), described by `what`. */
  const checkPairs = (what: string, from: ObjectDef, toName: string, pairs: Pairs) => {
    const to = byName.get(toName);
    if (!to) {
      problems.push(`${what}: unknown object ${toName}`);
      return;
    }
    if (pairs.length === 0) problems.push(`${what}: no join attributes`);
    for (const [left, right] of pairs) {
      if (!has(from, left)) problems.push(`${what}: ${from.name} has no attribute ${left}`);
      if (!has(to, right)) problems.push(`${what}: ${to.name} has no attribute ${right}`);
    }
  };
  /** A dotted path from an object: 1:1 relations, then an attribute (`site.organization.itemsetid`). */
  const checkPath = (what: string, from: ObjectDef, path: string) => {
    const segments = path.split('.');
    let current: ObjectDef | undefined = from;
    for (const segment of segments.slice(0, -1)) {
      const relation = current?.relations?.find((candidate) => candidate.name === segment && !candidate.many);
      if (!relation) {
        problems.push(`${what}: ${current?.name} has no 1:1 relation ${segment}`);
        return;
      }
      current = byName.get(relation.object);
    }
    const last = segments.at(-1)!;
    if (!has(current, last)) problems.push(`${what}: ${current?.name} has no attribute ${last}`);
  };
  const checkDomain = (what: string, domainId: string) => {
    if (!domainIds.has(domainId)) problems.push(`${what}: unknown domain ${domainId}`);
  };

  const checkAttribute = (def: ObjectDef, attribute: AttributeDef) => {
    const what = `object ${def.name} attribute ${attribute.name}`;
    if (attribute.domainId !== undefined) checkDomain(what, attribute.domainId);
    if (attribute.references) {
      checkPairs(`${what} references`, def, attribute.references.object, attribute.references.on);
    }
    const lookup = attribute.lookup;
    if (lookup?.kind === 'domain') {
      if (lookup.domainId !== undefined) checkDomain(`${what} lookup`, lookup.domainId);
      else if (attribute.domainId === undefined) problems.push(`${what} lookup: no domain to list`);
    }
    if (lookup?.kind === 'table') {
      const rootName = structureRoots.get(lookup.structure.toUpperCase());
      const listed = rootName === undefined ? undefined : byName.get(rootName);
      if (!listed) {
        problems.push(`${what} lookup: unknown object structure ${lookup.structure}`);
        return;
      }
      for (const [left, right] of lookup.match ?? []) {
        if (!has(listed, left))
          problems.push(`${what} lookup match: ${listed.name} has no attribute ${left}`);
        checkPath(`${what} lookup match`, def, right);
      }
      for (const [left, right] of lookup.differ ?? []) {
        if (!has(listed, left))
          problems.push(`${what} lookup differ: ${listed.name} has no attribute ${left}`);
        if (!has(def, right)) problems.push(`${what} lookup differ: ${def.name} has no attribute ${right}`);
      }
    }
  };

  for (const def of objects) {
    const names = new Set<string>();
    for (const attribute of def.attributes) {
      if (names.has(attribute.name))
        problems.push(`object ${def.name}: attribute ${attribute.name} defined twice`);
      names.add(attribute.name);
      checkAttribute(def, attribute);
    }
    const own = [def.uniqueId, ...def.keys, def.siteAttribute, def.orgAttribute];
    for (const name of own) {
      if (name !== undefined && !names.has(name)) problems.push(`object ${def.name}: no attribute ${name}`);
    }
    if (def.statusHistory !== undefined && !byName.has(def.statusHistory)) {
      problems.push(`object ${def.name}: unknown status history object ${def.statusHistory}`);
    }
    for (const relation of def.relations ?? []) {
      checkPairs(`object ${def.name} relation ${relation.name}`, def, relation.object, relation.on);
    }
  }

  const checkChildren = (structure: string, parent: ObjectDef, children: readonly ChildDef[]) => {
    for (const child of children) {
      const what = `object structure ${structure} child ${child.name}`;
      checkPairs(what, parent, child.object, child.on);
      const object = byName.get(child.object);
      for (const name of Object.keys(child.values ?? {})) {
        if (object && !has(object, name)) problems.push(`${what}: ${object.name} has no attribute ${name}`);
      }
      if (object) checkChildren(structure, object, child.children ?? []);
    }
  };
  for (const def of structures) {
    const root = byName.get(def.root);
    if (!root) problems.push(`object structure ${def.name}: unknown root object ${def.root}`);
    else checkChildren(def.name, root, def.children ?? []);
  }

  if (problems.length > 0) throw new MetadataError(problems);
}
