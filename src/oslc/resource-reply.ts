import type { FastifyReply, FastifyRequest } from 'fastify';
import { linksFor, resourceHref } from '../http/links.js';
import { sendJson } from '../http/reply.js';
import type { ObjectStructure, StructureNode } from '../metadata/registry.js';
import type { CollectionParams } from './collection-params.js';
import { etagOf } from './etags.js';
import { addInlineMembers } from './inline-members.js';
import type { MemberRecord, SelectClause, SelectItem } from './query/index.js';
import type { Row } from './repository.js';
import { memberJson, resourceJson, restIdOfValues } from './response.js';
import { responseOptionsFor, type OslcRoutesOptions } from './route-options.js';

/*
 * How the routes answer one resource, shared by every route file (members, child members, BULK, actions): the
 * resource as a GET reads it, with its ETag, and the answer to a write (`Location`, and the resource when a
 * `properties` header asks for it).
 */

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

/** Which resource to answer: by unique id, or by the id its address names (a rest id or a unique id, as sent). */
type ResourceAddress = { uniqueId: number; id?: undefined } | { id: string; uniqueId?: undefined };

type ResourceRead = ResourceAddress & {
  structure: ObjectStructure;
  params: CollectionParams;
  select?: SelectClause;
};

/** A resource as a GET answers it (all of it, or `oslc.select`, or `select` when given), with its ETag. */
export async function sendResource(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  resource: ResourceRead,
  status: number,
): Promise<FastifyReply> {
  const { json, member } = await resourceBody(request, options, resource);
  reply.header('etag', etagOf(member.values.rowstamp));
  return sendJson(reply, status, json);
}

/** A resource as a GET answers it (all of it, or `oslc.select`, or `select` when given), with its record. */
export async function resourceBody(
  request: FastifyRequest,
  options: OslcRoutesOptions,
  resource: ResourceRead,
): Promise<{ json: Record<string, unknown>; member: MemberRecord }> {
  const { structure, params } = resource;
  const read = {
    query: params.query,
    select: resource.select ?? params.query.select ?? { items: fullSelect(structure.root) },
    reader: request.user,
    // The plan of the request's own texts is kept; a `select` given by the caller is not of them.
    ...(resource.select === undefined && params.planKey !== undefined && { planKey: params.planKey }),
  };
  const { member, domains } =
    resource.id === undefined
      ? await options.resources.readResource(structure, resource.uniqueId, read)
      : await options.resources.readAt(structure, resource.id, read);
  const shaping = { ...responseOptionsFor(request, options, params), domains };
  const json = memberJson(member, shaping);
  // Members a module adds (`doclinks{*}`) when the client's select names them.
  await addInlineMembers(
    options.resources.inlineMembersOf(structure.root.object.name),
    structure,
    read.select,
    [{ values: member.values, json }],
    shaping.lean,
  );
  return { json: resourceJson(json, shaping), member };
}

/** After a create or update: `Location`, and the resource itself when a `properties` header asks for it. */
export async function sendWritten(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  written: {
    structure: ObjectStructure;
    uniqueId: number;
    params: CollectionParams;
    /** The `properties` header, parsed before the write (see propertiesOfWrite). */
    wanted: SelectClause | undefined;
    /** The record's row as the write left it, when the write has it (a create); else it is read. */
    row?: Readonly<Row>;
  },
  status: 201 | 204,
): Promise<FastifyReply> {
  const { structure, uniqueId, params, wanted } = written;
  const links = linksFor(request, options.contextRoot, options.root, false);
  const values =
    written.row ??
    (
      await options.resources.readOne({
        structure,
        query: {},
        select: { items: [] },
        filters: [options.resources.byUniqueId(structure, uniqueId)],
      })
    )?.member.values;
  if (values) {
    reply.header(
      'location',
      resourceHref(
        links,
        (request.params as { os: string }).os.toLowerCase(),
        restIdOfValues(structure.root.object, values),
      ),
    );
    reply.header('etag', etagOf(values.rowstamp));
  }
  if (wanted === undefined) return status === 201 ? reply.code(201).send() : reply.code(204).send();
  return sendResource(
    request,
    reply,
    options,
    { structure, uniqueId, params, select: wanted },
    status === 201 ? 201 : 200,
  );
}
