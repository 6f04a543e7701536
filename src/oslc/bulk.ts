import type { FastifyReply, FastifyRequest } from 'fastify';
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
import { resourceBody, sendWritten } from './routes.js';
import { writeOptionsOf } from './write-options.js';

/**
 * `x-method-override: BULK` and `SYNC` on a collection (docs/compatibility.md, "BULK and SYNC"). Every element of a
 * BULK body is one write of its own, in its own transaction, through the same write path as a single request: one
 * element's failure is reported in its place and undoes nothing else.
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
  if (readFlag(String(request.headers.allornothing ?? '')) === true) {
    throw errors.badRequest('allornothing is not supported: each BULK element is written on its own.', {
      attrName: 'allornothing',
    });
  }
  const lean = readFlag((request.query as Record<string, string | undefined>).lean) !== false;
  const messagesBase = errorMessagesHref(linksFor(request, options.contextRoot, options.root, false));
  const results: Element[] = [];
  for (const element of body) {
    try {
      results.push(
        await bulkElement(request, options, structure, readElement(request, element, structure, options)),
      );
    } catch (error) {
      const maximo = error instanceof MaximoError ? error : errors.internal();
      if (!(error instanceof MaximoError)) request.log.error({ err: error }, 'BULK element failed');
      results.push({
        _responsedata: errorBody(maximo, { messagesBase, lean }),
        _responsemeta: { status: String(maximo.status) },
      });
    }
  }
  return sendJson(reply, 200, results);
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
    await resources.remove(structure, write.id!, user);
    return { _responsemeta: { status: '204' } };
  }
  const uniqueId =
    write.method === 'create'
      ? await resources.create(structure, write.data, user)
      : await resources.update(structure, write.id!, write.data, user, { merge: write.method === 'merge' });
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
