import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import type { DoclinksTable } from './tables.js';

/**
 * The SQL of attachments: their descriptions (`doclinks`) and their content in chunks (`doclinkchunk`). Content
 * crosses the driver as bytes: `pg` sends a Buffer parameter in binary, and PGlite's `bytea` conversion is Node's
 * native hex (src/db/database.ts, `pgliteSerializers`). Base64 text decoded by the database cost the encoding on
 * both sides and, on PostgreSQL, a third more bytes on the wire.
 */

export type DoclinkRow = Selectable<DoclinksTable>;

/** The record an attachment belongs to: its business object and unique id. */
export interface AttachmentOwner {
  object: string;
  uniqueId: number;
}

export interface DoclinkValues {
  document: string;
  description: string | null;
  urltype: string;
  doctype: string;
  mimetype: string;
  createby: string;
  /** Content already written to a file of the content folder: its name, size and checksum. */
  contentfile?: string;
  attachmentsize?: number;
  checksum?: string;
}

export async function insertDoclink(
  db: Kysely<Database>,
  owner: AttachmentOwner,
  values: DoclinkValues,
): Promise<number> {
  const row = await db
    .insertInto('doclinks')
    .values({ ...values, ownertable: owner.object, ownerid: owner.uniqueId })
    .returning('doclinksid')
    .executeTakeFirstOrThrow();
  return Number(row.doclinksid);
}

/** A row whose content is already in a file: size and checksum known, in one statement. */
export async function insertStoredDoclink(
  db: Kysely<Database>,
  owner: AttachmentOwner,
  values: DoclinkValues,
): Promise<DoclinkRow> {
  return db
    .insertInto('doclinks')
    .values({ ...values, ownertable: owner.object, ownerid: owner.uniqueId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertChunk(
  db: Kysely<Database>,
  doclinksid: number,
  seq: number,
  data: Uint8Array,
): Promise<void> {
  await db.insertInto('doclinkchunk').values({ doclinksid, seq, data }).execute();
}

/** Records the size and checksum of content written in full; answers the finished row. */
export async function finishDoclink(
  db: Kysely<Database>,
  doclinksid: number,
  size: number,
  checksum: string,
): Promise<DoclinkRow> {
  return db
    .updateTable('doclinks')
    .set({ attachmentsize: size, checksum })
    .where('doclinksid', '=', doclinksid)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listByOwner(db: Kysely<Database>, owner: AttachmentOwner): Promise<DoclinkRow[]> {
  return db
    .selectFrom('doclinks')
    .selectAll()
    .where('ownertable', '=', owner.object)
    .where('ownerid', '=', owner.uniqueId)
    .orderBy('doclinksid')
    .execute();
}

/** The attachments of many records of one object, in id order (a page of records read at once). */
export async function listByOwners(
  db: Kysely<Database>,
  ownertable: string,
  ownerids: readonly number[],
): Promise<DoclinkRow[]> {
  if (ownerids.length === 0) return [];
  return db
    .selectFrom('doclinks')
    .selectAll()
    .where('ownertable', '=', ownertable)
    .where('ownerid', 'in', [...ownerids])
    .orderBy('doclinksid')
    .execute();
}

export async function findOwned(
  db: Kysely<Database>,
  owner: AttachmentOwner,
  doclinksid: number,
): Promise<DoclinkRow | undefined> {
  return db
    .selectFrom('doclinks')
    .selectAll()
    .where('doclinksid', '=', doclinksid)
    .where('ownertable', '=', owner.object)
    .where('ownerid', '=', owner.uniqueId)
    .executeTakeFirst();
}

/** Those of the files that a row names (the rest may go). */
export async function namedFiles(db: Kysely<Database>, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const rows = await db
    .selectFrom('doclinks')
    .select('contentfile')
    .where('contentfile', 'in', [...names])
    .execute();
  return rows.flatMap((row) => (row.contentfile === null ? [] : [row.contentfile]));
}

/** One chunk of an attachment's content, or undefined past its last. */
export async function readChunk(
  db: Kysely<Database>,
  doclinksid: number,
  seq: number,
): Promise<Uint8Array | undefined> {
  const row = await db
    .selectFrom('doclinkchunk')
    .select('data')
    .where('doclinksid', '=', doclinksid)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return row?.data;
}

/**
 * Deletes one attachment (its chunks go with it); answers whether it existed, and the name of its file when its
 * content was one.
 */
export async function deleteOwned(
  db: Kysely<Database>,
  owner: AttachmentOwner,
  doclinksid: number,
): Promise<{ contentfile: string | null } | undefined> {
  return db
    .deleteFrom('doclinks')
    .where('doclinksid', '=', doclinksid)
    .where('ownertable', '=', owner.object)
    .where('ownerid', '=', owner.uniqueId)
    .returning('contentfile')
    .executeTakeFirst();
}

export async function deleteAllOwned(db: Kysely<Database>, owner: AttachmentOwner): Promise<void> {
  await db
    .deleteFrom('doclinks')
    .where('ownertable', '=', owner.object)
    .where('ownerid', '=', owner.uniqueId)
    .execute();
}
