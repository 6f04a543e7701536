import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { AuditTable } from './tables.js';

/*
 * What other domains see of the audit trail (docs/audit.md): they describe an event and hand it to `record` inside
 * the transaction of the change it describes. This file imports only types, so any domain may import it.
 */

export type AuditOutcome = 'SUCCESS' | 'FAILURE' | 'REFUSED';

/** What a record says of the request it was written in; all null outside a request (the shell, a timer). */
export type RequestFacts = Pick<
  AuditTable,
  'userid' | 'authscheme' | 'keyid' | 'sessiondigest' | 'clientaddr' | 'requestid'
>;

/**
 * Who acted and from where: the request an event happens in, as a domain sees it (no HTTP). The route that calls a
 * recording service makes it (`originOf`, src/audit/context.ts) and the service puts it in its event. Its facts are
 * worked out only when a record is made (a key's fingerprint is an HMAC): a request that records nothing pays for
 * nothing (src/audit/README.md, "Request context").
 */
export interface RequestOrigin {
  /** The request's facts; `keyFingerprint` names a presented key (never its value). */
  facts(keyFingerprint: (apikey: string) => string): RequestFacts;
}

/** One event, as the domain that caused it describes it; who, from where and in which request come from its origin. */
export interface AuditEvent {
  /** `<domain>.<action>`, lower case: `apikey.create`, `property.set`, `login.failure` (docs/audit.md lists them). */
  type: string;
  /** Default SUCCESS. */
  outcome?: AuditOutcome;
  /** The acting user when it is not the request's (a login's name, the shell's ADMIN-CLI). */
  user?: string | null;
  /** How the acting user was authenticated, when the request does not say (a login's scheme, `shell`). */
  scheme?: string;
  /** The client's address when the event is not recorded in its request (a batch of logins). */
  address?: string | null;
  /** The request the event happens in; none outside a request (the shell, a timer, a batch of logins). */
  origin?: RequestOrigin | undefined;
  /** The object written (MAXPROP, APIKEYTOKEN, ...) and its key. */
  object?: string;
  key?: string;
  /** For configuration: the values before and after (never a secret: callers pass what may be shown). */
  before?: unknown;
  after?: unknown;
  /** Anything else worth keeping (record counts, the reason of a refusal). */
  detail?: unknown;
}

/** Writes audit records; each domain's service holds one (`NO_AUDIT` when the trail is off). */
export interface AuditRecorder {
  /** Writes the record inside `db`, the transaction of the change: it commits or rolls back with it. */
  record(db: Kysely<Database>, event: AuditEvent): Promise<void>;
  /** An event that changes nothing (a refusal, a failed per-request credential): a transaction of its own. */
  recordAlone(event: AuditEvent): Promise<void>;
  /**
   * The record of an event, for a statement the change sends anyway to write as well (`withRecord`,
   * src/audit/repository.ts): in the transaction like `record`, without a round trip of its own. Undefined when the
   * trail is off.
   */
  recordOf(event: AuditEvent): AuditRecord | undefined;
}

/** A record ready to be written (its MAC made), by `withRecord` in the statement of the change it describes. */
export type AuditRecord = Insertable<AuditTable>;

/**
 * A recorder whose events happen in `origin` (unless one names its own): what a flow of several steps holds in its
 * context (a migration package's deploy), so that each step's records say who and from where.
 */
export function recorderIn(audit: AuditRecorder, origin: RequestOrigin): AuditRecorder {
  const within = (event: AuditEvent): AuditEvent => (event.origin ? event : { ...event, origin });
  return {
    record: (db, event) => audit.record(db, within(event)),
    recordAlone: (event) => audit.recordAlone(within(event)),
    recordOf: (event) => audit.recordOf(within(event)),
  };
}

/** The recorder of a process whose trail is off (EAS_AUDIT=0), and of services built without one. */
export const NO_AUDIT: AuditRecorder = {
  record: () => Promise.resolve(),
  recordAlone: () => Promise.resolve(),
  recordOf: () => undefined,
};
