import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { FastifySchema, RouteOptions } from 'fastify';
import type { Access } from '../auth/types.js';
import { SESSION_COOKIE } from '../auth/cookies.js';
import type { MetadataRegistry, ObjectStructure } from '../metadata/registry.js';
import { structureSchema } from '../oslc/json-schema.js';

/**
 * The OpenAPI 3.1 description of the service (docs/operations.md, "OpenAPI"). The routes' own TypeBox schemas are
 * the single source of paths, parameters and bodies (`@fastify/swagger` collects them as routes register); this file
 * adds what the schemas do not say: who may call each route, the error object every route may answer, the OSLC
 * query parameters, and one schema per object structure built from the metadata (`src/oslc/json-schema.ts`).
 */

type Json = Record<string, unknown>;

export interface OpenApiSettings {
  contextRoot: string;
  /** Whether `<context root>/api` accepts API keys only (docs/apikeys.md, "The /api route"). */
  apiRouteKeyOnly: boolean;
  version: string;
}

/** Names of the security schemes, one per way of presenting credentials (src/auth/README.md). */
export const SECURITY_SCHEMES = {
  maxauth: {
    type: 'apiKey',
    in: 'header',
    name: 'maxauth',
    description: 'base64 of `userid:password`, on every request (native logins).',
  },
  basic: { type: 'http', scheme: 'basic', description: 'HTTP BASIC login.' },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'The session cookie a login answers with (`POST <root>/login`, FORM login, maxauth, BASIC).',
  },
  apikey: { type: 'apiKey', in: 'header', name: 'apikey', description: 'An API key (docs/apikeys.md).' },
  apikeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'apikey',
    description: 'An API key in the URL; the key is then marked as exposed (docs/apikeys.md).',
  },
} as const;

const ANY_CREDENTIALS = Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] }));
const API_KEYS_ONLY = [{ apikey: [] }, { apikeyQuery: [] }];

/** The error object of docs/errors.md, lean form (the namespaced form carries the same keys under `oslc:Error`). */
export const ERROR_SCHEMA = {
  type: 'object',
  description:
    'Every failure (docs/errors.md). Namespaced as `oslc:Error` with `spi:`/`oslc:` keys when `lean=0`.',
  required: ['Error'],
  properties: {
    Error: {
      type: 'object',
      required: ['reasonCode', 'message', 'statusCode'],
      properties: {
        reasonCode: { type: 'string', examples: ['BMXAA7901E'] },
        message: { type: 'string' },
        statusCode: { type: 'string', description: 'The HTTP status, as a string.', examples: ['401'] },
        extendedError: {
          type: 'object',
          properties: { moreInfo: { type: 'object', properties: { href: { type: 'string' } } } },
        },
        errorattrname: { type: 'string' },
        errattrvalue: { type: 'string' },
        errorobjpath: { type: 'string' },
      },
    },
  },
} as const;

const ERROR_RESPONSE = {
  description: 'The error object (docs/errors.md).',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

/** The OSLC query parameters of collection queries (docs/compatibility.md); the routes read them from the query string. */
const COLLECTION_PARAMETERS: ReadonlyArray<readonly [string, string]> = [
  [
    'lean',
    '`1`: plain JSON keys; `0`: namespaced (`spi:`, `rdf:`, `oslc:`). Default: 0 on /oslc, 1 on /api.',
  ],
  ['oslc.select', 'Attributes to answer: `a,b,rel.c,child{x,y}` or `*`.'],
  ['oslc.where', 'Filter: `status="OPERATING" and siteid in ["BEDFORD"]`.'],
  ['oslc.orderBy', 'Sort: `+assetnum,-changedate`.'],
  ['oslc.pageSize', 'Members per page; `nextPage.href` leads on.'],
  ['pageno', 'Page number, from 1.'],
  ['collectioncount', '`1`: answer `responseInfo.totalCount`.'],
  ['count', '`1`: answer only the count.'],
  ['savedQuery', 'A saved query of the object structure.'],
  ['oslc.searchTerms', 'Text searched in the search attributes.'],
  ['searchAttributes', 'Attributes `oslc.searchTerms` searches.'],
  ['relativeuri', '`1`: hrefs relative to the context root.'],
  ['addschema', '`1`: `responseInfo.schema` describes the selected attributes.'],
  ['stablepaging', '`1`: pages from a snapshot of the result.'],
  ['gbcols', 'Group-by columns.'],
];

/** A Fastify route pattern as an OpenAPI path: `:name` as `{name}`, the wildcard as `{childPath}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*/g, '{childPath}');
}

/** Who may call a route, as the `security` of its operation. */
function securityOf(access: Access | undefined, url: string, settings: OpenApiSettings): Json[] {
  if (access?.kind === 'public') return [];
  if (settings.apiRouteKeyOnly && isUnderApiRoot(url, settings.contextRoot)) return API_KEYS_ONLY;
  return ANY_CREDENTIALS;
}

function isUnderApiRoot(url: string, contextRoot: string): boolean {
  const prefix = `${contextRoot}/api`;
  return url === prefix || url.startsWith(`${prefix}/`);
}

function describeAccess(access: Access | undefined): string {
  switch (access?.kind) {
    case 'public':
      return 'Public.';
    case 'user':
      return 'Any logged-in user.';
    case 'admin':
      return 'Administrators only.';
    case 'objectStructure':
      return typeof access.right === 'string'
        ? `The \`${access.right}\` right on the object structure.`
        : 'The right on the object structure that the method (or `x-method-override`) needs.';
    default:
      return 'Nobody (no access declared).';
  }
}

/** The section of the API a route belongs to: the first path segment below the API root. */
function tagOf(url: string, contextRoot: string): string {
  const rest = url.slice(contextRoot.length).split('/').filter(Boolean);
  const [root, section] = rest;
  if (root !== 'oslc' && root !== 'api') return 'login';
  return section === undefined ? 'service' : section.replace(/[.:].*$/, '');
}

/** Renames the wildcard parameter `*` of a params schema to `childPath`, as in the path. */
function renamedWildcard(params: unknown): unknown {
  const object = params as { properties?: Json; required?: string[] } | undefined;
  if (!object?.properties || !('*' in object.properties)) return params;
  const { '*': wildcard, ...properties } = object.properties;
  return {
    ...object,
    properties: {
      ...properties,
      childPath: {
        ...(wildcard as Json),
        description: 'Child collection path: `<child>[/<id>/<child>...]`.',
      },
    },
    required: object.required?.map((name) => (name === '*' ? 'childPath' : name)),
  };
}

/** Options of `@fastify/swagger`: the document's frame, and each route described from its options. */
export function swaggerOptions(settings: OpenApiSettings): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Enterprise Asset Service',
        version: settings.version,
        description:
          'Maximo OSLC JSON API: object structures, actions, logins, API keys, system properties. Every failure ' +
          'answers the error object (`#/components/schemas/Error`).',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      components: {
        securitySchemes: SECURITY_SCHEMES as unknown as Record<string, OpenAPIV3_1.SecuritySchemeObject>,
        schemas: { Error: ERROR_SCHEMA as unknown as OpenAPIV3_1.SchemaObject },
      },
      security: ANY_CREDENTIALS,
    },
    transform: ({ schema, url, route }) => describeRoute(schema, url, route, settings),
    transformObject: (documentObject) =>
      'openapiObject' in documentObject ? withErrorResponses(documentObject.openapiObject as Json) : {},
  };
}

function describeRoute(
  schema: FastifySchema | undefined,
  url: string,
  route: RouteOptions,
  settings: OpenApiSettings,
): { schema: FastifySchema; url: string } {
  const access = route.config?.access;
  const described: Json = {
    ...schema,
    tags: [tagOf(url, settings.contextRoot)],
    description: `Access: ${describeAccess(access)}`,
    security: securityOf(access, url, settings),
  };
  if (schema?.params) described.params = renamedWildcard(schema.params);
  // A query string read as a free map (`Record<string, string>`, src/oslc/schemas.ts) names no parameter; the
  // document lists the OSLC ones (withErrorResponses) instead of turning the map's own keywords into parameters.
  if (schema?.querystring && !(schema.querystring as { properties?: unknown }).properties) {
    delete described.querystring;
  }
  return { schema: described as FastifySchema, url: openApiPath(url) };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

/**
 * Every operation may answer the error object; operations without a declared answer get a generic JSON one, and
 * the collection queries their OSLC parameters.
 */
function withErrorResponses(document: Json): Json {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json | undefined>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const responses = (operation.responses ?? {}) as Json;
      const declared = Object.keys(responses).some((status) => status !== 'default' && status < '400');
      operation.responses = {
        ...(declared ? responses : { '200': { description: 'The answer (JSON).' } }),
        '4XX': ERROR_RESPONSE,
        '5XX': ERROR_RESPONSE,
      };
      if (method === 'get' && /\/os\/\{os\}$/.test(path)) {
        const parameters = (operation.parameters ?? []) as Json[];
        operation.parameters = [
          ...parameters,
          ...COLLECTION_PARAMETERS.map(([name, description]) => ({
            name,
            in: 'query',
            required: false,
            description,
            schema: { type: 'string' },
          })),
        ];
      }
    }
  }
  return document;
}

/** `RESOURCE_<OSNAME>`, the name client tooling expects (docs/operations.md, "OpenAPI"). */
export const resourceSchemaName = (structure: ObjectStructure): string => `RESOURCE_${structure.name}`;

/**
 * The schema of one object structure as an OpenAPI schema: the JSON schema of `/jsonschemas/<os>` with its
 * children inlined, without the `$ref` that addresses it on the service (an OpenAPI reader would resolve it).
 */
function resourceSchema(structure: ObjectStructure): Json {
  const withoutRef = (schema: Json): Json => {
    const { $ref: _ref, ...rest } = schema;
    const properties = rest.properties as Record<string, Json> | undefined;
    if (properties) {
      rest.properties = Object.fromEntries(
        Object.entries(properties).map(([name, property]) => {
          const items = property.items as Json | undefined;
          return [name, items?.properties ? { ...property, items: withoutRef(items) } : property];
        }),
      );
    }
    return rest;
  };
  return withoutRef(
    structureSchema(structure, structure.root, [], undefined, 'oslc', structure.name.toLowerCase(), true),
  );
}

/**
 * The document with the object structures of the metadata: a schema for each, offered as the values of the `os`
 * path parameter, and as the body of creates and updates.
 */
export function withObjectStructures(document: Json, metadata: MetadataRegistry): Json {
  const structures = metadata.objectStructures();
  const components = (document.components ?? {}) as Json;
  const schemas: Json = { ...(components.schemas as Json) };
  for (const structure of structures) {
    const schema = resourceSchema(structure);
    schemas[resourceSchemaName(structure)] = schema;
    // Aliases too (`RESOURCE_MXWO`): tools look a structure's schema up by the name they call it with
    // (docs/compatibility.md, "OpenAPI").
    for (const alias of metadata.aliasesOf(structure)) schemas[`RESOURCE_${alias}`] = schema;
  }
  const examples = Object.fromEntries(
    structures.map((structure) => [
      structure.name.toLowerCase(),
      { summary: structure.description, value: structure.name.toLowerCase() },
    ]),
  );
  const resources = {
    oneOf: structures.map((structure) => ({ $ref: `#/components/schemas/${resourceSchemaName(structure)}` })),
  };
  const paths: Json = {};
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    const described: Json = {};
    for (const [method, operation] of Object.entries(item)) {
      described[method] = withStructureParameter(operation as Json, examples, resources, path);
    }
    paths[path] = described;
  }
  return { ...document, paths, components: { ...components, schemas } };
}

function withStructureParameter(operation: Json, examples: Json, resources: Json, path: string): Json {
  const parameters = operation.parameters as Json[] | undefined;
  if (!parameters?.some((parameter) => parameter.name === 'os' && parameter.in === 'path')) return operation;
  const described: Json = {
    ...operation,
    parameters: parameters.map((parameter) =>
      parameter.name === 'os' && parameter.in === 'path'
        ? { ...parameter, description: 'Object structure, in any case.', examples }
        : parameter,
    ),
  };
  const body = operation.requestBody as { content?: Record<string, Json> } | undefined;
  // Resource bodies (creates and updates of a member, not children): one of the object structures' schemas.
  if (body?.content && /\/os\/\{os\}(\/\{id\})?$/.test(path)) {
    described.requestBody = {
      ...body,
      content: Object.fromEntries(
        Object.entries(body.content).map(([type, media]) => [
          type,
          { ...media, schema: { anyOf: [resources, (media as { schema?: unknown }).schema ?? {}] } },
        ]),
      ),
    };
  }
  return described;
}
