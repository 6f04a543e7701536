import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';
import type { DomainCache } from '../domains/domain-cache.js';
import { errors } from '../errors.js';
import type { MetadataRegistry, ObjectMeta, ObjectStructure, StructureNode } from '../metadata/registry.js';
import type { AttributeDef, DomainLookup, LookupDef, TableLookup } from '../metadata/types.js';
import { parsed } from '../oslc/collection-params.js';
import {
  type ColumnRef,
  type Filter,
  parseWhere,
  planFilter,
  type Predicate,
  unknownAttribute,
} from '../oslc/query/index.js';
import { findAll, findByKeys, findByUniqueId, type Row } from '../oslc/repository.js';
import { decodeRestId } from '../oslc/rest-id.js';
import type { ResourceService } from '../oslc/service.js';
import { applyDefaults, attributeName } from '../oslc/validation.js';
import { toStored, type StoredValue } from '../oslc/values.js';

/** `zombie`: no record at all (list-tab filters); `newmbo`: a new, unsaved record with its defaults. */
export const ZOMBIE = 'zombie';
export const NEW_RECORD = 'newmbo';

/** The record a lookup is for, as addressed in the path: the root member, and optionally one of its children. */
export interface LookupPath {
  id: string;
  /** Child collection of the structure (`groupuser`) and the child's id, for the child path shape. */
  child?: { node: StructureNode; id: string };
}

/** What a lookup lists: members of `target`, narrowed by filters computed from the record. */
export interface LookupQuery {
  target: ObjectStructure;
  filters: Filter[];
}

/** Where the values of each kind of domain are listed (docs/lookups.md, "Which attribute lists what"). */
const DOMAIN_STRUCTURES: Readonly<Record<string, string>> = {
  SYNONYM: 'MXAPISYNONYMDOMAIN',
  ALN: 'MXAPIALNDOMAIN',
  NUMERIC: 'MXAPINUMERICDOMAIN',
};

/**
 * The lookup logic (`getlist~<attr>`): finds the record, sets the transient `setupdata` values on it, and turns the
 * attribute's declared lookup (src/metadata, `AttributeDef.lookup`) into a target structure and filters. It only
 * reads: the list itself is then an ordinary collection query of the target structure.
 */
export class LookupService {
  constructor(
    private readonly db: Kysely<DynamicDatabase>,
    private readonly metadata: MetadataRegistry,
    private readonly domains: DomainCache,
    private readonly resources: ResourceService,
  ) {}

  async query(
    structure: ObjectStructure,
    path: LookupPath,
    attributeText: string,
    setupData: string | undefined,
  ): Promise<LookupQuery> {
    const node = path.child?.node ?? structure.root;
    const object = node.object;
    const attribute = object.attributes.get(attributeText.toLowerCase());
    if (!attribute || attribute.writeOnly) throw unknownAttribute(attributeText, object.name);
    const lookup = lookupOf(attribute);
    if (!lookup) throw errors.noValueList(attribute.name, object.name);
    const changes = readSetupData(object, setupData);
    const record = await this.record(structure, path);
    Object.assign(record, changes);
    await this.deriveOrganization(object, record);
    return lookup.kind === 'domain'
      ? this.domainQuery(object, attribute, lookup, record)
      : this.tableQuery(object, lookup, record);
  }

  /** The stored values of the addressed record, an empty record (`zombie`) or a new one with defaults (`newmbo`). */
  private async record(structure: ObjectStructure, path: LookupPath): Promise<Row> {
    const root = structure.root.object;
    const parent = await this.member(structure, root, path.id, () =>
      this.resources
        .resolveId(structure, path.id)
        .then((uniqueId) => findByUniqueId(this.db, root, uniqueId)),
    );
    if (!path.child) return parent;
    const { node, id } = path.child;
    // A child, even a new or zombie one, belongs to its parent: the join values come from there.
    const inherited: Row = Object.fromEntries(
      node.on.map(([parentAttribute, childAttribute]) => [childAttribute, parent[parentAttribute] ?? null]),
    );
    const child = await this.member(structure, node.object, id, async () => {
      const row = await this.childRow(node.object, id);
      const belongs =
        row !== undefined &&
        node.on.every(
          ([, childAttribute]) => String(row[childAttribute]) === String(inherited[childAttribute]),
        );
      return belongs ? row : undefined;
    });
    return id === ZOMBIE || id === NEW_RECORD ? { ...child, ...inherited } : child;
  }

  private async member(
    structure: ObjectStructure,
    object: ObjectMeta,
    id: string,
    load: () => Promise<Row | undefined>,
  ): Promise<Row> {
    if (id === ZOMBIE) return {};
    if (id === NEW_RECORD) {
      const values: Row = {};
      applyDefaults(object, values);
      return values;
    }
    const row = await load();
    if (!row) throw errors.resourceNotFound(structure.name, id);
    return { ...row };
  }

  /** A child by numeric unique id, by the `<index>-<uniqueid>` end of its `localref`, or by a rest id of its keys. */
  private async childRow(object: ObjectMeta, id: string): Promise<Row | undefined> {
    const numeric = /^(?:\d{1,9}-)?(\d{1,15})$/.exec(id);
    if (numeric) return findByUniqueId(this.db, object, Number(numeric[1]));
    const keys = decodeRestId(id, object.keys.length);
    return keys ? findByKeys(this.db, object, keys) : undefined;
  }

  /** The organization follows the site, as on a write: `setupdata` may have moved the record to another site. */
  private async deriveOrganization(object: ObjectMeta, record: Row): Promise<void> {
    const { siteAttribute, orgAttribute } = object.def;
    const siteid = siteAttribute ? record[siteAttribute] : undefined;
    if (!orgAttribute || typeof siteid !== 'string') return;
    const site = await findByKeys(this.db, this.metadata.object('SITE'), [siteid]);
    if (site) record[orgAttribute] = site.orgid ?? null;
  }

  private async domainQuery(
    object: ObjectMeta,
    attribute: AttributeDef,
    lookup: DomainLookup,
    record: Row,
  ): Promise<LookupQuery> {
    const domainId = lookup.domainId ?? attribute.domainId;
    const domain = domainId
      ? await findByKeys(this.db, this.metadata.object('MAXDOMAIN'), [domainId])
      : undefined;
    const structureName = DOMAIN_STRUCTURES[String(domain?.domaintype)];
    if (!domainId || !structureName) throw errors.noValueList(attribute.name, object.name);
    const target = this.structure(structureName);
    const values = target.root.object;
    const siteid = stringOrNull(record.siteid);
    const orgid = stringOrNull(record.orgid);
    // Values of every site and organization, and those of the record's own (a record without one sees the shared).
    const filters: Filter[] = [
      all([equals(values, 'domainid', domainId)]),
      any([isNull(values, 'siteid'), ...(siteid === null ? [] : [equals(values, 'siteid', siteid)])]),
      any([isNull(values, 'orgid'), ...(orgid === null ? [] : [equals(values, 'orgid', orgid)])]),
    ];
    const current = record[attribute.name];
    if (lookup.transitions && current !== null && current !== undefined) {
      const snapshot = await this.domains.snapshot();
      const internal = snapshot.find(domainId, current, siteid, orgid)?.maxvalue;
      const allowed = internal === null || internal === undefined ? undefined : lookup.transitions[internal];
      if (allowed) {
        filters.push(
          all([
            { op: 'in', column: column(values, 'maxvalue'), values: [...allowed] },
            { op: 'ne', column: column(values, 'value'), value: String(current) },
          ]),
        );
      }
    }
    return { target, filters };
  }

  private async tableQuery(object: ObjectMeta, lookup: TableLookup, record: Row): Promise<LookupQuery> {
    const target = this.structure(lookup.structure);
    const listed = target.root.object;
    const filters: Filter[] = [];
    if (lookup.where !== undefined) {
      filters.push(planFilter(this.metadata, listed, parsed(parseWhere, lookup.where), false));
    }
    const predicates: Predicate[] = [];
    for (const [targetName, source] of lookup.match ?? []) {
      const value = await this.valueAt(object, record, source);
      if (value !== null) predicates.push(comparison('eq', listed, targetName, value));
    }
    for (const [targetName, source] of lookup.differ ?? []) {
      const value = record[source] ?? null;
      if (value !== null) predicates.push(comparison('ne', listed, targetName, value));
    }
    if (predicates.length > 0) filters.push(all(predicates));
    return { target, filters };
  }

  /** An attribute of the record, or one reached through its 1:1 relations (`site.organization.itemsetid`). */
  private async valueAt(object: ObjectMeta, record: Row, path: string): Promise<StoredValue> {
    const segments = path.split('.');
    let current = object;
    let row: Row = record;
    for (const name of segments.slice(0, -1)) {
      const relation = current.relations.get(name);
      if (!relation || relation.many) throw new Error(`Lookup path ${path}: ${name} is no 1:1 relation`);
      const pairs = relation.on.map(([from, to]) => [to, row[from] ?? null] as const);
      if (pairs.some(([, value]) => value === null)) return null;
      current = this.metadata.object(relation.object);
      const [next] = await findAll(this.db, current.table, pairs);
      if (!next) return null;
      row = next;
    }
    return row[segments[segments.length - 1]!] ?? null;
  }

  private structure(name: string): ObjectStructure {
    const structure = this.metadata.findObjectStructure(name);
    if (!structure) throw new Error(`Lookup target ${name} is no object structure`);
    return structure;
  }
}

/** An attribute's declared lookup; an attribute bound to a domain lists that domain without a declaration. */
export function lookupOf(attribute: AttributeDef): LookupDef | undefined {
  return attribute.lookup ?? (attribute.domainId ? { kind: 'domain' } : undefined);
}

/**
 * `setupdata={"siteid":"NASHUA"}`: attribute values converted as on a write (`toStored`), never stored. Refused
 * when it is not a JSON object, names an attribute the object does not have, or holds a value of the wrong type.
 */
export function readSetupData(object: ObjectMeta, text: string | undefined): Row {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw errors.setupDataNotObject(text);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw errors.setupDataNotObject(text);
  const values: Row = {};
  const objPath = object.name.toLowerCase();
  for (const [jsonName, raw] of Object.entries(value as Record<string, unknown>)) {
    const name = attributeName(jsonName);
    const attribute = object.attributes.get(name);
    if (!attribute || attribute.writeOnly) throw unknownAttribute(jsonName, object.name);
    const converted = toStored(attribute, raw);
    if (!converted.ok) {
      const shown = typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? String(raw));
      throw errors.wrongType(attribute.title, shown, converted.expected, name, objPath);
    }
    values[name] = converted.value;
  }
  return values;
}

function column(object: ObjectMeta, name: string): ColumnRef {
  const attribute = object.attributes.get(name);
  if (!attribute) throw new Error(`Lookup: ${object.name} has no attribute ${name}`);
  return { via: [], viaTables: [], object, attribute };
}

function equals(object: ObjectMeta, name: string, value: StoredValue): Predicate {
  return { op: 'eq', column: column(object, name), value };
}

function isNull(object: ObjectMeta, name: string): Predicate {
  return { op: 'isNull', column: column(object, name) };
}

/** A record's value compared with an attribute of the listed object, converted to that attribute's type first. */
function comparison(op: 'eq' | 'ne', object: ObjectMeta, name: string, value: StoredValue): Predicate {
  const ref = column(object, name);
  const converted = toStored(ref.attribute, value instanceof Date ? value.toISOString() : value);
  return { op, column: ref, value: converted.ok ? converted.value : String(value) };
}

const all = (predicates: readonly Predicate[]): Filter => ({ combine: 'and', predicates });
const any = (predicates: readonly Predicate[]): Filter => ({ combine: 'or', predicates });

const stringOrNull = (value: StoredValue | undefined): string | null =>
  typeof value === 'string' ? value : null;
