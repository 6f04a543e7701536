import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { hasRight } from '../auth/hook.js';
import type { Right } from '../auth/types.js';
import { errors } from '../errors.js';
import { linksFor } from '../http/links.js';
import { readFlag } from '../http/query-string.js';
import { sendJson } from '../http/reply.js';
import { isMergePatch, methodOverride, propertiesOfWrite, registerWriteBodyParsers } from './bodies.js';
import { readCollectionParams } from './collection-params.js';
import { apiMetaJson } from './query/index.js';
import { actionOf, collectionAction, memberAction, memberReadAction } from './actions.js';
import { schemaRoutes } from './schema-routes.js';
import {
  CollectionBody,
  QueryStringSchema,
  ResourceParams,
  StructureParams,
  WriteHeaders,
} from './schemas.js';
import { sendBulk, sendSync } from './bulk.js';
import { childRoutes } from './child-routes.js';
import { sendCollection } from './collection-reply.js';
import type { OslcRoutesOptions } from './route-options.js';
import { sendResource, sendWritten } from './resource-reply.js';
import { writeOptionsOf } from './write-options.js';

/** Object-structure resources: collections, members, and their writes (docs/compatibility.md). */
export async function oslcRoutes(app: FastifyInstance, options: OslcRoutesOptions): Promise<void> {
  registerWriteBodyParsers(app);
  readRoutes(app, options);
  createRoute(app, options);
  memberWriteRoutes(app, options);
  await childRoutes(app, options);
  schemaRoutes(app, options);
  verbRoutes(app);
}

/**
 * The HTTP verbs PATCH and PUT, which the deployed systems do not serve (writes are POST with `x-method-override`):
 * a method error naming the override to send and an `Allow` header, not "no resource" (docs/compatibility.md,
 * "HTTP methods"). Any logged-in user gets it; it reveals nothing about the structure.
 */
function verbRoutes(app: FastifyInstance): void {
  const allowed: ReadonlyArray<readonly [string, string]> = [
    ['/os/:os', 'GET, POST'],
    ['/os/:os/:id', 'GET, POST, DELETE'],
    ['/os/:os/:id/*', 'GET, POST, DELETE'],
  ];
  for (const [url, allow] of allowed) {
    app.route({
      method: ['PATCH', 'PUT'],
      url,
      config: { access: { kind: 'user' } },
      handler: async (request, reply) => {
        reply.header('allow', allow);
        const override = request.method === 'PUT' ? 'PATCH' : request.method;
        throw errors.methodNotAllowed(`${request.method} (send POST with x-method-override: ${override})`);
      },
    });
  }
}

/** Collections (and collection actions), API metadata, and members, as GET reads them. */
function readRoutes(app: FastifyInstance, options: OslcRoutesOptions): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();

  routes.get(
    '/os/:os',
    {
      schema: { params: StructureParams, querystring: QueryStringSchema },
      config: { access: { kind: 'objectStructure', right: 'read' } },
    },
    async (request, reply) => {
      const action = actionOf(request);
      if (action !== undefined)
        return collectionAction(request, reply, options, request.objectStructure!, action);
      return sendCollection(request, reply, options, request.objectStructure!);
    },
  );

  routes.get(
    '/apimeta/:os',
    {
      schema: { params: StructureParams, querystring: QueryStringSchema },
      config: { access: { kind: 'objectStructure', right: 'read' } },
    },
    async (request, reply) => {
      const links = linksFor(
        request,
        options.contextRoot,
        options.root,
        readFlag(request.query.relativeuri) === true,
      );
      return sendJson(
        reply,
        200,
        apiMetaJson(request.objectStructure!, links, request.params.os.toLowerCase()),
      );
    },
  );

  routes.get(
    '/os/:os/:id',
    {
      schema: { params: ResourceParams, querystring: QueryStringSchema },
      config: { access: { kind: 'objectStructure', right: 'read' } },
    },
    async (request, reply) => {
      const structure = request.objectStructure!;
      const action = actionOf(request);
      if (action !== undefined)
        return memberReadAction(request, reply, options, structure, request.params.id, action);
      const params = readCollectionParams(request.query);
      // One statement: the member is selected by its address in the read itself (ResourceService.readAt).
      return sendResource(request, reply, options, { structure, id: request.params.id, params }, 200);
    },
  );
}

/**
 * A body that is JSON but neither an object nor an array (`42`, `null`, `"text"`, `true`) is refused as what it is,
 * not as a BULK request (docs/compatibility.md, "Content types"); no body at all is the create's own refusal.
 */
function refuseScalarBody(body: unknown): void {
  if (body === undefined || (typeof body === 'object' && body !== null)) return;
  throw errors.badRequest(
    'The request body must be a JSON object (an array is a BULK request: send x-method-override: BULK).',
  );
}

/** POST on a collection: a create, BULK or SYNC (`x-method-override`), or a collection action. */
function createRoute(app: FastifyInstance, options: OslcRoutesOptions): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const { resources } = options;

  routes.post(
    '/os/:os',
    {
      schema: {
        params: StructureParams,
        querystring: QueryStringSchema,
        body: CollectionBody,
        headers: WriteHeaders,
      },
      config: { access: { kind: 'objectStructure', right: collectionPostRight } },
      // Before the schema, which would coerce `42` or `null` into a one-element array (a BULK request).
      preValidation: async (request) => refuseScalarBody(request.body),
    },
    async (request, reply) => {
      const action = actionOf(request);
      if (action !== undefined)
        return collectionAction(request, reply, options, request.objectStructure!, action);
      const override = methodOverride(request);
      const structure = request.objectStructure!;
      if (override === 'BULK') return sendBulk(request, reply, options, structure);
      if (override === 'SYNC' || override === 'MERGESYNC')
        return sendSync(request, reply, options, structure);
      if (override !== undefined) throw errors.methodNotAllowed(`POST with x-method-override ${override}`);
      const select = propertiesOfWrite(request);
      const body = request.body;
      if (Array.isArray(body))
        throw errors.badRequest('An array body is a BULK request: send x-method-override: BULK.');
      const created = await resources.createRecord(structure, body, request.user!, writeOptionsOf(request));
      const params = readCollectionParams(request.query);
      return sendWritten(request, reply, options, { ...created, structure, params, wanted: select }, 201);
    },
  );
}

/** Updates (POST with `x-method-override: PATCH` or `MERGE`), deletes and member actions. */
function memberWriteRoutes(app: FastifyInstance, options: OslcRoutesOptions): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const { resources } = options;

  routes.post(
    '/os/:os/:id',
    {
      schema: { params: ResourceParams, querystring: QueryStringSchema, headers: WriteHeaders },
      config: { access: { kind: 'objectStructure', right: overrideRight } },
    },
    async (request, reply) => {
      const structure = request.objectStructure!;
      const user = request.user!;
      const action = actionOf(request);
      if (action !== undefined)
        return memberAction(request, reply, options, structure, request.params.id, action);
      if (overrideRight(request) === 'delete') {
        await resources.remove(structure, request.params.id, user, writeOptionsOf(request));
        return reply.code(204).send();
      }
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw errors.badRequest('The request body must be a JSON object.');
      }
      if (isDeleteAction(body as Record<string, unknown>)) {
        // `{"_action": "Delete"}` with an update override deletes the resource (docs/compatibility.md, "Writes").
        if (!hasRight(user, structure.name, 'delete')) throw errors.notAuthorized(structure.name);
        await resources.remove(structure, request.params.id, user, writeOptionsOf(request));
        return reply.code(204).send();
      }
      const merge = isMergePatch(request);
      const select = propertiesOfWrite(request);
      const uniqueId = await resources.update(
        structure,
        request.params.id,
        body as Record<string, unknown>,
        user,
        {
          merge,
          ...writeOptionsOf(request),
        },
      );
      const params = readCollectionParams(request.query);
      return sendWritten(request, reply, options, { structure, uniqueId, params, wanted: select }, 204);
    },
  );

  routes.delete(
    '/os/:os/:id',
    {
      schema: { params: ResourceParams },
      config: { access: { kind: 'objectStructure', right: 'delete' } },
    },
    async (request, reply) => {
      const action = actionOf(request);
      if (action !== undefined) throw errors.unknownAction(action, request.objectStructure!.name);
      await resources.remove(
        request.objectStructure!,
        request.params.id,
        request.user!,
        writeOptionsOf(request),
      );
      return reply.code(204).send();
    },
  );
}

const isDeleteAction = (body: Record<string, unknown>): boolean =>
  Object.entries(body).some(
    ([name, value]) => name.toLowerCase() === '_action' && String(value).toLowerCase() === 'delete',
  );

/**
 * POST on a collection creates (insert); BULK checks each element's own right (src/oslc/bulk.ts) once the body is
 * read, so the request itself needs only read; SYNC creates or updates, and needs insert (update is checked when
 * it updates).
 */
function collectionPostRight(request: FastifyRequest): Right {
  return methodOverride(request) === 'BULK' ? 'read' : 'insert';
}

/** POST on a member is an update (`x-method-override: PATCH`) or a delete (`x-method-override: DELETE`). */
function overrideRight(request: FastifyRequest): Right {
  const override = methodOverride(request) ?? '';
  // An action (`?action=wsmethod:changeStatus`) changes the record, with or without the PATCH override.
  if (override === '' && actionOf(request) !== undefined) return 'update';
  if (override === 'PATCH' || override === 'MERGE') return 'update';
  if (override === 'DELETE') return 'delete';
  throw errors.methodNotAllowed(
    override === '' ? 'POST on a member without x-method-override' : `x-method-override ${override}`,
  );
}
