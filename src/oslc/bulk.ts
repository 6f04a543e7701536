import type { FastifyReply, FastifyRequest } from 'fastify';
import { originOf } from '../audit/context.js';
import { hasRight } from '../auth/hook.js';
import type { Right } from '../auth/types.js';
import { errorBody, errors, MaximoError } from '../errors.js';
import { errorMessagesHref, linksFor, resourceHref } from '../http/links.js';
import { readFlag } from '../http/query-string.js';
import { sendJson } from '../http/reply.js';
import type { ObjectStructure } from '../metadata/registry.js';
import { isMergePatch, methodOverride, propertiesOfWrite } from './bodies.js';
import { parsed, readCollectionParams } from './collection-params.js';
import { parseSelect, type SelectClause } from './query/index.js';
import { restIdOf } from './response.js';
import type { OslcRoutesOptions } from './route-options.js';
import { resourceBody, sendWritten } from './resource-reply.js';
import { translateDatabaseError } from './database-errors.js';
import type { ResourceWriter } from './write-unit.js';
import { inSavepoint } from './transaction-repository.js';
import { writeOptionsOf } from './write-options.js';

/**
 * `x-method-override: BULK` and `SYNC` on a collection (docs/compatibility.md, "BULK and SYNC"). Every element of a
 * BULK body is one write of its own, in its own transaction, through the same write path as a single request: one
 * element's failure is reported in its place and undoes nothing else. With `allornothing: 1` the elements share one
 * transaction instead, and one failure undoes them all.
 */

type Element = Record<string, unknown>;

interface BulkWrite {
  method: 'create' | 'update' | 'merge' | 'delete';
  /** Member id (rest id or unique id) of an update or delete. */
  id?: string;
  data: Element;
  /** What to send back of the written resource (`_meta.properties`, else the request's `properties` header). */
  properties?: SelectClause;
}

/** Largest BULK body, in elements: each is a transaction of its own, answered in one response. */
const MAX_BULK_ELEMENTS = 1000;

export async function sendBulk(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
): Promise<FastifyReply> {
  const body = request.body;
  if (!Array.isArray(body)) throw errors.badRequest('A BULK request body must be a JSON array.');
  if (body.length > MAX_BULK_ELEMENTS) {
    throw errors.badRequest(`A BULK request can carry at most ${MAX_BULK_ELEMENTS} elements.`);
  }
  const lean = readFlag((request.query as Record<string, string | undefined>).lean) !== false;
  const messagesBase = errorMessagesHref(linksFor(request, options.contextRoot, options.root, false));
  const failure = (error: unknown): Element => {
    const maximo = error instanceof MaximoError ? error : errors.internal();
    if (!(error instanceof MaximoError)) request.log.error({ err: error }, 'BULK element failed');
    return {
      _responsedata: errorBody(maximo, { messagesBase, lean }),
      _responsemeta: { status: String(maximo.status) },
    };
  };
  if (readFlag(String(request.headers.allornothing ?? '')) === true) {
    return sendJson(reply, 200, await allOrNothing(request, options, structure, body, failure));
  }
  const results: Element[] = [];
  for (const element of body) {
    try {
      results.push(
        await bulkElement(request, options, structure, readElement(request, element, structure, options)),
      );
    } catch (error) {
      results.push(failure(error));
    }
  }
  return sendJson(reply, 200, results);
}

/** Thrown at the end of an all-or-nothing request with a failed element: the transaction rolls back. */
class ElementFailed extends Error {}

/**
 * `allornothing: 1` (docs/compatibility.md, "BULK and SYNC"): every element in one transaction, each in a savepoint
 * of its own so that every element is tried and answers its own outcome. When one fails, nothing is written: the
 * failed ones answer their error, the others EAS0075E naming the failed ones. When all succeed, they commit
 * together and answer as they would one by one.
 */
async function allOrNothing(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  body: readonly unknown[],
  failure: (error: unknown) => Element,
): Promise<Element[]> {
  const outcomes: Array<{ write: BulkWrite; uniqueId: number } | { error: unknown }> = [];
  try {
    await options.resources.writeWith(
      request.user!,
      { origin: originOf(request) },
      async (writer) => {
        for (const element of body) {
          try {
            const write = readElement(request, element, structure, options);
            const uniqueId = await inSavepoint(writer.db, () =>
              writeElement(request, options, structure, write, writer),
            );
            outcomes.push({ write, uniqueId });
          } catch (error) {
            outcomes.push({ error: translateDatabaseError(error) });
          }
        }
        if (outcomes.some((outcome) => 'error' in outcome)) throw new ElementFailed();
      },
      () => ({ structure, uniqueId: 0 }),
    );
  } catch (error) {
    if (!(error instanceof ElementFailed)) throw error;
    const failed = outcomes.flatMap((outcome, index) => ('error' in outcome ? [index] : []));
    return outcomes.map((outcome) =>
      failure('error' in outcome ? outcome.error : errors.bulkRolledBack(failed.join(', '))),
    );
  }
  // Answered once committed: reading the written resources takes a connection of its own.
  const results: Element[] = [];
  for (const outcome of outcomes) {
    if ('error' in outcome) continue;
    results.push(await answerOf(request, options, structure, outcome.write, outcome.uniqueId));
  }
  return results;
}

/** One element written through `writer`, in its transaction; answers the written record's unique id. */
async function writeElement(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  write: BulkWrite,
  writer: ResourceWriter,
): Promise<number> {
  if (!hasRight(request.user!, structure.name, RIGHTS[write.method]))
    throw errors.notAuthorized(structure.name);
  const root = structure.root;
  if (write.method === 'create') {
    return Number((await writer.insert(root, write.data, {}))[root.object.uniqueId]);
  }
  const uniqueId = await options.resources.resolveId(structure, write.id!, writer.db);
  if (write.method === 'delete') await writer.remove(root, uniqueId);
  else await writer.update(root, uniqueId, write.data, write.method === 'merge', true);
  return uniqueId;
}

/** One element in either form the clients send: flat with `_action` and `href`, or `_data` with `_meta`. */
function readElement(
  request: FastifyRequest,
  element: unknown,
  structure: ObjectStructure,
  options: OslcRoutesOptions,
): BulkWrite {
  if (typeof element !== 'object' || element === null || Array.isArray(element)) {
    throw errors.badRequest('Each element of a BULK request must be a JSON object.');
  }
  const item = element as Element;
  // Parsed before the element is written: a `properties` that does not parse refuses the element, not its answer.
  const headerProperties = propertiesOfWrite(request);
  const requestMerge = isMergePatch(request);
  if ('_meta' in item || '_data' in item) {
    const meta = objectOr(item._meta, '_meta');
    const data = objectOr(item._data, '_data');
    const uri = typeof meta.uri === 'string' ? meta.uri : undefined;
    const method = typeof meta.method === 'string' ? meta.method.toUpperCase() : uri ? 'PATCH' : 'POST';
    const metaProperties = typeof meta.properties === 'string' ? meta.properties.trim() : '';
    const properties = metaProperties === '' ? headerProperties : parsed(parseSelect, metaProperties);
    const base = { data, ...(properties !== undefined && { properties }) };
    if (method === 'POST') return { ...base, method: 'create' };
    if (method !== 'PATCH' && method !== 'MERGE' && method !== 'DELETE') {
      throw errors.badRequest(`The _meta.method ${method} is not one of POST, PATCH, MERGE and DELETE.`, {
        attrName: '_meta.method',
        attrValue: method,
      });
    }
    const id = memberId(uri, structure, options);
    if (method === 'DELETE') return { ...base, method: 'delete', id };
    return { ...base, method: method === 'MERGE' || requestMerge ? 'merge' : 'update', id };
  }
  const actionKey = Object.keys(item).find((name) => name.toLowerCase() === '_action');
  const action = actionKey === undefined ? '' : String(item[actionKey]).toLowerCase();
  const href = typeof item.href === 'string' ? item.href : undefined;
  const base = { data: item, ...(headerProperties !== undefined && { properties: headerProperties }) };
  if (action === 'add' || (action === '' && href === undefined)) return { ...base, method: 'create' };
  if (action === 'delete') return { ...base, method: 'delete', id: memberId(href, structure, options) };
  if (action === '' || action === 'update' || action === 'change' || action === 'addchange') {
    return { ...base, method: requestMerge ? 'merge' : 'update', id: memberId(href, structure, options) };
  }
  throw errors.badRequest(`The _action ${String(item[actionKey!])} is not one of Add, Update and Delete.`, {
    attrName: '_action',
    attrValue: String(item[actionKey!]),
  });
}

function objectOr(value: unknown, name: string): Element {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw errors.badRequest(`${name} must be a JSON object.`, { attrName: name });
  }
  return value as Element;
}

/**
 * The member id in an element's href: a member href of this object structure (absolute, relative, or with an
 * alias of its name), or a bare rest id or unique id.
 */
function memberId(href: string | undefined, structure: ObjectStructure, options: OslcRoutesOptions): string {
  if (href === undefined || href.trim() === '') {
    throw errors.badRequest('An update or delete element must name its member with href.', {
      attrName: 'href',
    });
  }
  const path = href.trim().split(/[?#]/)[0]!.replace(/\/+$/, '');
  const match = /(?:^|\/)os\/([^/]+)\/([^/]+)$/.exec(path);
  if (!match) {
    if (/^[^/]+$/.test(path)) return path;
    throw errors.badRequest(`The href ${href} does not name a member of ${structure.name}.`, {
      attrName: 'href',
      attrValue: href,
    });
  }
  if (options.resources.findObjectStructure(decodeURIComponent(match[1]!)) !== structure) {
    throw errors.badRequest(`The href ${href} does not name a member of ${structure.name}.`, {
      attrName: 'href',
      attrValue: href,
    });
  }
  return decodeURIComponent(match[2]!);
}

const RIGHTS: Readonly<Record<BulkWrite['method'], Right>> = {
  create: 'insert',
  update: 'update',
  merge: 'update',
  delete: 'delete',
};

async function bulkElement(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  write: BulkWrite,
): Promise<Element> {
  const user = request.user!;
  if (!hasRight(user, structure.name, RIGHTS[write.method])) throw errors.notAuthorized(structure.name);
  const { resources } = options;
  if (write.method === 'delete') {
    await resources.remove(structure, write.id!, user, { origin: originOf(request) });
    return answerOf(request, options, structure, write, 0);
  }
  const uniqueId =
    write.method === 'create'
      ? await resources.create(structure, write.data, user, { origin: originOf(request) })
      : await resources.update(structure, write.id!, write.data, user, {
          merge: write.method === 'merge',
          origin: originOf(request),
        });
  return answerOf(request, options, structure, write, uniqueId);
}

/** The answer of a written element: its status, the `Location` of a create, the resource when asked for. */
async function answerOf(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  write: BulkWrite,
  uniqueId: number,
): Promise<Element> {
  if (write.method === 'delete') return { _responsemeta: { status: '204' } };
  const params = readCollectionParams(request.query as Record<string, string>);
  // Without properties only the key is read, for the Location.
  const select = write.properties ?? parsed(parseSelect, structure.root.object.keys[0]!);
  const { json, member } = await resourceBody(request, options, { structure, uniqueId, params, select });
  const links = linksFor(request, options.contextRoot, options.root, false);
  const location = resourceHref(links, (request.params as { os: string }).os.toLowerCase(), restIdOf(member));
  const created = write.method === 'create';
  const status = write.properties === undefined ? (created ? '201' : '204') : created ? '201' : '200';
  return {
    ...(write.properties !== undefined && { _responsedata: json }),
    _responsemeta: { status, ...(created && { Location: location }) },
  };
}

/**
 * SYNC (and MERGESYNC, which is SYNC with `patchtype: MERGE`): the member the body's key values name is updated,
 * or created when there is none; answered as the create or the update would be.
 */
export async function sendSync(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
): Promise<FastifyReply> {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.badRequest('A SYNC request body must be a JSON object.');
  }
  const merge = methodOverride(request) === 'MERGESYNC' || isMergePatch(request);
  const select = propertiesOfWrite(request);
  const user = request.user!;
  const canUpdate = hasRight(user, structure.name, 'update');
  const { uniqueId, created } = await options.resources.sync(structure, body as Element, user, {
    merge,
    ...writeOptionsOf(request),
    mayUpdate: canUpdate,
  });
  const params = readCollectionParams(request.query as Record<string, string>);
  return sendWritten(
    request,
    reply,
    options,
    { structure, uniqueId, params, wanted: select },
    created ? 201 : 204,
  );
}
