import { systemDomainIds } from '../db/migrations/0002-system-domains.js';
import { packageDomainIds } from '../db/migrations/0013-migration-packages.js';
import { serviceRequestDomainIds } from '../db/migrations/0017-service-requests.js';
import { worklogDomainIds } from '../db/migrations/0026-worklog.js';
import { baseObjects } from './objects/index.js';
import { baseObjectStructures } from './object-structures.js';
import type {
  AttributeDef,
  ChildDef,
  ObjectDef,
  ObjectStructureDef,
  RelationDef,
  SavedQueryDef,
} from './types.js';
import { validateMetadata } from './validate.js';

/** A business object with its attributes and relations indexed by name. */
export interface ObjectMeta {
  def: ObjectDef;
  name: string;
  table: string;
  uniqueId: string;
  keys: readonly string[];
  attributes: ReadonlyMap<string, AttributeDef>;
  relations: ReadonlyMap<string, RelationDef>;
}

/** One node of an object structure: the root, or a child collection under its parent. */
export interface StructureNode {
  /** JSON name of the node: the child collection name, or the root object's name in lower case. */
  name: string;
  object: ObjectMeta;
  /** Join to the parent node (empty on the root). */
  on: ReadonlyArray<readonly [string, string]>;
  children: readonly StructureNode[];
  /** Values every row of this child collection gets on insert (see ChildDef.values). */
  values?: Readonly<Record<string, string | number | boolean>>;
  /** Whether a null join value matches a null (see ChildDef.nullSafe). */
  nullSafe?: boolean;
}

export interface ObjectStructure {
  name: string;
  description: string;
  root: StructureNode;
  savedQueries: readonly SavedQueryDef[];
  /** Administrators only (ObjectStructureDef.adminOnly). */
  adminOnly?: boolean;
}

/**
 * The metadata of one running service. It starts from the base definitions and can grow at run time
 * (`addAttribute`), so structural changes applied under admin mode reach every reader of the registry.
 *
 * Building it checks the whole graph (src/metadata/validate.ts) and throws a `MetadataError` naming every bad
 * definition, so the service does not start on metadata a request would trip over. Domain ids are checked against
 * the domains the migrations create (`domainIds`).
 */
export class MetadataRegistry {
  private readonly objects = new Map<string, ObjectMeta>();
  private readonly structures = new Map<string, ObjectStructure>();
  private readonly structureDefs: ObjectStructureDef[] = [];
  /** Each object's definition as built, before any custom attribute (see setCustomAttributes). */
  private readonly baseDefs = new Map<string, ObjectDef>();
  /** The custom attributes in force, by object, as last set. */
  private readonly customs = new Map<string, readonly AttributeDef[]>();
  private changes = 0;
  private readonly domainIds: ReadonlySet<string>;

  constructor(
    objects: readonly ObjectDef[] = baseObjects,
    structures: readonly ObjectStructureDef[] = baseObjectStructures,
    domainIds: Iterable<string> = [
      ...systemDomainIds,
      ...packageDomainIds,
      ...serviceRequestDomainIds,
      ...worklogDomainIds,
    ],
  ) {
    this.domainIds = new Set(domainIds);
    validateMetadata(objects, structures, this.domainIds);
    for (const def of objects) {
      this.objects.set(def.name, indexObject(def));
      this.baseDefs.set(def.name, def);
    }
    for (const def of structures) this.addObjectStructure(def);
  }

  object(name: string): ObjectMeta {
    const meta = this.objects.get(name.toUpperCase());
    if (!meta) throw new Error(`Unknown object ${name}`);
    return meta;
  }

  /** Finds an object structure by name or alias, in any case. */
  findObjectStructure(name: string): ObjectStructure | undefined {
    return this.structures.get(name.toUpperCase());
  }

  objectStructures(): ObjectStructure[] {
    return this.structureDefs.map((def) => this.structures.get(def.name)!);
  }

  /** The other names a structure is served under (`MXWO` for MXAPIWODETAIL), upper case. */
  aliasesOf(structure: ObjectStructure): readonly string[] {
    return this.structureDefs.find((def) => def.name === structure.name)?.aliases ?? [];
  }

  /** Grows with every change of the metadata: whatever was derived from it under another version is stale. */
  get version(): number {
    return this.changes;
  }

  addObjectStructure(def: ObjectStructureDef): void {
    this.changes += 1;
    const structure: ObjectStructure = {
      name: def.name,
      description: def.description,
      root: this.node(def.root.toLowerCase(), def.root, [], def.children ?? [], undefined),
      savedQueries: def.savedQueries ?? [],
      adminOnly: def.adminOnly === true,
    };
    this.structureDefs.push(def);
    for (const name of [def.name, ...(def.aliases ?? [])]) this.structures.set(name.toUpperCase(), structure);
  }

  /** Adds an attribute to an object at run time; every structure using the object sees it at once. */
  addAttribute(objectName: string, attribute: AttributeDef): void {
    this.changes += 1;
    const meta = this.object(objectName);
    const def: ObjectDef = { ...meta.def, attributes: [...meta.def.attributes, attribute] };
    const updated = indexObject(def);
    Object.assign(meta, updated);
  }

  /**
   * Sets the custom attributes of objects (docs/dbconfig.md): each named object gets its base attributes followed by
   * the given ones, which replace whatever custom attributes it had; an object given no attributes loses them all.
   * Structures using the object see the change at once, and the version rises only when something changed, so
   * plans and caches derived from the metadata are rebuilt exactly when they are stale.
   */
  setCustomAttributes(byObject: ReadonlyMap<string, readonly AttributeDef[]>): void {
    const names = new Set([...this.customs.keys(), ...byObject.keys()]);
    let changed = false;
    for (const name of names) {
      const attributes = byObject.get(name) ?? [];
      const current = this.customs.get(name) ?? [];
      if (JSON.stringify(current) === JSON.stringify(attributes)) continue;
      const base = this.baseDefs.get(name);
      if (!base) throw new Error(`Unknown object ${name}`);
      const meta = this.object(name);
      Object.assign(meta, indexObject({ ...base, attributes: [...base.attributes, ...attributes] }));
      if (attributes.length > 0) this.customs.set(name, attributes);
      else this.customs.delete(name);
      changed = true;
    }
    if (changed) this.changes += 1;
  }

  /**
   * A registry of its own with the same objects and structures and the given custom attributes, this one untouched:
   * what one transaction sees after applying a configuration that is not committed yet (a migration package's deploy
   * writes the values of the attributes it adds, docs/migration.md), while every other reader keeps the metadata
   * in force.
   */
  withCustomAttributes(byObject: ReadonlyMap<string, readonly AttributeDef[]>): MetadataRegistry {
    const view = new MetadataRegistry([...this.baseDefs.values()], this.structureDefs, this.domainIds);
    view.setCustomAttributes(byObject);
    return view;
  }

  /** The custom attributes in force on an object (empty when it has none). */
  customAttributes(objectName: string): readonly AttributeDef[] {
    return this.customs.get(objectName.toUpperCase()) ?? [];
  }

  private node(
    name: string,
    objectName: string,
    on: ReadonlyArray<readonly [string, string]>,
    children: readonly ChildDef[],
    values: ChildDef['values'],
    nullSafe?: boolean,
  ): StructureNode {
    return {
      name,
      object: this.object(objectName),
      on,
      children: children.map((child) =>
        this.node(child.name, child.object, child.on, child.children ?? [], child.values, child.nullSafe),
      ),
      ...(values && { values }),
      ...(nullSafe && { nullSafe }),
    };
  }
}

function indexObject(def: ObjectDef): ObjectMeta {
  return {
    def,
    name: def.name,
    table: def.table,
    uniqueId: def.uniqueId,
    keys: def.keys,
    attributes: new Map(def.attributes.map((attribute) => [attribute.name, attribute])),
    relations: new Map((def.relations ?? []).map((relation) => [relation.name, relation])),
  };
}
