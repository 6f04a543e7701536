import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Access } from '../auth/types.js';
import type { MetadataRegistry } from '../metadata/registry.js';
import { withObjectStructures } from './document.js';

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
export const DOCUMENT_PATHS = ['/oslc/oas/api.json', '/oslc/oas/api', '/api/oas/api.json', '/api/oas/api'];

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

  for (const path of DOCUMENT_PATHS) {
    app.get(`${contextRoot}${path}`, { config: { access: LOGGED_IN } }, async (_request, reply) =>
      reply.type('application/json; charset=utf-8').send(currentDocument()),
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
      transformSpecificationClone: false,
      transformSpecification: (routes) => documentOf(routes as Record<string, unknown>),
      uiConfig: { deepLinking: true, docExpansion: 'none', defaultModelsExpandDepth: 0 },
    });
  });
}
