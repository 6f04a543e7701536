import type { DomainSnapshot } from '../domains/domain-cache.js';
import { collectionHref, resourceHref, type Links } from '../http/links.js';
import type { ObjectMeta } from '../metadata/registry.js';
import type { MemberRecord, NodePlan, SelectedAttribute } from './query/index.js';
import { childAnchor, encodeRestId } from './rest-id.js';
import { toJson, type StoredValue } from './values.js';

/**
 * Response stage: members and collections as the deployed systems write them (docs/compatibility.md):
 * lean JSON, or namespaced OSLC JSON (`spi:`, `rdf:`, `oslc:`) when lean is off.
 */
export interface ResponseOptions {
  links: Links;
  /** Object-structure name as the client wrote it, lower case (hrefs keep the alias the client used). */
  osName: string;
  lean: boolean;
  /** Drop null attributes (default), unless `_dropnulls=0`. */
  dropNulls: boolean;
  /** `internalvalues=1`: add `<attr>_maxvalue` for synonym-domain attributes. */
  internalValues: boolean;
  /** `<child>_collectionref` links, unless `ignorecollectionref=1`. */
  collectionRefs: boolean;
  domains: DomainSnapshot;
}

export const PREFIXES = {
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
  spi: 'http://jazz.net/ns/ism/asset/smarter_physical_infrastructure#',
  oslc: 'http://open-services.net/ns/core#',
} as const;

type Json = Record<string, unknown>;

export function restIdOf(record: MemberRecord): string {
  return restIdOfValues(record.node.object, record.values);
}

/** The rest id of a record of `object` from its values (a row as read, or as a write returned it). */
export function restIdOfValues(object: ObjectMeta, values: Readonly<Record<string, StoredValue>>): string {
  return encodeRestId(object.keys.map((key) => keyPart(values[key])));
}

function keyPart(value: StoredValue | undefined): string | number | boolean | null {
  if (value === undefined || value === null) return null;
  return value instanceof Date ? (toJson(value) as string) : value;
}

export function memberHref(record: MemberRecord, options: ResponseOptions): string {
  return resourceHref(options.links, options.osName, restIdOf(record));
}

const hasSelection = (node: NodePlan): boolean =>
  node.attributes.length > 0 || node.related.length > 0 || node.children.length > 0;

/** One member of a collection, or a single resource. */
export function memberJson(record: MemberRecord, options: ResponseOptions): Json {
  const href = memberHref(record, options);
  const about = options.lean ? 'href' : 'rdf:about';
  if (!hasSelection(record.node)) return options.lean ? { href } : { 'rdf:resource': href };
  const json = attributesJson(record, options);
  json[about] = href;
  if (options.collectionRefs && record.node.structureNode) {
    for (const child of record.node.structureNode.children)
      json[`${child.name}_collectionref`] = `${href}/${child.name}`;
  }
  childrenJson(record, href, options, json);
  return json;
}

/** How one selected attribute is written: its JSON names, worked out once per plan instead of once per member. */
interface AttributeShape {
  attribute: SelectedAttribute['attribute'];
  key: string;
  descriptionKey: string;
  maxvalueKey: string;
}

const shapesByNode = new WeakMap<NodePlan, { lean: AttributeShape[]; namespaced: AttributeShape[] }>();

function attributeShapes(node: NodePlan, lean: boolean): readonly AttributeShape[] {
  let shapes = shapesByNode.get(node);
  if (!shapes) {
    const relatedRoots = new Set(node.related.map((related) => related.jsonPath[0]));
    const shape = (prefix: string) =>
      node.attributes.map(({ jsonName, attribute }): AttributeShape => {
        // A dot-notation object of the same name keeps the name; the attribute moves aside (as the deployed systems do).
        const name = relatedRoots.has(jsonName) ? `$alias_this_attr$${jsonName}` : jsonName;
        return {
          attribute,
          key: prefix + name,
          descriptionKey: `${prefix}${name}_description`,
          maxvalueKey: `${prefix}${name}_maxvalue`,
        };
      });
    shapes = { lean: shape(''), namespaced: shape('spi:') };
    shapesByNode.set(node, shapes);
  }
  return lean ? shapes.lean : shapes.namespaced;
}

function attributesJson(record: MemberRecord, options: ResponseOptions): Json {
  const json: Json = {};
  const { values, node } = record;
  const siteid = typeof values.siteid === 'string' ? values.siteid : null;
  const orgid = typeof values.orgid === 'string' ? values.orgid : null;
  for (const { attribute, key, descriptionKey, maxvalueKey } of attributeShapes(node, options.lean)) {
    const value = values[attribute.name] ?? null;
    if (value === null && options.dropNulls) continue;
    json[key] = toJson(value);
    if (attribute.domainId && value !== null) {
      const domainValue = options.domains.find(attribute.domainId, value, siteid, orgid);
      if (domainValue?.description) json[descriptionKey] = domainValue.description;
      if (options.internalValues && domainValue?.maxvalue) json[maxvalueKey] = domainValue.maxvalue;
    }
  }
  node.related.forEach((related, index) => {
    const value = record.related[index] ?? null;
    if (value === null && options.dropNulls) return;
    setPath(json, related.jsonPath, toJson(value));
  });
  json._rowstamp = String(values.rowstamp);
  return json;
}

function setPath(target: Json, path: readonly string[], value: unknown): void {
  let current = target;
  for (const segment of path.slice(0, -1)) {
    const next = current[segment];
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) current = next as Json;
    else current = current[segment] = {};
  }
  current[path[path.length - 1]!] = value;
}

function childrenJson(record: MemberRecord, parentHref: string, options: ResponseOptions, json: Json): void {
  const prefix = options.lean ? '' : 'spi:';
  for (const child of record.node.children) {
    const rows = record.children.get(child.jsonName) ?? [];
    json[prefix + child.jsonName] = rows.map((row, index) => {
      const uniqueId = row.values[row.node.object.uniqueId];
      const localref = `${parentHref}/${child.jsonName}/${index}-${String(uniqueId)}`;
      const childJson = attributesJson(row, options);
      childJson[options.lean ? 'href' : 'rdf:about'] = childAnchor([
        record.node.object.name,
        row.node.object.name,
        ...row.node.object.keys.map((key) => keyPart(row.values[key])),
      ]);
      childJson.localref = localref;
      childrenJson(row, localref, options, childJson);
      return childJson;
    });
  }
}

/**
 * A member of a child collection read at its own address (docs/compatibility.md, "Child collections"): its
 * attributes, the anchored `href`, its `localref`, links to its own child collections, and those selected.
 */
export function childMemberJson(
  record: MemberRecord,
  options: ResponseOptions,
  parentObject: string,
  localref: string,
): Json {
  const childJson = attributesJson(record, options);
  childJson[options.lean ? 'href' : 'rdf:about'] = childAnchor([
    parentObject,
    record.node.object.name,
    ...record.node.object.keys.map((key) => keyPart(record.values[key])),
  ]);
  childJson.localref = localref;
  if (options.collectionRefs && record.node.structureNode) {
    for (const child of record.node.structureNode.children)
      childJson[`${child.name}_collectionref`] = `${localref}/${child.name}`;
  }
  childrenJson(record, localref, options, childJson);
  return childJson;
}

export interface PageInfo {
  /** Address of this page as requested. */
  href: string;
  pageNumber: number;
  nextHref?: string;
  previousHref?: string;
  totalCount?: number;
  totalPages?: number;
  /** Address of the collection when it is not the structure's own (a child collection). */
  collectionHref?: string;
  /** `addschema=1`: the schema of what the query selects. */
  schema?: Json;
}

export function collectionJson(members: readonly Json[], page: PageInfo, options: ResponseOptions): Json {
  const href = page.collectionHref ?? collectionHref(options.links, options.osName);
  if (options.lean) {
    return {
      member: members,
      href,
      responseInfo: {
        ...(page.nextHref !== undefined && { nextPage: { href: page.nextHref } }),
        ...(page.previousHref !== undefined && { previousPage: { href: page.previousHref } }),
        ...(page.totalCount !== undefined && { totalCount: page.totalCount, totalPages: page.totalPages }),
        href: page.href,
        pagenum: page.pageNumber,
        ...(page.schema !== undefined && { schema: page.schema }),
      },
    };
  }
  return {
    prefixes: PREFIXES,
    'oslc:responseInfo': {
      ...(page.nextHref !== undefined && { 'oslc:nextPage': { 'rdf:resource': page.nextHref } }),
      ...(page.previousHref !== undefined && { 'oslc:previousPage': { 'rdf:resource': page.previousHref } }),
      ...(page.totalCount !== undefined && {
        'oslc:totalCount': page.totalCount,
        totalPages: page.totalPages,
      }),
      pagenum: page.pageNumber,
      'rdf:about': page.href,
      ...(page.schema !== undefined && { schema: page.schema }),
    },
    'rdfs:member': members,
    'rdf:about': href,
  };
}

/** A single resource in the namespaced form carries the prefixes too. */
export function resourceJson(member: Json, options: ResponseOptions): Json {
  return options.lean ? member : { prefixes: PREFIXES, ...member };
}
