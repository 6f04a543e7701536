import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { hasRight } from '../auth/hook.js';
import type { Right } from '../auth/types.js';
import { errors } from '../errors.js';
import { collectionHref, linksFor, resourceHref, type ApiRoot, type Links } from '../http/links.js';
import { readFlag } from '../http/query-string.js';
import { sendJson } from '../http/reply.js';
import type { ObjectStructure, StructureNode } from '../metadata/registry.js';
import { BoundedCache } from '../util/bounded-cache.js';
import { isMergePatch, methodOverride, propertiesOfWrite, registerWriteBodyParsers } from './bodies.js';
import { readCollectionParams, type CollectionParams } from './collection-params.js';
import type { SelectClause, SelectItem } from './query/ast.js';
import type { MemberRecord } from './query/execute.js';
import { actionOf, collectionAction, memberAction } from './actions.js';
import { groupsJson } from './group-by.js';
import { selectedSchema } from './json-schema.js';
import { schemaRoutes } from './schema-routes.js';
import { apiMetaJson } from './query/apimeta.js';
import { pageSizeExceeded, type Filter, type QueryRequest } from './query/plan.js';
import { collectionJson, memberJson, resourceJson, restIdOf, type ResponseOptions } from './response.js';
import {
  CollectionBody,
  QueryStringSchema,
  ResourceParams,
  StructureParams,
  WriteHeaders,
} from './schemas.js';
import { sendBulk, sendSync } from './bulk.js';
import { childRoutes } from './child-routes.js';
import { etagOf, type PageOfMembers, type ResourceService } from './service.js';
import { writeOptionsOf } from './write-options.js';
import { toJson } from './values.js';

export interface OslcRoutesOptions {
  root: ApiRoot;
  contextRoot: string;
  resources: ResourceService;
  /**
   * Largest page a client may ask for on an object structure (canonical name, `MXAPIASSET`); a larger
   * `oslc.pageSize` is refused (`mxe.oslc.maxpagesize`, `mxe.oslc.<os>.maxpagesize`).
   */
  maxPageSize: (osName: string) => number;
  /** Seconds a stable page set may stay unused before it expires (`mxe.oslc.idleexiry`). */
  idleExpiry: () => number;
  /** Whether every collection answer carries `totalCount` (`mxe.oslc.collectioncount`, docs/compatibility.md). */
  collectionCount?: () => boolean;
}

/** Idle expiry of stable page sets when no system property says otherwise (maximo-notes §2.5: 5 minutes). */
export const DEFAULT_IDLE_EXPIRY_SECONDS = 300;

/** Parameters that must never be echoed into hrefs (a key in a URL is a secret already exposed once). */
const SECRET_PARAMETERS = new Set(['apikey']);

/** Object-structure resources: collections, members, and their writes (maximo-notes §1, §2, §10). */
export async function oslcRoutes(app: FastifyInstance, options: OslcRoutesOptions): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const { resources } = options;
  registerWriteBodyParsers(app);

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
      if (action !== undefined) throw errors.unknownAction(action, structure.name);
      const params = readCollectionParams(request.query);
      const uniqueId = await resources.resolveId(structure, request.params.id);
      return sendResource(request, reply, options, structure, uniqueId, params, 200);
    },
  );

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
      const uniqueId = await resources.create(structure, body, request.user!, writeOptionsOf(request));
      const params = readCollectionParams(request.query);
      return sendWritten(request, reply, options, structure, uniqueId, params, 201, select);
    },
  );

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
      return sendWritten(
        request,
        reply,
        options,
        structure,
        uniqueId,
        readCollectionParams(request.query),
        204,
        select,
      );
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

  await childRoutes(app, options);
  schemaRoutes(app, options);
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

/**
 * What a collection answer covers when it is not an object structure's own collection: a lookup (src/lookups)
 * answers members of a target structure, narrowed by filters computed from a record, at its own address.
 */
export interface CollectionScope {
  /** Filters beyond the query's own. */
  extraFilters?: readonly Filter[];
  /** Structure name used in member hrefs (default: the name in the path). */
  osName?: string;
  /** Address of this collection without query (default: the structure's collection); page links build on it. */
  href?: string;
  /** The `href` of the collection itself when it is not the structure's (a child collection). */
  collectionHref?: string;
  /** Object structure whose page-size limit and stable page sets apply (default: `structure`'s name). */
  structureName?: string;
  /** Selection when the request has no `oslc.select` (default: member hrefs only). */
  defaultSelect?: SelectClause;
  /** How a member is written (default: `memberJson`); `index` is its position in this answer. */
  member?: (record: MemberRecord, options: ResponseOptions, index: number) => Record<string, unknown>;
}

/** What a collection request's query string alone decides. */
interface QueryTexts {
  params: CollectionParams;
  /** `?` and the request's parameters as the page's own href shows them (secrets left out), or nothing. */
  visible: string;
  /** The visible parameters but `pageno` and `stableId`, encoded: page links put those two first. */
  pageRest: string;
}

const textsByQuery = new BoundedCache<string, QueryTexts>(512);

/**
 * The collection parameters and link texts of a request, kept by the text of its query string: they depend on
 * nothing else, and clients send the same queries again and again (page after page, poll after poll).
 */
function queryTextsOf(request: FastifyRequest): QueryTexts {
  const at = request.url.indexOf('?');
  const text = at === -1 ? '' : request.url.slice(at + 1);
  return textsByQuery.getOrCompute(text, () => {
    const query = request.query as Readonly<Record<string, string>>;
    const visible = Object.entries(query).filter(([name]) => !SECRET_PARAMETERS.has(name.toLowerCase()));
    // `addschema` is not repeated in page links: the schema comes with the first page (docs/compatibility.md).
    const rest = visible.filter(([name]) => name !== 'pageno' && name !== 'stableId' && name !== 'addschema');
    return {
      params: readCollectionParams(query),
      visible: visible.length === 0 ? '' : `?${new URLSearchParams(visible).toString()}`,
      pageRest: new URLSearchParams(rest).toString(),
    };
  });
}

/**
 * The address of another page: `pageno` first (as the deployed systems write it), then `stableId` if any. (A
 * module function, not a closure per request: the dev runner names every closure it creates, at a cost.)
 */
function pageHref(base: string, texts: QueryTexts, pageNumber: number, stableId?: string): string {
  const first = new URLSearchParams([
    ['pageno', String(pageNumber)],
    ...(stableId === undefined ? [] : [['stableId', stableId]]),
  ]).toString();
  return `${base}?${texts.pageRest === '' ? first : `${first}&${texts.pageRest}`}`;
}

/** A collection GET: count, distinct values, or one page of members (maximo-notes §2, §10.10). */
export async function sendCollection(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  scope: CollectionScope = {},
): Promise<FastifyReply> {
  const { resources } = options;
  const extraFilters = scope.extraFilters ?? [];
  const texts = queryTextsOf(request);
  const { params } = texts;
  const query =
    scope.defaultSelect !== undefined && params.query.select === undefined
      ? { ...params.query, select: scope.defaultSelect }
      : params.query;
  const plan = resources.plan(structure, query, params.planKey);
  const structureName = scope.structureName ?? structure.name;
  const responseOptions = {
    ...responseOptionsFor(request, options, params),
    ...(scope.osName !== undefined && { osName: scope.osName }),
  };
  if (plan.groupBy) {
    const groups = await resources.groups(plan, extraFilters);
    const base = scope.href ?? collectionHref(responseOptions.links, responseOptions.osName);
    const query = request.query as Readonly<Record<string, string>>;
    return sendJson(reply, 200, groupsJson(groups, plan.groupBy, base, query));
  }
  if (params.countOnly)
    return sendJson(reply, 200, { totalCount: await resources.count(plan, extraFilters) });
  if (params.distinct !== undefined) {
    const values = await resources.distinct(plan, params.distinct, extraFilters);
    return sendJson(reply, 200, values.map(toJson));
  }
  const limit = options.maxPageSize(structureName);
  const pageSize = params.pageSize ?? limit;
  if (pageSize > limit) throw pageSizeExceeded(pageSize, limit);
  const window = { limit: pageSize, offset: (params.pageNumber - 1) * pageSize };
  const withCount = params.collectionCount || options.collectionCount?.() === true;
  let page: PageOfMembers;
  let stableId: string | undefined;
  if (params.stableId !== undefined || params.stablePaging) {
    // Later pages read the set fixed by the first request; the where clause and order of this one no longer count.
    const owner = { objectStructure: structureName, userid: request.user?.userid ?? '' };
    const idleSeconds = options.idleExpiry();
    stableId = params.stableId ?? (await resources.createStableSet(plan, owner, idleSeconds, extraFilters));
    const { totalCount, ...stablePage } = await resources.stablePage({
      plan,
      stableId,
      owner,
      window,
      idleSeconds,
      reader: request.user,
    });
    page = withCount ? { ...stablePage, totalCount } : stablePage;
  } else {
    page = await resources.page({
      plan,
      window,
      extraFilters,
      withCount,
      reader: request.user,
    });
  }
  const shaping = { ...responseOptions, domains: page.domains };
  const base = scope.href ?? collectionHref(shaping.links, shaping.osName);
  const render = scope.member;
  const json = collectionJson(
    page.members.map((member, index) =>
      render === undefined ? memberJson(member, shaping) : render(member, shaping, index),
    ),
    {
      ...(scope.collectionHref !== undefined && { collectionHref: scope.collectionHref }),
      href: `${base}${texts.visible}`,
      pageNumber: params.pageNumber,
      ...(page.hasMore && { nextHref: pageHref(base, texts, params.pageNumber + 1, stableId) }),
      // Stable pages are read forwards only (maximo-notes §2.5).
      ...(params.pageNumber > 1 &&
        stableId === undefined && { previousHref: pageHref(base, texts, params.pageNumber - 1) }),
      ...(page.totalCount !== undefined && {
        totalCount: page.totalCount,
        totalPages: Math.ceil(page.totalCount / pageSize),
      }),
      ...(readFlag((request.query as Record<string, string>).addschema) === true && {
        schema: selectedSchema(structure, plan.root, [], options.root, shaping.osName),
      }),
    },
    shaping,
  );
  return sendJson(reply, 200, json);
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

/** /oslc answers namespaced JSON unless `lean=1`; /api answers lean JSON unless `lean=0` (docs/compatibility.md). */
export function isLean(root: ApiRoot, lean: boolean | undefined): boolean {
  return lean ?? root === 'api';
}

export function responseOptionsFor(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  params: CollectionParams,
): Omit<ResponseOptions, 'domains'> {
  const links: Links = linksFor(request, options.contextRoot, options.root, params.relative);
  return {
    links,
    osName: (request.params as { os: string }).os.toLowerCase(),
    lean: isLean(options.root, params.lean),
    dropNulls: params.dropNulls,
    internalValues: params.internalValues,
    collectionRefs: params.collectionRefs,
  };
}

/** Everything of a resource when the client names nothing: all attributes and every child collection. */
export function fullSelect(node: StructureNode): SelectItem[] {
  const position = { line: 1, column: 1 };
  return [
    { kind: 'all', position },
    ...node.children.map((child): SelectItem => ({
      kind: 'child',
      name: child.name,
      items: fullSelect(child),
      position,
    })),
  ];
}

export async function sendResource(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  uniqueId: number,
  params: CollectionParams,
  status: number,
  select?: SelectClause,
): Promise<FastifyReply> {
  const { json, member } = await resourceBody(request, options, structure, uniqueId, params, select);
  reply.header('etag', etagOf(member.values.rowstamp));
  return sendJson(reply, status, json);
}

/** A resource as a GET answers it (all of it, or `oslc.select`, or `select` when given), with its record. */
export async function resourceBody(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  uniqueId: number,
  params: CollectionParams,
  select?: SelectClause,
): Promise<{ json: Record<string, unknown>; member: MemberRecord }> {
  const selectClause = select ?? params.query.select ?? { items: fullSelect(structure.root) };
  // A resource is addressed by its id: none of the collection's filters apply to it.
  const query: QueryRequest = {
    ...params.query,
    select: selectClause,
    where: undefined,
    savedQuery: undefined,
    search: undefined,
    timeline: undefined,
  };
  const plan = options.resources.plan(structure, query);
  const page = await options.resources.page({
    plan,
    window: { limit: 1, offset: 0 },
    extraFilters: [options.resources.byUniqueId(structure, uniqueId)],
    withCount: false,
    reader: request.user,
  });
  const member = page.members[0];
  if (!member) throw errors.resourceNotFound(structure.name, String(uniqueId));
  const shaping = { ...responseOptionsFor(request, options, params), domains: page.domains };
  return { json: resourceJson(memberJson(member, shaping), shaping), member };
}

/** After a create or update: `Location`, and the resource itself when a `properties` header asks for it. */
export async function sendWritten(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  uniqueId: number,
  params: CollectionParams,
  status: 201 | 204,
  /** The `properties` header, parsed before the write (see propertiesOfWrite). */
  wanted: SelectClause | undefined,
): Promise<FastifyReply> {
  const links = linksFor(request, options.contextRoot, options.root, false);
  const page = await options.resources.page({
    plan: options.resources.plan(structure, { select: { items: [] } }),
    window: { limit: 1, offset: 0 },
    extraFilters: [options.resources.byUniqueId(structure, uniqueId)],
    withCount: false,
  });
  const member = page.members[0];
  if (member) {
    reply.header(
      'location',
      resourceHref(links, (request.params as { os: string }).os.toLowerCase(), restIdOf(member)),
    );
    reply.header('etag', etagOf(member.values.rowstamp));
  }
  if (wanted === undefined) return status === 201 ? reply.code(201).send() : reply.code(204).send();
  return sendResource(
    request,
    reply,
    options,
    structure,
    uniqueId,
    params,
    status === 201 ? 201 : 200,
    wanted,
  );
}
