import type { Migration } from './migration.js';

/**
 * The audit trail (docs/audit.md): one row per event, written in the transaction of the change it describes.
 * `mac` is the record's own HMAC, computed when it is written; `chainseq` and `digest` are given afterwards by the
 * sealing step, which chains the committed records in the order it finds them (src/audit/README.md). A record not
 * yet sealed has neither. `logintracking` gets the rowstamp every object's table carries, to be read through
 * MXAPILOGINTRACKING. Every statement applies again over a schema it has already changed.
 */
export const auditTrail: Migration = {
  name: '0031-audit-trail',
  phase: 'expand',
  statements: [
    `create table if not exists easaudit (
       auditid bigint generated always as identity primary key,
       eventtime timestamptz not null,
       eventtype varchar(40) not null,
       outcome varchar(12) not null check (outcome in ('SUCCESS', 'FAILURE', 'REFUSED')),
       userid varchar(100),
       authscheme varchar(16),
       keyid varchar(16),
       sessiondigest varchar(16),
       clientaddr varchar(64),
       requestid varchar(100),
       servername varchar(100),
       objectname varchar(40),
       objectkey varchar(254),
       beforevalue text,
       aftervalue text,
       detail text,
       mac varchar(64) not null,
       chainseq bigint unique,
       digest varchar(64),
       rowstamp bigint not null)`,
    `drop trigger if exists easaudit_rowstamp on easaudit`,
    `create trigger easaudit_rowstamp before insert or update on easaudit for each row execute function set_rowstamp()`,
    `create index if not exists easaudit_unsealed on easaudit(auditid) where chainseq is null`,
    `create index if not exists easaudit_eventtime on easaudit(eventtime)`,
    `create index if not exists easaudit_eventtype on easaudit(eventtype, eventtime)`,
    // How long records are kept (src/audit, "Retention"); the sweep removes older ones and records that it did.
    `insert into maxprop (propname, description, maxtype, maximodefault, rangemin, globalonly, liverefresh,
       onlinechanges, masked, nullsallowed, changeby, changedate) values
     ('eas.audit.retentiondays', 'Days audit records are kept before the retention sweep removes them', 'INTEGER',
      '400', 1, true, true, true, false, true, 'MAXADMIN', now())
     on conflict (propname) do nothing`,
    `alter table logintracking add column if not exists rowstamp bigint not null default nextval('rowstamp_seq')`,
    `drop trigger if exists logintracking_rowstamp on logintracking`,
    `create trigger logintracking_rowstamp before insert or update on logintracking for each row execute function set_rowstamp()`,
  ],
};
