import type { FastifyReply, FastifyRequest } from 'fastify';
import { collectionHref } from '../http/links.js';
import { readFlag } from '../http/query-string.js';
import { sendJson } from '../http/reply.js';
import type { ObjectStructure } from '../metadata/registry.js';
import { BoundedCache } from '../util/bounded-cache.js';
import { readCollectionParams, type CollectionParams } from './collection-params.js';
import { groupsJson } from './group-by.js';
import { selectedSchema } from './json-schema.js';
import {
  type Filter,
  type MemberRecord,
  type PageWindow,
  pageSizeExceeded,
  type QueryPlan,
  type SelectClause,
} from './query/index.js';
import { collectionJson, memberJson, type ResponseOptions } from './response.js';
import { addInlineMembers } from './inline-members.js';
import { responseOptionsFor, type OslcRoutesOptions } from './route-options.js';
import type { PageOfMembers } from './resource-reader.js';
import { toJson } from './values.js';

/*
 * A collection answer: the one code behind `/os/<os>`, child collections and lookups, so select, where, orderBy,
 * paging and counts behave identically wherever a collection is read.
 */

/** Parameters that must never be echoed into hrefs (a key in a URL is a secret already exposed once). */
const SECRET_PARAMETERS = new Set(['apikey']);

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

/** What a page of a collection is read with. */
interface PageRead {
  plan: QueryPlan;
  params: CollectionParams;
  structureName: string;
  window: PageWindow;
  extraFilters: readonly Filter[];
}

/** A page of members, from the request's stable page set (started now if asked for) or read as planned. */
async function readPage(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  read: PageRead,
): Promise<{ page: PageOfMembers; stableId?: string }> {
  const { resources } = options;
  const { plan, params, window, extraFilters } = read;
  const withCount = params.collectionCount || options.collectionCount?.() === true;
  if (params.stableId === undefined && !params.stablePaging) {
    return {
      page: await resources.page({ plan, window, extraFilters, withCount, reader: request.user }),
    };
  }
  // Later pages read the set fixed by the first request; the where clause and order of this one no longer count.
  const owner = { objectStructure: read.structureName, userid: request.user?.userid ?? '' };
  const idleSeconds = options.idleExpiry();
  const stableId =
    params.stableId ?? (await resources.createStableSet(plan, owner, idleSeconds, extraFilters));
  const { totalCount, ...stablePage } = await resources.stablePage({
    plan,
    stableId,
    owner,
    window,
    idleSeconds,
    reader: request.user,
  });
  return { page: withCount ? { ...stablePage, totalCount } : stablePage, stableId };
}

/** A collection GET: count, distinct values, or one page of members (docs/compatibility.md, "Paging and order"). */
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
  const { page, stableId } = await readPage(request, options, {
    plan,
    params,
    structureName,
    window,
    extraFilters,
  });
  const shaping = { ...responseOptions, domains: page.domains };
  const base = scope.href ?? collectionHref(shaping.links, shaping.osName);
  const render = scope.member;
  const members = page.members.map((member, index) =>
    render === undefined ? memberJson(member, shaping) : render(member, shaping, index),
  );
  // Members a module adds (`doclinks{*}`) when the client's select names them, read once for the page.
  await addInlineMembers(
    resources.inlineMembersOf(structure.root.object.name),
    structure,
    query.select,
    page.members.map((member, index) => ({ values: member.values, json: members[index]! })),
    shaping.lean,
  );
  const json = collectionJson(
    members,
    {
      ...(scope.collectionHref !== undefined && { collectionHref: scope.collectionHref }),
      href: `${base}${texts.visible}`,
      pageNumber: params.pageNumber,
      ...(page.hasMore && { nextHref: pageHref(base, texts, params.pageNumber + 1, stableId) }),
      // Stable pages are read forwards only (src/oslc/query/README.md, "Paging").
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
