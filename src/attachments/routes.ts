import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errors } from '../errors.js';
import { linksFor, resourceHref, type ApiRoot } from '../http/links.js';
import { readFlag } from '../http/query-string.js';
import { sendJson } from '../http/reply.js';
import { isLean } from '../oslc/route-options.js';
import type { ResourceService } from '../oslc/service.js';
import { attachmentJson, attachmentsJson, contentTypeOf, type AttachmentLinks } from './response.js';
import {
  AttachmentParams,
  AttachmentQuery,
  AttachmentsParams,
  DeleteHeaders,
  UploadHeaders,
} from './schemas.js';
import {
  ATTACHMENT_OWNERS,
  decodeBase64,
  parseDocumentMeta,
  type AttachmentOwner,
  type AttachmentService,
  type DoclinkRow,
} from './service.js';

export interface AttachmentRoutesOptions {
  root: ApiRoot;
  contextRoot: string;
  resources: ResourceService;
  attachments: AttachmentService;
}

/** The child name as clients write it: lower case from hrefs, upper case from the Java client's relation name. */
const COLLECTION_NAMES = ['doclinks', 'DOCLINKS'] as const;

/**
 * Attachments of records (docs/compatibility.md, "Attachments"), at `<resource>/doclinks`: list, upload (the file as
 * the body), download (`/doclinks/<id>`), metadata (`/doclinks/meta/<id>`) and delete. Reading needs the read right
 * on the object structure, uploading and deleting the update right: an attachment is part of the record. The body
 * of an upload is never parsed: it streams into storage (every content type is taken as bytes here).
 */
export async function attachmentRoutes(
  app: FastifyInstance,
  options: AttachmentRoutesOptions,
): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  for (const name of COLLECTION_NAMES) {
    collectionRoutes(app, options, name);
    memberRoutes(app, options, name);
  }
}

const READ = { access: { kind: 'objectStructure' as const, right: 'read' as const } };
const UPDATE = { access: { kind: 'objectStructure' as const, right: 'update' as const } };

/** `<resource>/doclinks`: the list, and uploads. */
function collectionRoutes(app: FastifyInstance, options: AttachmentRoutesOptions, name: string): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    `/os/:os/:id/${name}`,
    { schema: { params: AttachmentsParams, querystring: AttachmentQuery }, config: READ },
    async (request, reply) => {
      const owner = await ownerOf(request, options);
      const rows = await options.attachments.list(owner);
      const inline = readFlag(request.query.inlinedoc) === true;
      const contents = inline ? await Promise.all(rows.map((row) => contentOf(options, row))) : [];
      return sendJson(reply, 200, attachmentsJson(rows, linksOf(request, options), contents));
    },
  );

  routes.post(
    `/os/:os/:id/${name}`,
    { schema: { params: AttachmentsParams, headers: UploadHeaders }, config: UPDATE },
    async (request, reply) => {
      const override = (request.headers['x-method-override'] ?? '').toUpperCase();
      // The npm client sends its uploads with `x-method-override: PATCH`; nothing else is an upload.
      if (!['', 'PATCH', 'MERGE'].includes(override)) {
        throw errors.methodNotAllowed(`x-method-override ${override} on an attachment collection`);
      }
      const owner = await ownerOf(request, options);
      const headers = request.headers;
      const fileName = headerText(headers.slug) || 'attachment';
      const body = request.body as AsyncIterable<Uint8Array> | undefined;
      const bytes: AsyncIterable<Uint8Array> = body ?? Readable.from([]);
      const base64 = (headers['custom-encoding'] ?? '').toLowerCase() === 'base64';
      const attachment = {
        fileName,
        description: headerText(headers['x-document-description']) || null,
        ...parseDocumentMeta(headers['x-document-meta']),
        contentType: contentTypeOf(fileName, base64 ? undefined : headers['content-type']),
      };
      const content = base64 ? decodeBase64(bytes) : bytes;
      const row = await options.attachments.upload(owner, attachment, content, request.user!);
      reply.header('location', linksOf(request, options).member(row.doclinksid));
      return reply.code(201).send();
    },
  );
}

/** `<resource>/doclinks/<id>`: the content and its deletion; `<resource>/doclinks/meta/<id>`: the metadata. */
function memberRoutes(app: FastifyInstance, options: AttachmentRoutesOptions, name: string): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    `/os/:os/:id/${name}/:doclink`,
    { schema: { params: AttachmentParams, querystring: AttachmentQuery }, config: READ },
    async (request, reply) => {
      const owner = await ownerOf(request, options);
      const row = await options.attachments.find(owner, attachmentIdOf(request.params.doclink));
      return sendContent(reply, options, row);
    },
  );

  routes.get(
    `/os/:os/:id/${name}/meta/:doclink`,
    { schema: { params: AttachmentParams, querystring: AttachmentQuery }, config: READ },
    async (request, reply) => {
      const owner = await ownerOf(request, options);
      const row = await options.attachments.find(owner, attachmentIdOf(request.params.doclink));
      const inline = readFlag(request.query.inlinedoc) === true;
      const content = inline ? await contentOf(options, row) : undefined;
      return sendJson(reply, 200, attachmentJson(row, linksOf(request, options), content));
    },
  );

  routes.delete(
    `/os/:os/:id/${name}/:doclink`,
    { schema: { params: AttachmentParams }, config: UPDATE },
    async (request, reply) => removeAttachment(request, reply, options),
  );

  routes.post(
    `/os/:os/:id/${name}/:doclink`,
    { schema: { params: AttachmentParams, headers: DeleteHeaders }, config: UPDATE },
    async (request, reply) => {
      const override = (request.headers['x-method-override'] ?? '').toUpperCase();
      if (override !== 'DELETE') {
        throw errors.methodNotAllowed(
          override === '' ? 'POST on an attachment' : `x-method-override ${override} on an attachment`,
        );
      }
      return removeAttachment(request, reply, options);
    },
  );
}

type AttachmentRequest = FastifyRequest;

const paramsOf = (request: AttachmentRequest) =>
  request.params as { os: string; id: string; doclink?: string };

/** The record a request's address names, refused when its object carries no attachments. */
async function ownerOf(
  request: AttachmentRequest,
  options: AttachmentRoutesOptions,
): Promise<AttachmentOwner> {
  const structure = request.objectStructure!;
  const object = structure.root.object.name;
  if (!ATTACHMENT_OWNERS.has(object)) {
    throw errors.resourceNotFound(structure.name, `${paramsOf(request).id}/doclinks`);
  }
  return { object, uniqueId: await options.resources.resolveId(structure, paramsOf(request).id) };
}

/** `75`, or the `localref` form `0-75`; anything else names no attachment (answered as not found). */
function attachmentIdOf(text: string): number {
  const match = /^(?:\d{1,9}-)?(\d{1,15})$/.exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

function linksOf(request: AttachmentRequest, options: AttachmentRoutesOptions): AttachmentLinks {
  const query = request.query as Record<string, string | undefined>;
  const links = linksFor(request, options.contextRoot, options.root, readFlag(query.relativeuri) === true);
  const { os, id } = paramsOf(request);
  const collection = `${resourceHref(links, os.toLowerCase(), id)}/doclinks`;
  return {
    lean: isLean(options.root, readFlag(query.lean), request.session),
    collection,
    member: (id) => `${collection}/${id}`,
    meta: (id) => `${collection}/meta/${id}`,
  };
}

async function contentOf(options: AttachmentRoutesOptions, row: DoclinkRow): Promise<string> {
  return (await options.attachments.contentBytes(row)).toString('base64');
}

/** The bytes, streamed from their file or chunk by chunk from the database, with the type and name they were uploaded with. */
async function sendContent(
  reply: FastifyReply,
  options: AttachmentRoutesOptions,
  row: DoclinkRow,
): Promise<FastifyReply> {
  // Found first: a file that cannot be read is answered as an error, without the headers of the download.
  const content = await options.attachments.content(row);
  reply
    .code(200)
    .header('content-type', row.mimetype)
    .header('content-length', String(row.attachmentsize))
    .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(row.document)}`);
  if (row.checksum) reply.header('etag', `"${row.checksum}"`);
  // A file's read stream is piped as it is; chunks read by statements become one.
  return reply.send(content instanceof Readable ? content : Readable.from(content));
}

async function removeAttachment(
  request: AttachmentRequest,
  reply: FastifyReply,
  options: AttachmentRoutesOptions,
): Promise<FastifyReply> {
  const owner = await ownerOf(request, options);
  await options.attachments.remove(owner, attachmentIdOf(paramsOf(request).doclink ?? ''));
  return reply.code(204).send();
}

/** A header's value as text (the first of repeated ones), trimmed. */
function headerText(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? (value[0] ?? '') : (value ?? '')).trim();
}
