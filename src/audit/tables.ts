import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** One audit record (migration 0031-audit-trail); `chainseq` and `digest` are null until the record is sealed. */
export interface AuditTable {
  auditid: Generated<number>;
  eventtime: Timestamp;
  eventtype: string;
  outcome: string;
  userid: string | null;
  authscheme: string | null;
  keyid: string | null;
  sessiondigest: string | null;
  clientaddr: string | null;
  requestid: string | null;
  servername: string | null;
  objectname: string | null;
  objectkey: string | null;
  beforevalue: string | null;
  aftervalue: string | null;
  detail: string | null;
  mac: string;
  chainseq: number | null;
  digest: string | null;
  rowstamp: Generated<number>;
}

export interface AuditTables {
  easaudit: AuditTable;
}
