import type { ObjectStructure } from '../metadata/registry.js';
import { resourceSchemaName } from './document.js';

/**
 * The forms of the OpenAPI document clients ask for (docs/operations.md, "OpenAPI"): every route (`{os}` left
 * generic), or only some object structures, each with its own paths; lean property names or namespaced ones; with
 * or without the actions. Each is derived from the one document of src/openapi/document.ts, so that every form
 * says the same about a route.
 */

type Json = Record<string, unknown>;

export interface DocumentView {
  /** Plain attribute names (`assetnum`); false: namespaced (`spi:assetnum`, `rdf:about`), as `lean=0` answers. */
  lean: boolean;
  /** Only these structures, each with its own paths (`/os/mxapiasset`); absent: every route. */
  structures?: readonly ObjectStructure[];
  /** The actions the service answers (`action=`), as a parameter of the operations that take them. */
  includeActions: boolean;
}

const OS_PARAMETER = '{os}';
const COLLECTION = /\/os\/\{os\}$/;
const MEMBER = /\/os\/\{os\}\/\{id\}$/;

/** A copy of the document in the form asked for; the document itself is left as it is (it is shared). */
export function documentView(document: Json, view: DocumentView): Json {
  const components = (document.components ?? {}) as Json;
  let schemas = { ...(components.schemas as Json) };
  let paths = { ...(document.paths as Record<string, Json>) };
  if (view.structures) {
    paths = structurePaths(paths, view.structures);
    const kept = new Set(['Error', ...view.structures.map(resourceSchemaName)]);
    schemas = Object.fromEntries(Object.entries(schemas).filter(([name]) => kept.has(name)));
  }
  if (view.includeActions) paths = withActions(paths, view.structures);
  if (!view.lean) {
    for (const [name, schema] of Object.entries(schemas)) {
      if (name.startsWith('RESOURCE_')) schemas[name] = namespaced(schema as Json);
    }
  }
  return { ...document, paths, components: { ...components, schemas } };
}

/** The paths of the given structures: every path with `{os}` once per structure, `{os}` written out. */
function structurePaths(
  paths: Record<string, Json>,
  structures: readonly ObjectStructure[],
): Record<string, Json> {
  const result: Record<string, Json> = {};
  for (const [path, item] of Object.entries(paths)) {
    // The document's own address names a structure too, but describes the document, not the structure.
    if (!path.includes(OS_PARAMETER) || path.endsWith(`/oas/${OS_PARAMETER}`)) continue;
    for (const structure of structures) {
      const osName = structure.name.toLowerCase();
      const operations: Json = {};
      for (const [method, operation] of Object.entries(item)) {
        operations[method] = forStructure(operation as Json, structure);
      }
      result[path.replace(OS_PARAMETER, osName)] = operations;
    }
  }
  return result;
}

/** An operation on one structure: no `os` parameter, its own resource as the body, tagged with its name. */
function forStructure(operation: Json, structure: ObjectStructure): Json {
  const parameters = (operation.parameters ?? []) as Json[];
  const described: Json = {
    ...operation,
    tags: [structure.name],
    parameters: parameters.filter((parameter) => !(parameter.name === 'os' && parameter.in === 'path')),
  };
  const body = operation.requestBody as { content?: Record<string, Json> } | undefined;
  if (body?.content && JSON.stringify(body.content).includes('#/components/schemas/RESOURCE_')) {
    const resource = { $ref: `#/components/schemas/${resourceSchemaName(structure)}` };
    described.requestBody = {
      ...body,
      content: Object.fromEntries(
        Object.keys(body.content).map((type) => [type, { ...body.content![type], schema: resource }]),
      ),
    };
  }
  return described;
}

/** Whether a structure's main object can change status (`wsmethod:changeStatus`, src/oslc/actions.ts). */
function changesStatus(structure: ObjectStructure): boolean {
  const attributes = structure.root.object.attributes;
  return attributes.has('status') && attributes.has('statusdate');
}

const NEW_ACTION =
  '`new`: the record a create would start from (defaults, autokeys), nothing written; a POST body sets values first.';
const CHANGE_STATUS_ACTION =
  '`wsmethod:changeStatus`: body `{"status": "...", "date": "...", "memo": "..."}`; changes the status and ' +
  'records it in the status history. Offered by structures whose main object has `status` and `statusdate`.';

/** The `action` parameter on the collection reads and creates (`new`) and the member POST (`changeStatus`). */
function withActions(
  paths: Record<string, Json>,
  structures: readonly ObjectStructure[] | undefined,
): Record<string, Json> {
  const byPath = new Map<string, ObjectStructure>();
  for (const structure of structures ?? []) {
    byPath.set(`/os/${structure.name.toLowerCase()}`, structure);
  }
  const result: Record<string, Json> = {};
  for (const [path, item] of Object.entries(paths)) {
    const { kind, structure } = actionTarget(path, byPath);
    if (kind === undefined || (kind === 'member' && structure && !changesStatus(structure))) {
      result[path] = item;
      continue;
    }
    const described: Json = { ...item };
    const methods = kind === 'collection' ? ['get', 'post'] : ['post'];
    const action =
      kind === 'collection'
        ? { values: ['new'], description: NEW_ACTION }
        : { values: ['wsmethod:changeStatus'], description: CHANGE_STATUS_ACTION };
    for (const method of methods) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      described[method] = {
        ...operation,
        parameters: [
          ...((operation.parameters ?? []) as Json[]),
          {
            name: 'action',
            in: 'query',
            required: false,
            description: action.description,
            schema: { type: 'string', enum: action.values },
          },
        ],
      };
    }
    result[path] = described;
  }
  return result;
}

function actionTarget(
  path: string,
  byPath: ReadonlyMap<string, ObjectStructure>,
): { kind?: 'collection' | 'member'; structure?: ObjectStructure } {
  if (COLLECTION.test(path)) return { kind: 'collection' };
  if (MEMBER.test(path)) return { kind: 'member' };
  for (const [prefix, structure] of byPath) {
    if (path.endsWith(prefix)) return { kind: 'collection', structure };
    if (path.endsWith(`${prefix}/{id}`)) return { kind: 'member', structure };
  }
  return {};
}

/** Synthetic keys as the namespaced answers write them (src/oslc/response.ts). */
const NAMESPACED_KEYS: Readonly<Record<string, string>> = { href: 'rdf:about' };
const UNPREFIXED = new Set(['_rowstamp', 'localref', '_id', '_imagelibref']);

function namespacedName(name: string): string {
  return NAMESPACED_KEYS[name] ?? (UNPREFIXED.has(name) ? name : `spi:${name}`);
}

/** A resource schema with the property names of `lean=0` answers, children included. */
function namespaced(schema: Json): Json {
  const properties = schema.properties as Record<string, Json> | undefined;
  if (!properties) return schema;
  const renamed: Json = {};
  for (const [name, property] of Object.entries(properties)) {
    const items = property.items as Json | undefined;
    renamed[namespacedName(name)] = items?.properties ? { ...property, items: namespaced(items) } : property;
  }
  const required = schema.required as string[] | undefined;
  return { ...schema, properties: renamed, ...(required && { required: required.map(namespacedName) }) };
}
