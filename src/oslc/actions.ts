import type { FastifyReply, FastifyRequest } from 'fastify';
import { originOf } from '../audit/context.js';
import { hasRight } from '../auth/hook.js';
import { errors } from '../errors.js';
import type { ObjectStructure } from '../metadata/registry.js';
import type { AttributeDef } from '../metadata/types.js';
import { methodOverride, propertiesOfWrite } from './bodies.js';
import { readCollectionParams } from './collection-params.js';
import { PREFIXES } from './response.js';
import { isLean, type OslcRoutesOptions } from './route-options.js';
import { fullSelect, sendWritten } from './resource-reply.js';
import type { Row } from './repository.js';
import type { StatusChange } from './resource-writes.js';
import { sendJson } from '../http/reply.js';
import { toJson, toStored } from './values.js';

/**
 * `action=` on object-structure routes (docs/compatibility.md, "Actions"). A request that names an action is
 * answered by that action or refused with 400 `EAS0110E`: it never falls through to the plain read or write (an
 * update applied in place of an action the service does not know would be a write the client did not ask for).
 */

/** The `action` parameter when the request has one, even empty. */
export function actionOf(request: FastifyRequest): string | undefined {
  const query = request.query as Readonly<Record<string, string>>;
  return Object.hasOwn(query, 'action') ? query.action!.trim() : undefined;
}

const NEW = /^new$/i;
const DUPLICATE = /^duplicate$/i;
const CHANGE_STATUS = /^wsmethod:changestatus$/i;
const CREATE_FOLLOW_UP = /^wsmethod:createfollowup$/i;
const MEMO_LENGTH = 254;

/** `GET|POST /os/<os>?action=new`: the record a create would start from, nothing written. */
export async function collectionAction(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  action: string,
): Promise<FastifyReply> {
  if (!NEW.test(action)) throw errors.unknownAction(action, structure.name);
  const body = request.method === 'POST' ? objectBody(request.body, true) : {};
  return sendTemplate(request, reply, options, structure, await options.resources.newRecord(structure, body));
}

/** A record not yet written (`action=new`, `action=duplicate`), as JSON: its values, none of its addresses. */
function sendTemplate(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  values: Row,
): FastifyReply {
  const lean = isLean(
    options.root,
    readCollectionParams(request.query as Record<string, string>).lean,
    request.session,
  );
  const prefix = lean ? '' : 'spi:';
  const json: Record<string, unknown> = lean ? {} : { prefixes: PREFIXES };
  for (const attribute of structure.root.object.attributes.values()) {
    const value = values[attribute.name];
    if (attribute.writeOnly || value === undefined || value === null) continue;
    json[prefix + attribute.name] = toJson(value);
  }
  return sendJson(reply, 200, json);
}

/** Every attribute of the root (and its children): what a copy is made from. */
const everything = (structure: ObjectStructure) => ({ items: fullSelect(structure.root) });

/** What a copy starts afresh rather than copies: when it was reported and worked, and what it follows up. */
const NOT_COPIED = new Set([
  'status',
  'reportdate',
  'actstart',
  'actfinish',
  'origrecordid',
  'origrecordclass',
]);

/**
 * What a copy of a stored record starts from (`action=duplicate`, `wsmethod:createFollowUp`): its own values, less
 * what identifies it or is the service's (keys but the site, the unique id, generated and write-only values) and
 * what it starts afresh (`NOT_COPIED`: the status starts again from the default).
 */
function copyOf(structure: ObjectStructure, stored: Readonly<Row>): Record<string, unknown> {
  const object = structure.root.object;
  const kept = new Set([object.def.siteAttribute, object.def.orgAttribute]);
  const copy: Record<string, unknown> = {};
  for (const attribute of object.attributes.values()) {
    const value = stored[attribute.name];
    if (value === undefined || value === null || attribute.generated || attribute.writeOnly) continue;
    if (attribute.name === object.uniqueId || NOT_COPIED.has(attribute.name)) continue;
    if (object.keys.includes(attribute.name) && !kept.has(attribute.name)) continue;
    copy[attribute.name] = toJson(value);
  }
  return copy;
}

/**
 * `GET <member>?action=duplicate` (IBM's Python client, `duplicate`): the record as a create of its copy would
 * start, nothing written; the client posts it (docs/compatibility.md, "Actions").
 */
export async function memberReadAction(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  id: string,
  action: string,
): Promise<FastifyReply> {
  if (!DUPLICATE.test(action)) throw errors.unknownAction(action, structure.name);
  const stored = await options.resources.readAt(structure, id, { query: {}, select: everything(structure) });
  const copy = copyOf(structure, stored.member.values);
  return sendTemplate(request, reply, options, structure, await options.resources.newRecord(structure, copy));
}

/** `POST <member>?action=wsmethod:<name>`. */
export async function memberAction(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  id: string,
  action: string,
): Promise<FastifyReply> {
  // A method is invoked by POST, with the PATCH override or none; with any other override the request is not one.
  const override = methodOverride(request) ?? '';
  if (!['', 'PATCH', 'MERGE'].includes(override)) throw errors.unknownAction(action, structure.name);
  if (CREATE_FOLLOW_UP.test(action) && structure.root.object.name === 'WORKORDER') {
    return createFollowUp(request, reply, options, structure, id);
  }
  if (!CHANGE_STATUS.test(action)) throw errors.unknownAction(action, structure.name);
  const change = readStatusChange(structure, objectBody(request.body, false));
  const select = propertiesOfWrite(request);
  const uniqueId = await options.resources.changeStatus(
    structure,
    id,
    change,
    request.user!,
    originOf(request),
  );
  const params = readCollectionParams(request.query as Record<string, string>);
  return sendWritten(request, reply, options, { structure, uniqueId, params, wanted: select }, 204);
}

/**
 * `wsmethod:createFollowUp` of a work order (IBM's Python client, `invoke_method`): a new work order copied from it
 * (site, asset, location, description, type, priority...), numbered by its autokey, status the default, with
 * `origrecordid`/`origrecordclass` naming the work order it follows; answered as the new work order's JSON (what the
 * client reads). It creates a record: the user needs the insert right besides the update right of the route.
 */
async function createFollowUp(
  request: FastifyRequest,
  reply: FastifyReply,
  options: OslcRoutesOptions,
  structure: ObjectStructure,
  id: string,
): Promise<FastifyReply> {
  const user = request.user!;
  if (!hasRight(user, structure.name, 'insert')) throw errors.notAuthorized(structure.name);
  const stored = (await options.resources.readAt(structure, id, { query: {}, select: everything(structure) }))
    .member.values;
  const body = {
    ...copyOf(structure, stored),
    origrecordid: stored.wonum,
    origrecordclass: stored.woclass,
  };
  const created = await options.resources.createRecord(structure, body, user, { origin: originOf(request) });
  const params = readCollectionParams(request.query as Record<string, string>);
  const wanted = propertiesOfWrite(request) ?? everything(structure);
  return sendWritten(request, reply, options, { ...created, structure, params, wanted }, 201);
}

function objectBody(body: unknown, optional: boolean): Record<string, unknown> {
  if ((body === undefined || body === null) && optional) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.badRequest('The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

/** The method's parameters (`status`, `date`, `memo`), each checked and named when refused. */
function readStatusChange(structure: ObjectStructure, body: Record<string, unknown>): StatusChange {
  const object = structure.root.object;
  const objPath = object.name.toLowerCase();
  const parameter = (name: string): unknown =>
    Object.entries(body).find(([key]) => key.replace(/^spi:/, '').toLowerCase() === name)?.[1];
  const statusAttribute = object.attributes.get('status');
  const dateAttribute = object.attributes.get('statusdate');
  if (!statusAttribute || !dateAttribute) throw errors.unknownAction('wsmethod:changeStatus', structure.name);
  const status = convert(statusAttribute, parameter('status'), 'status', objPath);
  if (typeof status !== 'string' || status === '') {
    throw errors.requiredField(statusAttribute.title, object.name, 'status', objPath);
  }
  const change: StatusChange = { status };
  const date = convert(dateAttribute, parameter('date'), 'date', objPath);
  if (date instanceof Date) {
    if (date.getTime() > Date.now()) {
      throw errors.badRequest('The date of a status change cannot be in the future.', {
        attrName: 'date',
        attrValue: String(toJson(date)),
        objPath,
      });
    }
    change.date = date;
  }
  const memo = parameter('memo');
  if (memo !== undefined && memo !== null) {
    if (typeof memo !== 'string') throw errors.wrongType('Memo', String(memo), 'text', 'memo', objPath);
    if (memo.length > MEMO_LENGTH) throw errors.tooLong('Memo', MEMO_LENGTH, 'memo', objPath);
    change.memo = memo;
  }
  return change;
}

function convert(attribute: AttributeDef, raw: unknown, name: string, objPath: string): unknown {
  const converted = toStored(attribute, raw);
  if (!converted.ok) {
    throw errors.wrongType(
      attribute.title,
      JSON.stringify(raw) ?? String(raw),
      converted.expected,
      name,
      objPath,
    );
  }
  return converted.value;
}
