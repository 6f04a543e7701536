import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { AuditTable } from './tables.js';

/*
 * What other domains see of the audit trail (docs/audit.md): they describe an event and hand it to `record` inside
 * the transaction of the change it describes. This file imports only types, so any domain may import it.
 */

export type AuditOutcome = 'SUCCESS' | 'FAILURE' | 'REFUSED';

/** One event, as the domain that caused it describes it; who, from where and in which request come from the request. */
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

/** The recorder of a process whose trail is off (EAS_AUDIT=0), and of services built without one. */
export const NO_AUDIT: AuditRecorder = {
  record: () => Promise.resolve(),
  recordAlone: () => Promise.resolve(),
  recordOf: () => undefined,
};
