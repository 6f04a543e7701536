import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { UserProfile } from '../auth/types.js';
import type { Database } from '../db/schema.js';
import { errors } from '../errors.js';
import type { ContentFolder } from './content-folder.js';
import * as repository from './repository.js';
import type { AttachmentOwner, DoclinkRow } from './repository.js';

export type { AttachmentOwner, DoclinkRow };

/** Bytes of one stored chunk: large enough that a 100 MB file is a few hundred statements, small enough to stream. */
export const CHUNK_BYTES = 512 * 1024;

/** `mxe.doclink.maxfilesize` when it has no value, in MB (the deployed systems' default). */
export const DEFAULT_MAX_FILE_MB = 10;

/** The business objects whose records carry attachments, as `ownertable` names them. */
export const ATTACHMENT_OWNERS: ReadonlySet<string> = new Set(['ASSET', 'LOCATIONS', 'WORKORDER', 'SR']);

/** What describes a new attachment: from the upload's headers, or from a `doclinks` entry of a body. */
export interface NewAttachment {
  fileName: string;
  description: string | null;
  /** `FILE` (stored content) or `URL`; the first part of `x-document-meta`. */
  urlType: string;
  /** The document folder (`Attachments`); the second part of `x-document-meta`. */
  docType: string;
  contentType: string;
}

/** What the service reads of the system properties: the size limit, live. */
export interface AttachmentSettings {
  maxFileMb(): number;
}

/** How often a process sweeps the content folder for files no row names. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Attachments of records (docs/compatibility.md, "Attachments"): a binary upload streams into a file of the content
 * folder when the deployment has one, else into chunks inside one transaction (src/attachments/README.md, "Where
 * content is kept"); either way an upload that fails or is refused leaves nothing, and content is read back in
 * pieces, never whole in memory except for `inlinedoc` and base64 `documentdata`, which are whole by their nature.
 */
export class AttachmentService {
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly settings: AttachmentSettings,
    private readonly folder?: ContentFolder,
  ) {}

  /** Sweeps the content folder now and then; a failed sweep is reported and tried again at the next. */
  startSweeping(onError: (error: unknown) => void): void {
    const folder = this.folder;
    if (!folder) return;
    this.sweepTimer = setInterval(() => {
      folder.sweep(this.db).catch(onError);
    }, SWEEP_INTERVAL_MS).unref();
  }

  close(): void {
    clearInterval(this.sweepTimer);
  }

  /** The size limit in bytes. */
  limitBytes(): number {
    return this.settings.maxFileMb() * 1024 * 1024;
  }

  /**
   * Stores an attachment from a stream of its bytes: into a file and then its row, or in chunks in a transaction of
   * its own when there is no content folder.
   */
  async upload(
    owner: AttachmentOwner,
    attachment: NewAttachment,
    content: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    user: UserProfile,
  ): Promise<DoclinkRow> {
    if (!this.folder) {
      return this.db
        .transaction()
        .execute((transaction) => this.write(transaction, owner, attachment, content, user));
    }
    const maxFileMb = this.settings.maxFileMb();
    const file = await this.folder.write(content, maxFileMb * 1024 * 1024, () =>
      errors.attachmentTooLarge(maxFileMb),
    );
    try {
      return await repository.insertStoredDoclink(this.db, owner, {
        ...describe(attachment, user),
        contentfile: file.name,
        attachmentsize: file.size,
        checksum: file.checksum,
      });
    } catch (error) {
      await this.folder.discard(this.db, [file.name]);
      throw error;
    }
  }

  /** Stores an attachment in the caller's transaction (a `doclinks` entry of a record's write). */
  async write(
    db: Kysely<Database>,
    owner: AttachmentOwner,
    attachment: NewAttachment,
    content: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    user: UserProfile,
  ): Promise<DoclinkRow> {
    const limit = this.limitBytes();
    const doclinksid = await repository.insertDoclink(db, owner, describe(attachment, user));
    const hash = createHash('sha256');
    let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let filled = 0;
    let size = 0;
    let seq = 0;
    for await (const piece of content) {
      size += piece.byteLength;
      if (size > limit) throw errors.attachmentTooLarge(this.settings.maxFileMb());
      hash.update(piece);
      let offset = 0;
      while (offset < piece.byteLength) {
        const taken = Math.min(CHUNK_BYTES - filled, piece.byteLength - offset);
        chunk.set(piece.subarray(offset, offset + taken), filled);
        filled += taken;
        offset += taken;
        if (filled === CHUNK_BYTES) {
          await repository.insertChunk(db, doclinksid, seq++, chunk);
          // The driver may still hold the buffer it was given: the next chunk fills a new one.
          chunk = Buffer.allocUnsafe(CHUNK_BYTES);
          filled = 0;
        }
      }
    }
    if (filled > 0) await repository.insertChunk(db, doclinksid, seq, chunk.subarray(0, filled));
    return repository.finishDoclink(db, doclinksid, size, hash.digest('hex'));
  }

  /** The attachments of many records of one object (by their unique ids), in one statement. */
  listOwned(object: string, uniqueIds: readonly number[]): Promise<DoclinkRow[]> {
    return repository.listByOwners(this.db, object, uniqueIds);
  }

  list(owner: AttachmentOwner): Promise<DoclinkRow[]> {
    return repository.listByOwner(this.db, owner);
  }

  /** The attachment of the owner by its id; "not found" names the attachment, not the record. */
  async find(owner: AttachmentOwner, doclinksid: number): Promise<DoclinkRow> {
    const row = Number.isSafeInteger(doclinksid)
      ? await repository.findOwned(this.db, owner, doclinksid)
      : undefined;
    if (!row) throw errors.resourceNotFound('DOCLINKS', String(doclinksid));
    return row;
  }

  /** The stored bytes of an attachment, in pieces, from its file or its chunks. */
  content(row: DoclinkRow): Promise<AsyncIterable<Uint8Array>> {
    return storedContent(this.db, this.folder, row);
  }

  /** The whole content, for `inlinedoc` (base64 in JSON cannot be streamed into the answer's object). */
  async contentBytes(row: DoclinkRow): Promise<Buffer> {
    const parts: Uint8Array[] = [];
    for await (const part of await this.content(row)) parts.push(part);
    return Buffer.concat(parts);
  }

  async remove(owner: AttachmentOwner, doclinksid: number): Promise<void> {
    const removed = Number.isSafeInteger(doclinksid)
      ? await repository.deleteOwned(this.db, owner, doclinksid)
      : undefined;
    if (!removed) throw errors.resourceNotFound('DOCLINKS', String(doclinksid));
    if (removed.contentfile !== null) await this.folder?.discard(this.db, [removed.contentfile]);
  }

  /** Removes every attachment of a record (the record is being deleted, in the caller's transaction). */
  removeAll(db: Kysely<Database>, owner: AttachmentOwner): Promise<void> {
    return repository.deleteAllOwned(db, owner);
  }
}

function describe(attachment: NewAttachment, user: UserProfile): repository.DoclinkValues {
  return {
    document: attachment.fileName,
    description: attachment.description,
    urltype: attachment.urlType,
    doctype: attachment.docType,
    mimetype: attachment.contentType,
    createby: user.userid,
  };
}

/**
 * An attachment's bytes wherever they are kept: the file its row names (in the folder, which a deployment whose
 * rows name files must have), read as a stream the answer can be piped from, or its chunks one statement each.
 */
export async function storedContent(
  db: Kysely<Database>,
  folder: ContentFolder | undefined,
  row: DoclinkRow,
): Promise<AsyncIterable<Uint8Array>> {
  if (row.contentfile === null) return storedChunks(db, row.doclinksid);
  if (!folder) throw errors.attachmentFolderMissing(row.document);
  const file = await folder.open(row.contentfile);
  if (!file) throw errors.attachmentFileMissing(row.document);
  return file;
}

/**
 * The chunks one statement each, the first read before this answers: a database that cannot be read is the caller's
 * error, before a download's headers are set, as a missing file is.
 */
async function storedChunks(db: Kysely<Database>, doclinksid: number): Promise<AsyncIterable<Uint8Array>> {
  const first = await repository.readChunk(db, doclinksid, 0);
  return (async function* () {
    for (let seq = 0, data = first; data; data = await repository.readChunk(db, doclinksid, ++seq))
      yield data;
  })();
}

/**
 * `x-document-meta`: `<urltype>/<doctype>` as IBM's clients send it (`FILE/Attachments`), or the doctype alone
 * (the Java client without a type, Maximo Anywhere); `FILE` and `Attachments` when absent.
 */
export function parseDocumentMeta(meta: string | undefined): { urlType: string; docType: string } {
  const text = (meta ?? '').trim();
  if (text === '') return { urlType: 'FILE', docType: 'Attachments' };
  const slash = text.indexOf('/');
  if (slash < 0) return { urlType: 'FILE', docType: text };
  const urlType = text.slice(0, slash).trim().toUpperCase() || 'FILE';
  const docType = text.slice(slash + 1).trim() || 'Attachments';
  return { urlType, docType };
}

/** Decodes base64 text arriving in pieces (`custom-encoding: base64`), four characters at a time across pieces. */
export async function* decodeBase64(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let pending = '';
  for await (const piece of pieces) {
    const text = pending + Buffer.from(piece).toString('latin1').replace(/[\s]/g, '');
    const whole = text.length - (text.length % 4);
    pending = text.slice(whole);
    if (whole > 0) yield checkedBase64(text.slice(0, whole));
  }
  if (pending.length > 0) yield checkedBase64(pending);
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Base64 text as bytes; anything that is not base64 is refused rather than silently dropped. */
export function checkedBase64(text: string): Buffer {
  if (!BASE64.test(text)) {
    throw errors.badRequest('The attachment content is not valid base64.', { attrName: 'documentdata' });
  }
  return Buffer.from(text, 'base64');
}
