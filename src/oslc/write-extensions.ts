import type { Kysely } from 'kysely';
import type { RequestOrigin } from '../audit/types.js';
import type { UserProfile } from '../auth/types.js';
import type { DynamicDatabase } from '../db/schema.js';
import type { ObjectMeta } from '../metadata/registry.js';
import type { Row } from './repository.js';
import type { StoredValue } from './values.js';

/*
 * The write path's extension points (src/oslc/README.md, "Write path"): what a module registers on the
 * ResourceService to take part in every write or read of an object, without the service knowing the module.
 */

/** One write of one record, seen by write observers inside the writing transaction. */
export interface RecordWrite {
  object: ObjectMeta;
  operation: 'insert' | 'update' | 'delete';
  uniqueId: number;
  before: Readonly<Row> | undefined;
  after: Readonly<Row> | undefined;
  user: UserProfile;
  /** The request that writes, for the audit trail (none outside a request: a shell, a seed). */
  origin: RequestOrigin | undefined;
}

/**
 * Runs inside the transaction of every write, after the row is written: what it writes commits or rolls back with
 * the record (change tracking of migration packages hooks in here).
 */
export type WriteObserver = (transaction: Kysely<DynamicDatabase>, write: RecordWrite) => Promise<void>;

/**
 * The writes an observer may act on, registered with it; it is not run for others. A create no observer takes part
 * in can be one statement without a transaction (src/oslc/README.md, "Round trips of a write").
 */
export type ObservedWrites = (object: ObjectMeta, operation: RecordWrite['operation']) => boolean;

/** A write observer with the writes it takes part in: it is called for those only. */
export interface ObserverEntry {
  observer: WriteObserver;
  takesPart: ObservedWrites;
}

/** What a write rule sees: the transaction, the writer, and the values about to be written (which it may change). */
export interface WriteRuleContext {
  db: Kysely<DynamicDatabase>;
  object: ObjectMeta;
  user: UserProfile;
  /** The request that writes, for the audit trail (a key refused by its properties). */
  origin?: RequestOrigin | undefined;
  /** The converted values: on insert the whole record, on update the changed attributes. */
  values: Row;
}

/**
 * Rules of one object beyond what its metadata declares (API keys: one per user, generated and sealed values),
 * run inside the writing transaction after the metadata's own validation and before the row is written.
 */
export interface WriteRules {
  beforeInsert?(context: WriteRuleContext): Promise<void>;
  beforeUpdate?(context: WriteRuleContext & { before: Readonly<Row> }): Promise<void>;
  /** Runs before the row (and its children) are deleted; `values` is empty. */
  beforeDelete?(context: WriteRuleContext & { before: Readonly<Row> }): Promise<void>;
}

/**
 * Computes the value a reader sees from the stored one (a sealed API key read in clear by administrators). The
 * reader is null when the read is not on behalf of a user, and then sees what an unprivileged reader sees.
 */
export type ReadTransform = (stored: StoredValue, reader: UserProfile | null) => StoredValue;

/**
 * What a body member writer sees: a member of a write body that is neither an attribute nor a child collection of
 * the object structure, which a module writes after the record, in its transaction (attachments: `doclinks` with
 * base64 `documentdata`, src/attachments).
 */
export interface BodyMemberContext {
  db: Kysely<DynamicDatabase>;
  object: ObjectMeta;
  /** The record as written (its unique id is the owner of what the writer adds). */
  row: Readonly<Row>;
  /** The member's entries (a single object is one entry). */
  entries: ReadonlyArray<Record<string, unknown>>;
  user: UserProfile;
}

export type BodyMemberWriter = (context: BodyMemberContext) => Promise<void>;

/** What the modules of a service graph registered for writes (see ResourceService), as every write consults it. */
export interface RegisteredWriteExtensions {
  observers: readonly ObserverEntry[];
  writeRules: ReadonlyMap<string, WriteRules>;
  /** Body member writers by object (upper case), then by member name (lower case). */
  bodyMembers: ReadonlyMap<string, ReadonlyMap<string, BodyMemberWriter>>;
  /** Objects whose writes are notified on the change bus when they commit (`announceWrites`). */
  announced: ReadonlySet<string>;
}
