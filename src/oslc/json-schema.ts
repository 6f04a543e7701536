import type { ObjectMeta, ObjectStructure, StructureNode } from '../metadata/registry.js';
import type { AttributeDef, MaxType } from '../metadata/types.js';
import type { NodePlan } from './query/index.js';
import { INTEGER_RANGE } from './values.js';

/**
 * JSON Schema of object structures (docs/compatibility.md, "JSON schemas"): `GET <root>/jsonschemas/<os>` and
 * `responseInfo.schema` of a collection query with `addschema=1`, in the shape the deployed systems write (object
 * keys `resource`, `description`, `pk`, `title`, `type`, `$ref`, `properties`, `required`; attributes with their
 * Maximo type as `subType`). Built from the metadata alone.
 */

type Json = Record<string, unknown>;

const JSON_TYPES: { readonly [Type in MaxType]: 'string' | 'integer' | 'number' | 'boolean' } = {
  ALN: 'string',
  UPPER: 'string',
  LOWER: 'string',
  INTEGER: 'integer',
  BIGINT: 'integer',
  DECIMAL: 'number',
  AMOUNT: 'number',
  YORN: 'boolean',
  DATE: 'string',
  DATETIME: 'string',
};

const TEXT: ReadonlySet<MaxType> = new Set(['ALN', 'UPPER', 'LOWER']);
const SYNTHETIC = { type: 'string' } as const;

/** Where schemas are addressed: `oslc/jsonschemas/<os>[/<child>...]`, relative as the deployed systems write it. */
export const schemaRef = (root: string, osName: string, path: readonly string[]): string =>
  [`${root}/jsonschemas/${osName}`, ...path].join('/');

export function attributeSchema(attribute: AttributeDef): Json {
  const schema: Json = {
    type: JSON_TYPES[attribute.type],
    subType: attribute.type,
    title: attribute.title,
    persistent: true,
    searchType: TEXT.has(attribute.type) ? 'WILDCARD' : 'EXACT',
    hasList: attribute.domainId !== undefined || attribute.lookup !== undefined,
  };
  if (attribute.length !== undefined && TEXT.has(attribute.type)) schema.maxLength = attribute.length;
  if (attribute.type === 'INTEGER') {
    schema.minimum = INTEGER_RANGE[0];
    schema.maximum = INTEGER_RANGE[1];
  }
  if (attribute.autokey !== undefined) schema.default = '&AUTOKEY&';
  else if (attribute.defaultValue !== undefined && typeof attribute.defaultValue !== 'function') {
    schema.default = attribute.defaultValue;
  }
  return schema;
}

/** Attributes a create must carry (the keys the service numbers, the organization it fills, and generated ones left out). */
function requiredOf(object: ObjectMeta): string[] {
  const required = [...object.attributes.values()]
    .filter((attribute) => attribute.required && !attribute.generated && attribute.autokey === undefined)
    .map((attribute) => attribute.name);
  const { siteAttribute, orgAttribute } = object.def;
  if (siteAttribute && orgAttribute && required.includes(siteAttribute)) required.push(orgAttribute);
  return required.sort();
}

function objectProperties(object: ObjectMeta, attributes: readonly AttributeDef[], child: boolean): Json {
  const properties: Json = { href: SYNTHETIC, _rowstamp: SYNTHETIC, ...(child && { localref: SYNTHETIC }) };
  for (const attribute of attributes) {
    properties[attribute.name] = attributeSchema(attribute);
    if (attribute.domainId !== undefined) properties[`${attribute.name}_description`] = SYNTHETIC;
  }
  if (child) properties[object.uniqueId] ??= SYNTHETIC;
  return properties;
}

/**
 * The schema of a node of a structure (the root, or a child by its path of child names). Children are links to
 * their own schema unless `inline` (an `oslc.select=*`), then their properties are written under `items`.
 */
export function structureSchema(
  structure: ObjectStructure,
  node: StructureNode,
  path: readonly string[],
  parentObject: string | undefined,
  root: string,
  osName: string,
  inline: boolean,
): Json {
  const object = node.object;
  const readable = [...object.attributes.values()].filter((attribute) => !attribute.writeOnly);
  const properties = objectProperties(object, readable, path.length > 0);
  for (const child of node.children) {
    const childPath = [...path, child.name];
    properties[child.name] = {
      objectName: child.object.name,
      type: 'array',
      cardinality: 'MULTIPLE',
      relation: child.name.toUpperCase(),
      items: inline
        ? structureSchema(structure, child, childPath, object.name, root, osName, true)
        : { type: 'object', definition: { subSchema: { $ref: schemaRef(root, osName, childPath) } } },
    };
  }
  return {
    resource: structure.name,
    description: structure.description,
    pk: object.keys,
    title: parentObject === undefined ? object.name : `${parentObject}/${object.name}`,
    type: 'object',
    $ref: schemaRef(root, osName, path),
    properties,
    required: requiredOf(object),
  };
}

/** The node a path of child names leads to, or undefined. */
export function nodeAt(structure: ObjectStructure, path: readonly string[]): StructureNode | undefined {
  let node: StructureNode | undefined = structure.root;
  for (const name of path) node = node?.children.find((child) => child.name === name);
  return node;
}

/** `addschema=1`: the schema limited to what the query selects (children and dot-notation values included). */
export function selectedSchema(
  structure: ObjectStructure,
  plan: NodePlan,
  path: readonly string[],
  root: string,
  osName: string,
): Json {
  const object = plan.object;
  const properties = objectProperties(
    object,
    plan.attributes.map((selected) => selected.attribute),
    path.length > 0,
  );
  for (const related of plan.related) {
    let target = properties;
    for (const segment of related.jsonPath.slice(0, -1)) {
      const existing = target[segment] as Json | undefined;
      const nested: Json = (existing?.properties as Json | undefined) ?? {};
      target[segment] = { type: 'object', properties: nested };
      target = nested;
    }
    target[related.jsonPath[related.jsonPath.length - 1]!] = attributeSchema(related.column.attribute);
  }
  for (const child of plan.children) {
    const childPath = [...path, child.jsonName];
    properties[child.jsonName] = {
      objectName: child.node.object.name,
      type: 'array',
      cardinality: 'MULTIPLE',
      relation: child.jsonName.toUpperCase(),
      items: selectedSchema(structure, child.node, childPath, root, osName),
    };
  }
  return {
    resource: structure.name,
    description: structure.description,
    pk: object.keys,
    title: object.name,
    type: 'object',
    $ref: schemaRef(root, osName, path),
    properties,
    required: requiredOf(object),
  };
}
