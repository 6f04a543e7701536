import type { InlineMemberReader } from './inline-members.js';
import type { Storage } from '../db/database.js';
import { dynamicView } from '../db/schema.js';
import type { DomainCache } from '../domains/domain-cache.js';
import type { MetadataRegistry } from '../metadata/registry.js';
import type { CacheStatistics } from '../util/cache-statistics.js';
import { CurrentColumnLimits } from './column-limits.js';
import { ResourceReader } from './resource-reader.js';
import { ResourceWrites } from './resource-writes.js';
import type {
  BodyMemberWriter,
  ObservedWrites,
  ObserverEntry,
  ReadTransform,
  WriteObserver,
  WriteRules,
} from './write-extensions.js';

export { keyValuesOf } from './child-entries.js';
export type {
  OneResource,
  OneResourceQuery,
  PageOfMembers,
  PageQuery,
  StablePageQuery,
} from './resource-reader.js';
export type { StatusChange, WriteOptions } from './resource-writes.js';
export type { ResourceWriter } from './write-unit.js';

/**
 * Reads and writes object-structure resources: the one entry the routes, lookups and migration call, and where the
 * modules of the service graph register their write rules, observers and read transforms. Reading is
 * `ResourceReader` (resource-reader.ts); every write of every object goes through `ResourceWrites`
 * (resource-writes.ts): one transaction per request, validation before each row, observers inside the transaction,
 * and one change notification per written object when it commits.
 */
export class ResourceService {
  private readonly observers: ObserverEntry[] = [];
  private readonly writeRules = new Map<string, WriteRules>();
  private readonly bodyMembers = new Map<string, Map<string, BodyMemberWriter>>();
  private readonly readTransforms = new Map<string, Map<string, ReadTransform>>();
  private readonly inlineMembers = new Map<string, Map<string, InlineMemberReader>>();
  /** Objects whose writes are notified on the change bus (see `announceWrites`); the sites are cached here. */
  private readonly announced = new Set<string>(['SITE']);
  private readonly reader: ResourceReader;
  private readonly writes: ResourceWrites;

  // Reading (resource-reader.ts).
  readonly plan: ResourceReader['plan'];
  readonly page: ResourceReader['page'];
  readonly groups: ResourceReader['groups'];
  readonly count: ResourceReader['count'];
  readonly distinct: ResourceReader['distinct'];
  readonly createStableSet: ResourceReader['createStableSet'];
  readonly stablePage: ResourceReader['stablePage'];
  readonly resolveId: ResourceReader['resolveId'];
  readonly resolveChild: ResourceReader['resolveChild'];
  readonly findObjectStructure: ResourceReader['findObjectStructure'];
  readonly readOne: ResourceReader['readOne'];
  readonly readResource: ResourceReader['readResource'];
  readonly readAt: ResourceReader['readAt'];
  readonly byUniqueId: ResourceReader['byUniqueId'];

  // Writing (resource-writes.ts).
  readonly create: ResourceWrites['create'];
  readonly createRecord: ResourceWrites['createRecord'];
  readonly changeStatus: ResourceWrites['changeStatus'];
  readonly newRecord: ResourceWrites['newRecord'];
  readonly update: ResourceWrites['update'];
  readonly remove: ResourceWrites['remove'];
  readonly sync: ResourceWrites['sync'];
  readonly writeWith: ResourceWrites['writeWith'];

  constructor(storage: Storage, metadata: MetadataRegistry, domains: DomainCache) {
    const db = dynamicView(storage.db);
    const limits = new CurrentColumnLimits(db, metadata);
    const reader = new ResourceReader(db, metadata, domains, this.readTransforms, limits);
    const extensions = {
      observers: this.observers,
      writeRules: this.writeRules,
      bodyMembers: this.bodyMembers,
      announced: this.announced,
    };
    const writes = new ResourceWrites(storage, db, metadata, domains, reader, limits, extensions);
    this.reader = reader;
    this.writes = writes;
    this.plan = reader.plan.bind(reader);
    this.page = reader.page.bind(reader);
    this.groups = reader.groups.bind(reader);
    this.count = reader.count.bind(reader);
    this.distinct = reader.distinct.bind(reader);
    this.createStableSet = reader.createStableSet.bind(reader);
    this.stablePage = reader.stablePage.bind(reader);
    this.resolveId = reader.resolveId.bind(reader);
    this.resolveChild = reader.resolveChild.bind(reader);
    this.findObjectStructure = reader.findObjectStructure.bind(reader);
    this.readOne = reader.readOne.bind(reader);
    this.readResource = reader.readResource.bind(reader);
    this.readAt = reader.readAt.bind(reader);
    this.byUniqueId = reader.byUniqueId.bind(reader);
    this.create = writes.create.bind(writes);
    this.createRecord = writes.createRecord.bind(writes);
    this.changeStatus = writes.changeStatus.bind(writes);
    this.newRecord = writes.newRecord.bind(writes);
    this.update = writes.update.bind(writes);
    this.remove = writes.remove.bind(writes);
    this.sync = writes.sync.bind(writes);
    this.writeWith = writes.writeWith.bind(writes);
  }

  /** Hits and misses of the query plan cache (the metrics read them). */
  get planCacheStatistics(): CacheStatistics {
    return this.reader.planCacheStatistics;
  }

  /** Hits and misses of the compiled page statements, kept by the shape of their query. */
  get pageStatementStatistics(): CacheStatistics {
    return this.reader.pageStatementStatistics;
  }

  /** Starts following other processes' writes of what the write path keeps in memory (the sites). */
  async listen(): Promise<void> {
    await this.writes.listen();
  }

  /**
   * Registers an observer of writes; `takesPart` says which writes it may act on (by default all). A create that no
   * observer takes part in may be one statement without a transaction (see `insertsInOneStatement`).
   */
  addWriteObserver(observer: WriteObserver, takesPart: ObservedWrites = () => true): void {
    this.observers.push({ observer, takesPart });
  }

  /**
   * Registers objects a module keeps data of in memory and drops when the change bus says they were written: their
   * writes are notified when they commit. Writes of other objects are not: no process would act on them, and a
   * commit that notifies holds PostgreSQL's notification lock until it is flushed, so such commits run one at a
   * time (src/db/README.md).
   */
  announceWrites(objectNames: Iterable<string>): void {
    for (const objectName of objectNames) this.announced.add(objectName.toUpperCase());
  }

  /** Registers the write rules of an object (by name, upper case); one set per object. */
  addWriteRules(objectName: string, rules: WriteRules): void {
    this.writeRules.set(objectName.toUpperCase(), rules);
  }

  /**
   * Registers the writer of a body member of an object's records (by name, lower case) that is neither an attribute
   * nor a child collection: it runs after the record is written, in the same transaction.
   */
  addBodyMember(objectName: string, member: string, writer: BodyMemberWriter): void {
    const name = objectName.toUpperCase();
    const members = this.bodyMembers.get(name) ?? new Map<string, BodyMemberWriter>();
    members.set(member.toLowerCase(), writer);
    this.bodyMembers.set(name, members);
  }

  /**
   * Registers the reader of a member of an object's records (by name, lower case) that `oslc.select` may name
   * beside the attributes and child collections (src/oslc/inline-members.ts).
   */
  addInlineMember(objectName: string, member: string, reader: InlineMemberReader): void {
    const name = objectName.toUpperCase();
    const members = this.inlineMembers.get(name) ?? new Map<string, InlineMemberReader>();
    members.set(member.toLowerCase(), reader);
    this.inlineMembers.set(name, members);
  }

  /** The readers of the members an object's records may carry inline, by member name. */
  inlineMembersOf(objectName: string): ReadonlyMap<string, InlineMemberReader> | undefined {
    return this.inlineMembers.get(objectName.toUpperCase());
  }

  /** Registers how an attribute's stored value is presented on every read of its object. */
  addReadTransform(objectName: string, attribute: string, transform: ReadTransform): void {
    const name = objectName.toUpperCase();
    const transforms = this.readTransforms.get(name) ?? new Map<string, ReadTransform>();
    transforms.set(attribute, transform);
    this.readTransforms.set(name, transforms);
  }
}
