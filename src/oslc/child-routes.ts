import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errors } from '../errors.js';
import { linksFor, resourceHref } from '../http/links.js';
import { readFlag } from '../http/query-string.js';
import { sendJson } from '../http/reply.js';
import type { ObjectStructure } from '../metadata/registry.js';
import {
  childScope,
  childStructure,
  inheritedValues,
  parseChildPath,
  uniqueIdFilter,
  type ChildStep,
  type ChildTarget,
} from './child-path.js';
import { isMergePatch, methodOverride, propertiesOfWrite } from './bodies.js';
import { readCollectionParams, type CollectionParams } from './collection-params.js';
import type { SelectClause } from './query/index.js';
import { childMemberJson, resourceJson } from './response.js';
import { sendCollection } from './collection-reply.js';
import { responseOptionsFor, type OslcRoutesOptions } from './route-options.js';
import { fullSelect } from './resource-reply.js';
import { ChildParams, QueryStringSchema, WriteHeaders } from './schemas.js';
import { checkIfMatch, etagOf } from './etags.js';
import type { ResourceWriter } from './write-unit.js';
import { writeOptionsOf } from './write-options.js';

/** Every attribute of the members of a child collection read without `oslc.select` (docs/compatibility.md). */
const ALL_ATTRIBUTES: SelectClause = { items: [{ kind: 'all', position: { line: 1, column: 1 } }] };

interface ChildAddress {
  structure: ObjectStructure;
  id: string;
  steps: ChildStep[];
  /** The child names of the address, `/`-joined (`maxuser/groupuser`): which child structure answers it. */
  path: string;
  /** The address as requested, absolute: the collection's `href`, or the member's `localref`. */
  href: string;
}

/**
 * Child collections and their members as resources (docs/compatibility.md, "Child collections"):
 * `GET <resource>/<child>` is a collection query of the child, scoped by the parent's key; a member's `localref`
 * (`<resource>/<child>/<n>-<unique id>`, to any depth) can be read, updated and deleted; `POST <resource>/<child>`
 * adds a child. Writes go through the parent's write path (`ResourceService.writeWith`) and need the update right
 * on the object structure: changing a child changes the resource.
 */
export async function childRoutes(app: FastifyInstance, options: OslcRoutesOptions): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();

  routes.get(
    '/os/:os/:id/*',
    {
      schema: { params: ChildParams, querystring: QueryStringSchema },
      config: { access: { kind: 'objectStructure', right: 'read' } },
    },
    async (request, reply) => sendChildAddress(request, reply, options),
  );

  routes.post(
    '/os/:os/:id/*',
    {
      schema: { params: ChildParams, querystring: QueryStringSchema, headers: WriteHeaders },
      config: { access: { kind: 'objectStructure', right: 'update' } },
    },
    async (request, reply) => {
      const address = childAddress(request, options);
      const override = methodOverride(request) ?? '';
      const isMember = address.steps.at(-1)?.member !== undefined;
      if (!['', 'PATCH', 'MERGE', 'DELETE'].includes(override)) {
        throw errors.methodNotAllowed(`x-method-override ${override} on a child address`);
      }
      if (override === 'DELETE' && isMember) return removeChild(request, reply, options, address);
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw errors.badRequest('The request body must be a JSON object.');
      }
      const values = body as Record<string, unknown>;
      if (!isMember && override === '') return addChild(request, reply, options, address, values);
      if (isMember && (override === 'PATCH' || override === 'MERGE')) {
        const merge = override === 'MERGE' || isMergePatch(request);
        return updateChild(request, reply, options, address, values, merge);
      }
      throw errors.methodNotAllowed(
        override === ''
          ? 'POST on a child member without x-method-override'
          : `x-method-override ${override}`,
      );
    },
  );

  routes.delete(
    '/os/:os/:id/*',
    {
      schema: { params: ChildParams },
      config: { access: { kind: 'objectStructure', right: 'update' } },
    },
    async (request, reply) => {
      const address = childAddress(request, options);
      if (address.steps.at(-1)?.member === undefined)
        throw errors.methodNotAllowed('DELETE on a child collection');
      return removeChild(request, reply, options, address);
    },
  );
}

/** A GET at a child address: the child member it names, or a page of the child collection. */
async function sendChildAddress(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
): Promise<FastifyReply> {
  const { resources } = options;
  const address = childAddress(request, options);
  const uniqueId = await resources.resolveId(address.structure, address.id);
  const target = await resources.resolveChild(address.structure, address.id, uniqueId, address.steps);
  const child = childStructure(address.structure, target.node, address.path);
  if (target.member) {
    const memberId = Number(target.member[target.node.object.uniqueId]);
    return sendChildMember(request, reply, options, address, target, memberId, 200);
  }
  const parentObject = target.parentNode.object.name;
  const uniqueIdName = target.node.object.uniqueId;
  return sendCollection(request, reply, options, child, {
    extraFilters: [childScope(target.node, target.parent)],
    href: address.href,
    collectionHref: address.href,
    structureName: address.structure.name,
    defaultSelect: ALL_ATTRIBUTES,
    member: (record, shaping, index) =>
      childMemberJson(
        record,
        shaping,
        parentObject,
        `${address.href}/${index}-${String(record.values[uniqueIdName])}`,
      ),
  });
}

function childAddress(request: FastifyRequest, options: OslcRoutesOptions): ChildAddress {
  const params = request.params as { os: string; id: string; '*': string };
  const structure = request.objectStructure!;
  const steps = parseChildPath(params['*']);
  if (!steps) throw errors.resourceNotFound(structure.name, `${params.id}/${params['*']}`);
  const links = linksFor(request, options.contextRoot, options.root, false);
  const relative = readFlag((request.query as Record<string, string | undefined>).relativeuri) === true;
  const shown = relative ? linksFor(request, options.contextRoot, options.root, true) : links;
  return {
    structure,
    id: params.id,
    steps,
    path: steps.map((step) => step.name).join('/'),
    href: `${resourceHref(shown, params.os.toLowerCase(), params.id)}/${params['*'].replace(/\/+$/, '')}`,
  };
}

/** One child member at its `localref`: all of it, or what `oslc.select` (or a `properties` header) names. */
async function sendChildMember(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  address: ChildAddress,
  target: Pick<ChildTarget, 'node' | 'parent' | 'parentNode'>,
  memberId: number,
  status: number,
  select?: SelectClause,
): Promise<FastifyReply> {
  const params: CollectionParams = readCollectionParams(request.query as Record<string, string>);
  // A member is addressed by its localref: none of the collection's filters apply to it.
  const found = await options.resources.readOne({
    structure: childStructure(address.structure, target.node, address.path),
    query: params.query,
    select: select ?? params.query.select ?? { items: fullSelect(target.node) },
    filters: [childScope(target.node, target.parent), uniqueIdFilter(target.node, memberId)],
    reader: request.user,
  });
  if (!found) throw errors.resourceNotFound(target.node.object.name, String(memberId));
  const { member, domains } = found;
  const shaping = { ...responseOptionsFor(request, options, params), domains };
  reply.header('etag', etagOf(member.values.rowstamp));
  const json = childMemberJson(member, shaping, target.parentNode.object.name, address.href);
  return sendJson(reply, status, resourceJson(json, shaping));
}

/**
 * One write at a child address, through the write path: the root resource and the child the address names are
 * resolved inside the write's transaction, and a `transactionid` is recorded with the root resource.
 */
async function writeAtChild<T>(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  address: ChildAddress,
  work: (writer: ResourceWriter, target: ChildTarget) => Promise<T>,
): Promise<{ target: ChildTarget; value: T }> {
  const { resources } = options;
  const written = await resources.writeWith(
    request.user!,
    writeOptionsOf(request),
    async (writer) => {
      const rootId = await resources.resolveId(address.structure, address.id, writer.db);
      const target = await resources.resolveChild(
        address.structure,
        address.id,
        rootId,
        address.steps,
        writer.db,
      );
      return { rootId, target, value: await work(writer, target) };
    },
    ({ rootId }) => ({ structure: address.structure, uniqueId: rootId }),
  );
  return { target: written.target, value: written.value };
}

/** The stored child a member address names, checked against the request's `If-Match`. */
async function addressedMember(
  request: FastifyRequest,
  writer: ResourceWriter,
  target: ChildTarget,
): Promise<number> {
  const memberId = Number(target.member![target.node.object.uniqueId]);
  await checkIfMatch(writer.db, target.node.object, memberId, writeOptionsOf(request).ifMatch);
  return memberId;
}

async function addChild(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  address: ChildAddress,
  body: Record<string, unknown>,
): Promise<FastifyReply> {
  const select = propertiesOfWrite(request);
  const { target, value: memberId } = await writeAtChild(
    request,
    options,
    address,
    async (writer, target) => {
      const row = await writer.insert(target.node, body, inheritedValues(target.node, target.parent));
      return Number(row[target.node.object.uniqueId]);
    },
  );
  // The position part of a localref is not read back (docs/compatibility.md): a new child is written as 0.
  const memberAddress = { ...address, href: `${address.href}/0-${memberId}` };
  reply.header('location', memberAddress.href);
  if (select === undefined) return reply.code(201).send();
  return sendChildMember(request, reply, options, memberAddress, target, memberId, 201, select);
}

async function updateChild(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  address: ChildAddress,
  body: Record<string, unknown>,
  merge: boolean,
): Promise<FastifyReply> {
  const select = propertiesOfWrite(request);
  const { target, value: memberId } = await writeAtChild(
    request,
    options,
    address,
    async (writer, target) => {
      const memberId = await addressedMember(request, writer, target);
      await writer.update(target.node, memberId, body, merge, true);
      return memberId;
    },
  );
  if (select === undefined) return reply.code(204).send();
  return sendChildMember(request, reply, options, address, target, memberId, 200, select);
}

async function removeChild(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  address: ChildAddress,
): Promise<FastifyReply> {
  await writeAtChild(request, options, address, async (writer, target) => {
    await writer.remove(target.node, await addressedMember(request, writer, target));
  });
  return reply.code(204).send();
}
