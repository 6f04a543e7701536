import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors } from '../errors.js';
import { linksFor } from '../http/links.js';
import { readFlag } from '../http/query-string.js';
import type { ObjectStructure } from '../metadata/registry.js';
import { sendCollection } from '../oslc/collection-reply.js';
import type { OslcRoutesOptions } from '../oslc/route-options.js';
import { QueryStringSchema } from '../oslc/schemas.js';
import type { LookupPath, LookupService } from './service.js';

export interface LookupRoutesOptions extends OslcRoutesOptions {
  lookups: LookupService;
}

const NAME = '^[A-Za-z0-9_]{1,30}$';
const Id = Type.String({ minLength: 1, maxLength: 512 });

const RecordLookupParams = Type.Object({
  os: Type.String({ pattern: NAME }),
  id: Id,
  attribute: Type.String({ maxLength: 64 }),
});

const ChildLookupParams = Type.Object({
  os: Type.String({ pattern: NAME }),
  id: Id,
  child: Type.String({ pattern: NAME }),
  childId: Id,
  attribute: Type.String({ maxLength: 64 }),
});

/**
 * Lookups (`getlist~<attr>`, docs/lookups.md): the value list of an attribute of a record, a child record, a new
 * record (`newmbo`) or none (`zombie`). The list is a collection query of the target structure, answered by the
 * same code as `/os/<os>` (`sendCollection`), so select, where, orderBy, paging and counts behave identically.
 */
export async function lookupRoutes(app: FastifyInstance, options: LookupRoutesOptions): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const access = { kind: 'objectStructure', right: 'read' } as const;

  // The tag is a hash of the body: cheap next to the query, and it changes exactly when the answer does
  // (values, hrefs, paging), so a client may cache value lists and revalidate with If-None-Match.
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 200 || !(Buffer.isBuffer(payload) || typeof payload === 'string'))
      return payload;
    const tag = `"${createHash('sha256').update(payload).digest('base64url')}"`;
    reply.header('etag', tag);
    if (!matchesTag(request.headers['if-none-match'], tag)) return payload;
    reply.code(304).removeHeader('content-type');
    return '';
  });

  routes.get(
    '/os/:os/:id/getlist~:attribute',
    { schema: { params: RecordLookupParams, querystring: QueryStringSchema }, config: { access } },
    async (request, reply) => {
      const { id, attribute } = request.params;
      return answer(request, reply, options, { id }, attribute);
    },
  );

  routes.get(
    '/os/:os/:id/:child/:childId/getlist~:attribute',
    { schema: { params: ChildLookupParams, querystring: QueryStringSchema }, config: { access } },
    async (request, reply) => {
      const { id, child, childId, attribute } = request.params;
      const structure = request.objectStructure!;
      const node = structure.root.children.find((candidate) => candidate.name === child.toLowerCase());
      if (!node) throw errors.routeNotFound(request.method, request.url.split('?')[0] ?? '');
      return answer(request, reply, options, { id, child: { node, id: childId } }, attribute);
    },
  );
}

async function answer(
  request: FastifyRequest,
  reply: FastifyReply,
  options: LookupRoutesOptions,
  path: LookupPath,
  attribute: string,
): Promise<FastifyReply> {
  const structure: ObjectStructure = request.objectStructure!;
  const query = request.query as Readonly<Record<string, string>>;
  const lookup = await options.lookups.query(structure, path, attribute, query.setupdata);
  const links = linksFor(request, options.contextRoot, options.root, readFlag(query.relativeuri) === true);
  const os = (request.params as { os: string }).os.toLowerCase();
  const record = path.child ? `${path.id}/${path.child.node.name}/${path.child.id}` : path.id;
  return sendCollection(request, reply, options, lookup.target, {
    extraFilters: lookup.filters,
    osName: lookup.target.name.toLowerCase(),
    href: `${links.api}/os/${os}/${record}/getlist~${attribute.toLowerCase()}`,
  });
}

/** `If-None-Match: "a", W/"b"` or `*`; weak tags compare equal to strong ones for GET (RFC 9110 §13.1.2). */
function matchesTag(header: string | string[] | undefined, tag: string): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(',') : header;
  return text
    .split(',')
    .map((part) => part.trim().replace(/^W\//, ''))
    .some((candidate) => candidate === '*' || candidate === tag);
}
