import type { Kysely } from 'kysely';
import type { RequestOrigin } from '../audit/types.js';
import type { UserProfile } from '../auth/types.js';
import type { Storage } from '../db/database.js';
import type { DynamicDatabase } from '../db/schema.js';
import type { DomainCache } from '../domains/domain-cache.js';
import { errors } from '../errors.js';
import type { MetadataRegistry, ObjectStructure, StructureNode } from '../metadata/registry.js';
import { childNames, hasChildEntries, keyValuesOf } from './child-entries.js';
import type { CurrentColumnLimits } from './column-limits.js';
import { translateDatabaseError } from './database-errors.js';
import { checkIfMatch } from './etags.js';
import * as repository from './repository.js';
import type { Row } from './repository.js';
import type { ResourceReader } from './resource-reader.js';
import { SiteCache } from './site-cache.js';
import { claimTransactionId, recordTransactionResource } from './transaction-repository.js';
import { applyDefaults, convertInput } from './validation.js';
import type { RegisteredWriteExtensions } from './write-extensions.js';
import { needsAutokey, WriteUnit, type ResourceWriter, type WriteSetting } from './write-unit.js';

/** What a write request may add to its writes: `transactionid` and `If-Match` (docs/compatibility.md, "Writes"). */
export interface WriteOptions {
  /** The `transactionid` header: a second request with the same id is refused and writes nothing. */
  transactionId?: string;
  /** The `If-Match` header: the addressed record must still carry one of these ETags (`*`: any). */
  ifMatch?: string;
  /** The request that writes, for the audit trail's write observer (src/audit/README.md, "Request context"). */
  origin?: RequestOrigin;
}

/** What `wsmethod:changeStatus` asks for: the new status, when it took effect (default now), and why. */
export interface StatusChange {
  status: string;
  date?: Date;
  memo?: string;
}

/**
 * The writing side of the resource service: creates, updates, merges, deletes, SYNC and status changes, each one
 * transaction of `WriteUnit`s (or one statement, see `insertsInOneStatement`), with its `transactionid` claimed and
 * its change notifications sent when it commits.
 */
export class ResourceWrites {
  private readonly sites: SiteCache;
  private readonly observers: RegisteredWriteExtensions['observers'];
  private readonly writeRules: RegisteredWriteExtensions['writeRules'];
  private readonly bodyMembers: RegisteredWriteExtensions['bodyMembers'];
  private readonly announced: RegisteredWriteExtensions['announced'];

  constructor(
    private readonly storage: Storage,
    private readonly db: Kysely<DynamicDatabase>,
    private readonly metadata: MetadataRegistry,
    private readonly domains: DomainCache,
    private readonly reader: ResourceReader,
    private readonly columnLimits: CurrentColumnLimits,
    extensions: RegisteredWriteExtensions,
  ) {
    ({
      observers: this.observers,
      writeRules: this.writeRules,
      bodyMembers: this.bodyMembers,
      announced: this.announced,
    } = extensions);
    this.sites = new SiteCache(db);
  }

  /** Starts following other processes' writes of what the write path keeps in memory (the sites). */
  async listen(): Promise<void> {
    await this.sites.listen(this.storage.bus);
  }

  async create(
    structure: ObjectStructure,
    body: Record<string, unknown>,
    user: UserProfile,
    options: WriteOptions = {},
  ): Promise<number> {
    return (await this.createRecord(structure, body, user, options)).uniqueId;
  }

  /**
   * A create that answers the root record's row as its insert returned it too: what the answer's `Location` and
   * `ETag` name, without reading it again (src/oslc/README.md, "Round trips of a write").
   */
  async createRecord(
    structure: ObjectStructure,
    body: Record<string, unknown>,
    user: UserProfile,
    options: WriteOptions = {},
  ): Promise<{ uniqueId: number; row: Row }> {
    const work = async (write: WriteUnit) => {
      const row = await write.insert(structure.root, body, {});
      return { uniqueId: Number(row[structure.root.object.uniqueId]), row };
    };
    if (options.transactionId === undefined && this.insertsInOneStatement(structure.root, body))
      return this.writeAlone(user, options.origin, work);
    return this.write(
      user,
      options.origin,
      work,
      transactionOf(options, (created) => ({ structure, uniqueId: created.uniqueId })),
    );
  }

  /**
   * Whether creating this record writes one statement and nothing else: no write rule of its object, no observer
   * taking part in its inserts, no child entries and no autokey to issue (src/oslc/README.md, "Round trips of a
   * write"). Reading (validation) may still take statements of their own.
   */
  private insertsInOneStatement(node: StructureNode, body: Record<string, unknown>): boolean {
    const object = node.object;
    if (this.writeRules.get(object.name)?.beforeInsert) return false;
    if (this.observers.some(({ takesPart }) => takesPart(object, 'insert'))) return false;
    if (node.children.some((child) => hasChildEntries(body, child.name))) return false;
    const members = this.bodyMembers.get(object.name);
    if (members && [...members.keys()].some((name) => hasChildEntries(body, name))) return false;
    return !needsAutokey(object, convertInput(object, body, undefined, childNames(node)));
  }

  /**
   * `wsmethod:changeStatus` (docs/compatibility.md, "Actions"): the status moves to a value of the status domain
   * that the current one may move to; `statusdate` takes `date` (or now) and a status-history row records it
   * with the memo. One write through the same path as an update.
   */
  async changeStatus(
    structure: ObjectStructure,
    id: string,
    change: StatusChange,
    user: UserProfile,
    origin?: RequestOrigin,
  ): Promise<number> {
    const object = structure.root.object;
    const attribute = object.attributes.get('status');
    if (!attribute?.domainId || !object.def.statusHistory) {
      throw errors.unknownAction('wsmethod:changeStatus', structure.name);
    }
    return this.write(user, origin, async (write) => {
      const uniqueId = await this.reader.resolveId(structure, id, write.db);
      const before = await repository.lockByUniqueId(write.db, object, uniqueId);
      if (!before) throw errors.resourceNotFound(structure.name, id);
      const objPath = object.name.toLowerCase();
      const siteid = typeof before.siteid === 'string' ? before.siteid : null;
      const orgid = typeof before.orgid === 'string' ? before.orgid : null;
      const target = write.domainValue(attribute.domainId!, change.status, siteid, orgid);
      if (!target) throw errors.notInValueList(attribute.title, change.status, 'status', objPath);
      const current = write.domainValue(attribute.domainId!, before.status, siteid, orgid);
      const transitions = attribute.lookup?.kind === 'domain' ? attribute.lookup.transitions : undefined;
      const from = current?.maxvalue ?? String(before.status);
      const to = target.maxvalue ?? change.status;
      if (transitions && !(transitions[from] ?? []).includes(to)) {
        throw errors.statusTransitionRefused(String(before.status), change.status, objPath);
      }
      write.statusChange = { date: change.date, memo: change.memo };
      await write.update(structure.root, uniqueId, { status: change.status }, true, false);
      return uniqueId;
    });
  }

  /** A record as a create would start it (`action=new`): the values sent and the defaults, nothing written. */
  async newRecord(structure: ObjectStructure, body: Record<string, unknown>): Promise<Row> {
    const object = structure.root.object;
    const values = convertInput(object, body, undefined, childNames(structure.root));
    applyDefaults(object, values);
    const siteAttribute = object.def.siteAttribute;
    const orgAttribute = object.def.orgAttribute;
    if (siteAttribute && orgAttribute && typeof values[siteAttribute] === 'string') {
      const site = await repository.findByKeys(this.db, this.metadata.object('SITE'), [
        values[siteAttribute],
      ]);
      if (!site) throw errors.invalidSite(String(values[siteAttribute]), object.name.toLowerCase());
      values[orgAttribute] = site.orgid ?? null;
    }
    return values;
  }

  async update(
    structure: ObjectStructure,
    id: string,
    body: Record<string, unknown>,
    user: UserProfile,
    options: { merge: boolean } & WriteOptions,
  ): Promise<number> {
    return this.write(
      user,
      options.origin,
      async (write) => {
        const uniqueId = await this.reader.resolveId(structure, id, write.db);
        await checkIfMatch(write.db, structure.root.object, uniqueId, options.ifMatch);
        await write.update(structure.root, uniqueId, body, options.merge, true);
        return uniqueId;
      },
      transactionOf(options, (uniqueId) => ({ structure, uniqueId })),
    );
  }

  async remove(
    structure: ObjectStructure,
    id: string,
    user: UserProfile,
    options: WriteOptions = {},
  ): Promise<void> {
    await this.write<number>(
      user,
      options.origin,
      async (write) => {
        const uniqueId = await this.reader.resolveId(structure, id, write.db);
        await checkIfMatch(write.db, structure.root.object, uniqueId, options.ifMatch);
        await write.remove(structure.root, uniqueId);
        return uniqueId;
      },
      transactionOf(options, (uniqueId) => ({ structure, uniqueId })),
    );
  }

  /**
   * SYNC: the record the body's key values name is updated (merged with `merge`), or created when there is none.
   * A body without every key value creates (the service may number the missing key).
   */
  async sync(
    structure: ObjectStructure,
    body: Record<string, unknown>,
    user: UserProfile,
    options: { merge: boolean; mayUpdate?: boolean } & WriteOptions,
  ): Promise<{ uniqueId: number; created: boolean }> {
    return this.write(
      user,
      options.origin,
      async (write) => {
        const object = structure.root.object;
        const keys = keyValuesOf(object, body, {});
        const existing =
          keys.missing === undefined ? await repository.findByKeys(write.db, object, keys.values) : undefined;
        let result: { uniqueId: number; created: boolean };
        if (existing) {
          if (options.mayUpdate === false) throw errors.notAuthorized(structure.name);
          const uniqueId = Number(existing[object.uniqueId]);
          await checkIfMatch(write.db, object, uniqueId, options.ifMatch);
          await write.update(structure.root, uniqueId, body, options.merge, true);
          result = { uniqueId, created: false };
        } else {
          const row = await write.insert(structure.root, body, {});
          result = { uniqueId: Number(row[object.uniqueId]), created: true };
        }
        return result;
      },
      transactionOf(options, (result) => ({ structure, uniqueId: result.uniqueId })),
    );
  }

  /**
   * Runs writes composed elsewhere (child collections, BULK elements) in one transaction of the write path, with
   * its validation, observers and change notifications.
   */
  async writeWith<T>(
    user: UserProfile,
    options: WriteOptions,
    work: (writer: ResourceWriter) => Promise<T>,
    /** The resource a `transactionid` is recorded with. */
    describe: (value: T) => { structure: ObjectStructure; uniqueId: number },
  ): Promise<T> {
    return this.write(user, options.origin, work, transactionOf(options, describe));
  }

  /** What every write unit reads from memory, read before its transaction. */
  private async writeSetting(user: UserProfile, origin: RequestOrigin | undefined): Promise<WriteSetting> {
    // Read before the transaction: on the embedded engine a transaction holds the only connection.
    return {
      metadata: this.metadata,
      domains: await this.domains.snapshot(),
      user,
      origin,
      observers: this.observers,
      writeRules: this.writeRules,
      bodyMembers: this.bodyMembers,
      limits: await this.columnLimits.current(),
      sites: await this.sites.snapshot(),
      bus: this.storage.bus,
      announced: this.announced,
    };
  }

  /**
   * A write of one statement (see `insertsInOneStatement`) outside any transaction: the statement is one on its
   * own, and carries its change notifications.
   */
  private async writeAlone<T>(
    user: UserProfile,
    origin: RequestOrigin | undefined,
    work: (write: WriteUnit) => Promise<T>,
  ): Promise<T> {
    const unit = new WriteUnit(this.db, await this.writeSetting(user, origin));
    try {
      const value = await work(unit);
      await this.storage.bus.notifyAll(this.db, 'object', unit.unnotified());
      for (const objectName of unit.announcedWrites()) this.storage.bus.deliverLocally('object', objectName);
      return value;
    } catch (error) {
      throw translateDatabaseError(error);
    }
  }

  private async write<T>(
    user: UserProfile,
    origin: RequestOrigin | undefined,
    work: (write: WriteUnit) => Promise<T>,
    transactionId?: TransactionRecord<T>,
  ): Promise<T> {
    const setting = await this.writeSetting(user, origin);
    let announcedWrites: () => string[] = () => [];
    try {
      const result = await this.db.transaction().execute(async (transaction) => {
        const unit = new WriteUnit(transaction, setting);
        announcedWrites = () => unit.announcedWrites();
        // Claimed before anything is written: a repeated request waits here for the first and writes nothing.
        const earlier = transactionId && (await claimTransactionId(transaction, transactionId.id));
        if (transactionId && earlier !== undefined)
          throw errors.duplicateTransaction(transactionId.id, earlier);
        const value = await work(unit);
        if (transactionId) {
          const { structure, uniqueId } = transactionId.resource(value);
          await recordTransactionResource(transaction, transactionId.id, `${structure.name}/${uniqueId}`);
        }
        await this.storage.bus.notifyAll(transaction, 'object', unit.unnotified());
        return value;
      });
      for (const objectName of announcedWrites()) this.storage.bus.deliverLocally('object', objectName);
      return result;
    } catch (error) {
      throw translateDatabaseError(error);
    }
  }
}

/** A `transactionid` to claim, and the resource to record with it once written. */
interface TransactionRecord<T> {
  id: string;
  resource: (value: T) => { structure: ObjectStructure; uniqueId: number };
}

function transactionOf<T>(
  options: WriteOptions,
  resource: TransactionRecord<T>['resource'],
): TransactionRecord<T> | undefined {
  return options.transactionId === undefined ? undefined : { id: options.transactionId, resource };
}
