import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { UserProfile } from '../../auth/types.js';
import type { Database } from '../../db/schema.js';
import { ContentFolder } from '../../attachments/content-folder.js';
import { ATTACHMENT_OWNERS, storedContent } from '../../attachments/service.js';
import {
  insertChunk,
  insertDoclink,
  finishDoclink,
  listByOwners as doclinksOf,
  type DoclinkRow,
} from '../../attachments/repository.js';
import { errors, type MaximoError } from '../../errors.js';
import type { ObjectMeta } from '../../metadata/registry.js';
import type { BatchRecord } from '../../oslc/batch-writer.js';
import type { ColumnLimits } from '../../oslc/column-limits.js';
import { dynamicView } from '../../db/schema.js';
import { keyText, rootRows } from '../backout/records.js';
import type { JsonRecord } from '../packages.js';
import { FILE_LIMITS } from '../transfer/package-file.js';
import { deleteDeployed, keepCreateDate, noteDeployed } from './repository.js';

/*
 * Attachments in SNAPSHOT packages (docs/migration.md, "Work logs and attachments"). A record of an object that
 * carries attachments (assets, locations, work orders, service requests) carries them in its line as `doclinks`:
 * each attachment's description and its content as a list of base64 texts, one per piece read (a stored chunk of
 * 512 KB, or a read of its file). The deploy writes them after the chunk's records, in its transaction, as chunks in
 * the database (whatever the deployment's folder: a rolled-back deploy leaves no file), and adds only those the
 * record lacks: an attachment is there when the record holds one with the same file name and checksum.
 */

/**
 * Bytes of attachments one record may carry: in base64 a third more, which with the record's attributes stays within
 * the line limit of a package file.
 */
export const CARRIED_BYTES_PER_RECORD = 6_000_000;

/** The member of a package line that carries a record's attachments. */
export const DOCLINKS_MEMBER = 'doclinks';

/** Whether records of the object carry attachments. */
export const carriesAttachments = (object: ObjectMeta): boolean => ATTACHMENT_OWNERS.has(object.name);

/**
 * The attachments of a page of records as their lines carry them: their descriptions read for the page at once, and
 * a reader of one record's, content included, which its line calls when it is written (so that the content of one
 * record's attachments at most is in memory, not a page's).
 */
export async function exportedAttachments(
  db: Kysely<Database>,
  attachmentsDir: string | undefined,
  pkgdefname: string,
  object: ObjectMeta,
  uniqueIds: readonly number[],
): Promise<(uniqueId: number) => Promise<JsonRecord[] | undefined>> {
  const folder = attachmentsDir === undefined ? undefined : new ContentFolder(attachmentsDir);
  const byOwner = new Map<number, DoclinkRow[]>();
  if (carriesAttachments(object)) {
    for (const row of await doclinksOf(db, object.name, uniqueIds)) {
      const owner = Number(row.ownerid);
      byOwner.set(owner, [...(byOwner.get(owner) ?? []), row]);
    }
  }
  return async (uniqueId) => {
    const rows = byOwner.get(uniqueId);
    if (!rows) return undefined;
    const total = rows.reduce((sum, row) => sum + Number(row.attachmentsize), 0);
    if (total > CARRIED_BYTES_PER_RECORD)
      throw errors.packageDefinitionRefused(
        pkgdefname,
        `the attachments of ${object.name} ${uniqueId} (${rows.map((row) => row.document).join(', ')}) come to ${total} bytes; a record carries at most ${CARRIED_BYTES_PER_RECORD} bytes of attachments in a package (its line is limited to ${FILE_LIMITS.lineBytes} bytes).`,
      );
    const carried: JsonRecord[] = [];
    for (const row of rows) carried.push(await exportedAttachment(db, folder, row));
    return carried;
  };
}

async function exportedAttachment(
  db: Kysely<Database>,
  folder: ContentFolder | undefined,
  row: DoclinkRow,
): Promise<JsonRecord> {
  const documentdata: string[] = [];
  for await (const piece of await storedContent(db, folder, row)) {
    documentdata.push(Buffer.from(piece).toString('base64'));
  }
  return {
    document: row.document,
    description: row.description,
    urltype: row.urltype,
    doctype: row.doctype,
    mimetype: row.mimetype,
    attachmentsize: Number(row.attachmentsize),
    checksum: row.checksum,
    createby: row.createby,
    createdate: new Date(row.createdate).toISOString(),
    documentdata,
  };
}

/** The attachments each line carries, taken out of its body (the write path never sees them), by position. */
export function takeAttachments(bodies: readonly JsonRecord[]): Map<number, JsonRecord[]> {
  const taken = new Map<number, JsonRecord[]>();
  bodies.forEach((body, index) => {
    const carried = body[DOCLINKS_MEMBER];
    if (carried === undefined) return;
    delete body[DOCLINKS_MEMBER];
    if (Array.isArray(carried) && carried.length > 0) taken.set(index, carried as JsonRecord[]);
  });
  return taken;
}

/** What writing a chunk's attachments needs of the deploy. */
export interface AttachmentDeploy {
  db: Kysely<Database>;
  limits: () => Promise<ColumnLimits>;
  dmpackageid: number;
  user: UserProfile;
  /** The error of a record whose attachment cannot be written (the deploy's EAS0165E). */
  refused(keys: BatchRecord['keys'], refused: MaximoError): MaximoError;
}

/**
 * Writes the attachments a chunk's records carry that their records lack, and notes them for the back-out. Answers
 * the positions of the records that got at least one. Reads nothing when no record of the chunk carries any.
 */
export async function deployAttachments(
  deploy: AttachmentDeploy,
  object: ObjectMeta,
  records: readonly BatchRecord[],
  carried: ReadonlyMap<number, JsonRecord[]>,
): Promise<Set<number>> {
  const touched = new Set<number>();
  const sending = [...carried.keys()].filter((index) => !records[index]!.delete);
  if (sending.length === 0 || !carriesAttachments(object)) return touched;
  const owners = await rootRows(
    dynamicView(deploy.db),
    await deploy.limits(),
    object,
    sending.map((index) => records[index]!.keys),
  );
  const ownerByKey = new Map(
    owners.map((row) => [keyText(object.keys.map((key) => row[key] ?? null)), Number(row[object.uniqueId])]),
  );
  const stored = await doclinksOf(deploy.db, object.name, [...ownerByKey.values()]);
  const added: number[] = [];
  for (const index of sending) {
    const record = records[index]!;
    const ownerid = ownerByKey.get(keyText(record.keys));
    if (ownerid === undefined) continue;
    const present = stored
      .filter((row) => Number(row.ownerid) === ownerid)
      .map((row) => `${row.document}\n${row.checksum ?? ''}`);
    for (const attachment of carried.get(index)!) {
      const at = present.indexOf(`${String(attachment.document)}\n${String(attachment.checksum ?? '')}`);
      if (at >= 0) {
        present.splice(at, 1);
        continue;
      }
      added.push(await writeAttachment(deploy, object, ownerid, record, attachment));
      touched.add(index);
    }
  }
  await noteDeployed(deploy.db, deploy.dmpackageid, added);
  return touched;
}

/** One carried attachment written, a chunk at a time; its checksum must be the one the package names. */
async function writeAttachment(
  deploy: AttachmentDeploy,
  object: ObjectMeta,
  ownerid: number,
  record: BatchRecord,
  attachment: JsonRecord,
): Promise<number> {
  const text = (name: string, fallback: string) =>
    typeof attachment[name] === 'string' && attachment[name] !== '' ? (attachment[name] as string) : fallback;
  const document = text('document', 'attachment');
  const doclinksid = await insertDoclink(
    deploy.db,
    { object: object.name, uniqueId: ownerid },
    {
      document,
      description: typeof attachment.description === 'string' ? attachment.description : null,
      urltype: text('urltype', 'FILE'),
      doctype: text('doctype', 'Attachments'),
      mimetype: text('mimetype', 'application/octet-stream'),
      createby: text('createby', deploy.user.userid),
    },
  );
  const hash = createHash('sha256');
  let size = 0;
  const chunks = Array.isArray(attachment.documentdata) ? (attachment.documentdata as unknown[]) : [];
  for (const [seq, chunk] of chunks.entries()) {
    const bytes = Buffer.from(typeof chunk === 'string' ? chunk : '', 'base64');
    hash.update(bytes);
    size += bytes.length;
    await insertChunk(deploy.db, doclinksid, seq, bytes);
  }
  const checksum = hash.digest('hex');
  if (typeof attachment.checksum === 'string' && attachment.checksum !== checksum)
    throw deploy.refused(
      record.keys,
      errors.badRequest(`The content of the attachment ${document} does not match its checksum.`, {
        attrName: 'checksum',
        objPath: DOCLINKS_MEMBER,
      }),
    );
  await finishDoclink(deploy.db, doclinksid, size, checksum);
  if (typeof attachment.createdate === 'string')
    await keepCreateDate(deploy.db, doclinksid, attachment.createdate);
  return doclinksid;
}

/** A back-out's part: the attachments the package's deploys added, deleted. */
export function removeDeployedAttachments(db: Kysely<Database>, dmpackageid: number): Promise<number> {
  return deleteDeployed(db, dmpackageid);
}
