import type { DoclinkRow } from './repository.js';

/** Where the attachments of one record are addressed, and in which form the answer is written. */
export interface AttachmentLinks {
  lean: boolean;
  collection: string;
  member(doclinksid: number): string;
  meta(doclinksid: number): string;
}

/**
 * Names of the metadata in the namespaced form (`/oslc` without `lean=1`): what the Java client reads there
 * (`dcterms:title`, `dcterms:description`, `spi:urlType`); every other name takes the `spi:` prefix.
 */
const NAMESPACED: Readonly<Record<string, string>> = {
  href: 'rdf:about',
  identifier: 'dcterms:identifier',
  title: 'dcterms:title',
  description: 'dcterms:description',
  created: 'dcterms:created',
  creator: 'dcterms:creator',
  format: 'dcterms:format',
};

const named = (lean: boolean, json: Record<string, unknown>): Record<string, unknown> =>
  lean
    ? json
    : Object.fromEntries(
        Object.entries(json).map(([name, value]) => [NAMESPACED[name] ?? `spi:${name}`, value]),
      );

/**
 * One attachment's metadata, as `<resource>/doclinks/meta/<id>` answers it and as each member of the collection
 * carries it in `describedBy` (docs/compatibility.md, "Attachments"); the base64 content with `inlinedoc=1`.
 */
export function attachmentJson(
  row: DoclinkRow,
  links: AttachmentLinks,
  documentdata?: string,
): Record<string, unknown> {
  const created = new Date(row.createdate).toISOString();
  return named(links.lean, {
    href: links.meta(row.doclinksid),
    identifier: String(row.doclinksid),
    fileName: row.document,
    title: row.document,
    description: row.description ?? '',
    docType: row.doctype,
    urlType: row.urltype,
    format: { label: row.mimetype },
    contentType: row.mimetype,
    attachmentSize: Number(row.attachmentsize),
    checksum: row.checksum,
    created,
    creator: row.createby,
    modified: created,
    contributor: row.createby,
    ...(documentdata === undefined ? {} : { documentdata }),
  });
}

/** The collection `<resource>/doclinks`: each member's address (its content) and its metadata. */
export function attachmentsJson(
  rows: readonly DoclinkRow[],
  links: AttachmentLinks,
  contents: readonly string[],
): Record<string, unknown> {
  const members = rows.map((row, index) => {
    const href = links.member(row.doclinksid);
    const localref = `${links.collection}/${index}-${row.doclinksid}`;
    const member: Record<string, unknown> = links.lean
      ? { href, localref, describedBy: attachmentJson(row, links) }
      : { 'rdf:about': href, 'spi:localref': localref, 'spi:describedBy': attachmentJson(row, links) };
    const content = contents[index];
    if (content !== undefined) member[links.lean ? 'documentdata' : 'spi:documentdata'] = content;
    return member;
  });
  return links.lean
    ? { href: links.collection, member: members }
    : { 'rdf:about': links.collection, 'rdfs:member': members };
}

/** Content types of common attachment files, by extension, for uploads that send none. */
const TYPES_BY_EXTENSION: Readonly<Record<string, string>> = {
  txt: 'text/plain',
  csv: 'text/csv',
  htm: 'text/html',
  html: 'text/html',
  xml: 'application/xml',
  json: 'application/json',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  svg: 'image/svg+xml',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  zip: 'application/zip',
  dwg: 'image/vnd.dwg',
};

const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'application/x-www-form-urlencoded']);

/**
 * The content type kept with an attachment: the one the upload sent, unless it says nothing about the file (none,
 * `application/octet-stream`, or a form type a client sets by default), then the file name's extension decides.
 */
export function contentTypeOf(fileName: string, sent: string | undefined): string {
  const type = (sent ?? '').split(';')[0]!.trim().toLowerCase();
  if (!GENERIC_TYPES.has(type) && type.length <= 100) return (sent ?? '').trim().slice(0, 100);
  const extension = /\.([A-Za-z0-9]{1,8})$/.exec(fileName)?.[1]?.toLowerCase();
  return (extension && TYPES_BY_EXTENSION[extension]) ?? 'application/octet-stream';
}
