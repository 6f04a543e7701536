import type { ColumnType, Generated } from 'kysely';

/** Row types of the attachment tables (migrations 0025-attachments and 0036-attachment-files). */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface DoclinksTable {
  doclinksid: Generated<number>;
  ownertable: string;
  ownerid: number;
  document: string;
  description: string | null;
  urltype: string;
  doctype: string;
  mimetype: string;
  attachmentsize: ColumnType<number, number | undefined, number>;
  checksum: string | null;
  /** The file of the content folder that holds it (migration 0036); null: its chunks are in `doclinkchunk`. */
  contentfile: ColumnType<string | null, string | null | undefined, string | null>;
  createby: string;
  createdate: Timestamp;
}

export interface DoclinkChunkTable {
  doclinksid: number;
  seq: number;
  data: Uint8Array;
}

export interface AttachmentTables {
  doclinks: DoclinksTable;
  doclinkchunk: DoclinkChunkTable;
}
