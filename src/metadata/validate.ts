import type { AttributeDef, ChildDef, ObjectDef, ObjectStructureDef } from './types.js';

type TableLookup = Extract<NonNullable<AttributeDef['lookup']>, { kind: 'table' }>;

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
  const check = new MetadataCheck(objects, structures, domainIds);
  for (const def of objects) check.object(def);
  for (const def of structures) check.structure(def);
  if (check.problems.length > 0) throw new MetadataError(check.problems);
}

/** One pass over the graph: the objects and structures by name, and the problems found so far, in order. */
class MetadataCheck {
  readonly problems: string[] = [];
  private readonly byName = new Map<string, ObjectDef>();
  /** Root object of each structure, by its name and aliases in upper case. */
  private readonly structureRoots = new Map<string, string>();

  constructor(
    objects: readonly ObjectDef[],
    structures: readonly ObjectStructureDef[],
    private readonly domainIds: ReadonlySet<string>,
  ) {
    for (const def of objects) {
      if (this.byName.has(def.name)) this.problems.push(`object ${def.name}: defined twice`);
      this.byName.set(def.name, def);
    }
    for (const def of structures) {
      for (const name of [def.name, ...(def.aliases ?? [])]) {
        if (this.structureRoots.has(name.toUpperCase()))
          this.problems.push(`object structure ${def.name}: name ${name} taken`);
        this.structureRoots.set(name.toUpperCase(), def.root);
      }
    }
  }

  object(def: ObjectDef): void {
    const names = new Set<string>();
    for (const attribute of def.attributes) {
      if (names.has(attribute.name))
        this.problems.push(`object ${def.name}: attribute ${attribute.name} defined twice`);
      names.add(attribute.name);
      this.attribute(def, attribute);
    }
    const own = [def.uniqueId, ...def.keys, def.siteAttribute, def.orgAttribute];
    for (const name of own) {
      if (name !== undefined && !names.has(name))
        this.problems.push(`object ${def.name}: no attribute ${name}`);
    }
    if (def.statusHistory !== undefined && !this.byName.has(def.statusHistory)) {
      this.problems.push(`object ${def.name}: unknown status history object ${def.statusHistory}`);
    }
    for (const relation of def.relations ?? []) {
      this.pairs(`object ${def.name} relation ${relation.name}`, def, relation.object, relation.on);
    }
  }

  structure(def: ObjectStructureDef): void {
    const root = this.byName.get(def.root);
    if (!root) this.problems.push(`object structure ${def.name}: unknown root object ${def.root}`);
    else this.children(def.name, root, def.children ?? []);
  }

  private has(object: ObjectDef | undefined, attribute: string): boolean {
    return object?.attributes.some((candidate) => candidate.name === attribute) ?? false;
  }

  /** Problems of join pairs (attribute of `from`, attribute of `to`), described by `what`. */
  private pairs(what: string, from: ObjectDef, toName: string, pairs: Pairs): void {
    const to = this.byName.get(toName);
    if (!to) {
      this.problems.push(`${what}: unknown object ${toName}`);
      return;
    }
    if (pairs.length === 0) this.problems.push(`${what}: no join attributes`);
    for (const [left, right] of pairs) {
      if (!this.has(from, left)) this.problems.push(`${what}: ${from.name} has no attribute ${left}`);
      if (!this.has(to, right)) this.problems.push(`${what}: ${to.name} has no attribute ${right}`);
    }
  }

  /** A dotted path from an object: 1:1 relations, then an attribute (`site.organization.itemsetid`). */
  private path(what: string, from: ObjectDef, path: string): void {
    const segments = path.split('.');
    let current: ObjectDef | undefined = from;
    for (const segment of segments.slice(0, -1)) {
      const relation = current?.relations?.find((candidate) => candidate.name === segment && !candidate.many);
      if (!relation) {
        this.problems.push(`${what}: ${current?.name} has no 1:1 relation ${segment}`);
        return;
      }
      current = this.byName.get(relation.object);
    }
    const last = segments.at(-1)!;
    if (!this.has(current, last)) this.problems.push(`${what}: ${current?.name} has no attribute ${last}`);
  }

  private domain(what: string, domainId: string): void {
    if (!this.domainIds.has(domainId)) this.problems.push(`${what}: unknown domain ${domainId}`);
  }

  private attribute(def: ObjectDef, attribute: AttributeDef): void {
    const what = `object ${def.name} attribute ${attribute.name}`;
    if (attribute.domainId !== undefined) this.domain(what, attribute.domainId);
    if (attribute.references) {
      this.pairs(`${what} references`, def, attribute.references.object, attribute.references.on);
    }
    const lookup = attribute.lookup;
    if (lookup?.kind === 'domain') {
      if (lookup.domainId !== undefined) this.domain(`${what} lookup`, lookup.domainId);
      else if (attribute.domainId === undefined) this.problems.push(`${what} lookup: no domain to list`);
    }
    if (lookup?.kind === 'table') this.tableLookup(what, def, lookup);
  }

  /** A lookup that lists the members of an object structure, matched to (or differing from) the object's values. */
  private tableLookup(what: string, def: ObjectDef, lookup: TableLookup): void {
    const rootName = this.structureRoots.get(lookup.structure.toUpperCase());
    const listed = rootName === undefined ? undefined : this.byName.get(rootName);
    if (!listed) {
      this.problems.push(`${what} lookup: unknown object structure ${lookup.structure}`);
      return;
    }
    for (const [left, right] of lookup.match ?? []) {
      if (!this.has(listed, left))
        this.problems.push(`${what} lookup match: ${listed.name} has no attribute ${left}`);
      this.path(`${what} lookup match`, def, right);
    }
    for (const [left, right] of lookup.differ ?? []) {
      if (!this.has(listed, left))
        this.problems.push(`${what} lookup differ: ${listed.name} has no attribute ${left}`);
      if (!this.has(def, right))
        this.problems.push(`${what} lookup differ: ${def.name} has no attribute ${right}`);
    }
  }

  private children(structure: string, parent: ObjectDef, children: readonly ChildDef[]): void {
    for (const child of children) {
      const what = `object structure ${structure} child ${child.name}`;
      this.pairs(what, parent, child.object, child.on);
      const object = this.byName.get(child.object);
      for (const name of Object.keys(child.values ?? {})) {
        if (object && !this.has(object, name))
          this.problems.push(`${what}: ${object.name} has no attribute ${name}`);
      }
      if (object) this.children(structure, object, child.children ?? []);
    }
  }
}
