import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Access } from '../auth/types.js';
import { errors } from '../errors.js';
import { readFlag } from '../http/query-string.js';
import { withoutFraming } from '../http/security-headers.js';
import type { MetadataRegistry, ObjectStructure } from '../metadata/registry.js';
import { BoundedCache } from '../util/bounded-cache.js';
import { withObjectStructures } from './document.js';
import { documentView, type DocumentView } from './views.js';

export interface OpenApiRoutesOptions {
  contextRoot: string;
  metadata: MetadataRegistry;
}

/** Where Swagger UI answers, below the context root (docs/operations.md, "Swagger UI"). */
export const SWAGGER_UI_PATH = '/oslc/oas/ui';

/**
 * Addresses of the document: the ones deployed systems answer and clients fetch (`/oslc/oas/api.json`,
 * `/oslc/oas/api`, and the same under `/api`), relative to the context root.
 */
export const DOCUMENT_PATHS = [
  '/oslc/oas/api.json',
  '/oslc/oas/api',
  '/api/oas/api.json',
  '/api/oas/api',
  '/oslc/oas',
  '/api/oas',
];

/** Addresses of one object structure's document, `:os` its name or alias in any case. */
export const STRUCTURE_DOCUMENT_PATHS = ['/oslc/oas/:os', '/api/oas/:os'];

/** The options of the deployed systems' document (docs/operations.md, "OpenAPI"), on every address. */
const DocumentQuery = Type.Object({
  lean: Type.Optional(
    Type.String({
      description: '`0`: namespaced property names (`spi:`) in the resource schemas. Default 1.',
    }),
  ),
  os: Type.Optional(
    Type.String({ description: 'Comma-separated object structures: only their paths and schemas.' }),
  ),
  includeaction: Type.Optional(
    Type.String({
      description: '`1`: the actions (`action=`) as a parameter of the operations taking them.',
    }),
  ),
  includeactions: Type.Optional(Type.String({ description: 'Same as `includeaction`.' })),
  module: Type.Optional(
    Type.String({ description: 'Accepted and not applied: structures have no module here.' }),
  ),
  addinternal: Type.Optional(Type.String({ description: 'Accepted and not applied.' })),
  primary: Type.Optional(Type.String({ description: 'Accepted and not applied.' })),
});
type DocumentQuery = Static<typeof DocumentQuery>;

const StructureParams = Type.Object({ os: Type.String({ description: 'Object structure, in any case.' }) });

/** Addresses of the UI on deployed systems; they lead to Swagger UI. */
const UI_ALIASES = ['/oslc/oas/api.html', '/oas3/api.html'];

/** Like the deployed systems: the document and its UI need a logged-in user or an API key (docs/operations.md). */
const LOGGED_IN: Access = { kind: 'user' };

/**
 * The OpenAPI document of the routes (collected by `@fastify/swagger`, registered before every module) with the
 * object structures of the metadata, rebuilt only when the metadata changes.
 */
export async function openApiRoutes(app: FastifyInstance, options: OpenApiRoutesOptions): Promise<void> {
  const { contextRoot, metadata } = options;
  let built: { version: number; document: Record<string, unknown> } | undefined;
  const documentOf = (routes: Record<string, unknown>): Record<string, unknown> => {
    if (built?.version !== metadata.version) {
      built = { version: metadata.version, document: withObjectStructures(routes, metadata) };
    }
    return built.document;
  };
  const currentDocument = () => documentOf(app.swagger() as unknown as Record<string, unknown>);
  const views = new BoundedCache<string, Record<string, unknown>>(VIEWS_KEPT);
  const viewOf = (view: DocumentView): Record<string, unknown> => {
    const document = currentDocument();
    const structures = view.structures?.map((structure) => structure.name).join(',');
    const key = JSON.stringify([metadata.version, view.lean, view.includeActions, structures]);
    return views.getOrCompute(key, () => documentView(document, view));
  };

  for (const path of DOCUMENT_PATHS) {
    app.get(
      `${contextRoot}${path}`,
      { schema: { querystring: DocumentQuery }, config: { access: LOGGED_IN } },
      async (request, reply) =>
        reply.type('application/json; charset=utf-8').send(viewOf(viewAsked(request, metadata))),
    );
  }
  for (const path of STRUCTURE_DOCUMENT_PATHS) {
    app.get(
      `${contextRoot}${path}`,
      {
        schema: { params: StructureParams, querystring: DocumentQuery },
        config: { access: LOGGED_IN },
      },
      async (request, reply) => {
        const { os } = request.params as Static<typeof StructureParams>;
        const view = { ...viewAsked(request, metadata), structures: [structureNamed(metadata, os)] };
        return reply.type('application/json; charset=utf-8').send(viewOf(view));
      },
    );
  }
  for (const alias of UI_ALIASES) {
    app.get(
      `${contextRoot}${alias}`,
      { config: { access: LOGGED_IN, browserSignIn: true } },
      async (_request, reply) => reply.redirect(`${contextRoot}${SWAGGER_UI_PATH}/`),
    );
  }

  await app.register(async (ui) => {
    // The UI's routes (page, assets, its copy of the document) are declared by the package: each gets the access
    // of the document here, as every route must declare one (src/auth/README.md).
    ui.addHook('onRoute', (route) => {
      // A browser without a session is led to the console's sign-in (docs/console.md).
      route.config = { ...route.config, access: LOGGED_IN, browserSignIn: true };
    });
    await ui.register(swaggerUi, {
      routePrefix: `${contextRoot}${SWAGGER_UI_PATH}`,
      // Served from the package: no CDN, nothing fetched by the browser from elsewhere.
      staticCSP: true,
      // Framed by nobody, as every page (docs/security.md, "Security headers").
      transformStaticCSP: withoutFraming,
      transformSpecificationClone: false,
      transformSpecification: (routes, request, reply) => {
        // The page's copy of the document tells its script the session's token (see SESSION_TOKEN_INTERCEPTORS).
        if (request.session) reply.header('csrftoken', request.session.csrfToken);
        return documentOf(routes as Record<string, unknown>);
      },
      uiConfig: {
        deepLinking: true,
        docExpansion: 'none',
        defaultModelsExpandDepth: 0,
        ...SESSION_TOKEN_INTERCEPTORS,
      },
    });
  });
}

/**
 * "Try it out" writes with the browser's session (docs/operations.md, "Swagger UI"): the UI's copy of the document
 * answers the session's `csrftoken` header, as a login with `csrf=1` does, and every write the page sends carries it
 * (docs/compatibility.md, "CSRF"), as the console's do. A login tried out on the page (`/oslc/login?csrf=1`) answers
 * the new session's token, which replaces it.
 *
 * The package writes these functions' source into the page's script (`swagger-initializer.js`), so each must stand
 * alone: no reference to this module, no function inside (a compiler may name those with a helper of its own).
 */
const SESSION_TOKEN_INTERCEPTORS = {
  responseInterceptor: function (response: { headers?: Record<string, unknown> }) {
    const token = response.headers?.csrftoken;
    if (typeof token === 'string' && token !== '')
      (globalThis as { easSessionToken?: string }).easSessionToken = token;
    return response;
  },
  requestInterceptor: function (request: { method?: string; headers?: Record<string, string> }) {
    const token = (globalThis as { easSessionToken?: string }).easSessionToken;
    const method = (request.method ?? 'GET').toUpperCase();
    if (token !== undefined && method !== 'GET' && method !== 'HEAD')
      request.headers = { ...request.headers, csrftoken: token };
    return request;
  },
};

/** Forms kept built: clients ask for a few, again and again. */
const VIEWS_KEPT = 32;

/** The form a query asks for: lean unless `lean=0`, the structures of `os`, the actions with `includeaction=1`. */
function viewAsked(request: FastifyRequest, metadata: MetadataRegistry): DocumentView {
  const query = request.query as DocumentQuery;
  const names = (query.os ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return {
    lean: readFlag(query.lean) !== false,
    includeActions: readFlag(query.includeaction ?? query.includeactions) === true,
    ...(names.length > 0 && {
      structures: [...new Set(names.map((name) => structureNamed(metadata, name)))],
    }),
  };
}

function structureNamed(metadata: MetadataRegistry, name: string): ObjectStructure {
  const structure = metadata.findObjectStructure(name);
  if (!structure) throw errors.unknownObjectStructure(name);
  return structure;
}
