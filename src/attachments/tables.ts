import type { ColumnType, Generated } from 'kysely';

/** Row types of the attachment tables (migration 0025-attachments). */
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
