import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { giveTurnWhenDue } from '../util/event-loop-turns.js';
import type { Kysely } from 'kysely';
import type { UserProfile } from '../auth/types.js';
import { EVERYTHING_CHANGED } from '../db/change-bus.js';
import { openStorage, type Storage } from '../db/database.js';
import type { DynamicDatabase } from '../db/schema.js';
import { errors, isMaximoError, type MaximoError } from '../errors.js';
import type { ObjectMeta, ObjectStructure, StructureNode } from '../metadata/registry.js';
import {
  QueryParseError,
  parseOrderBy,
  parseSelect,
  parseWhere,
  type MemberRecord,
  type QueryPlan,
} from '../oslc/query/index.js';
import { findByKeys } from '../oslc/repository.js';
import type { BatchRecord } from '../oslc/batch-writer.js';
import { keyValuesOf, type ResourceService } from '../oslc/service.js';
import type { StoredValue } from '../oslc/values.js';
import type { ObservedWrites, ReadTransform, WriteObserver, WriteRules } from '../oslc/write-extensions.js';
import type { Manifest } from './package-file.js';
import { EXPECTED_FIELD, driftAttributes, driftHash, drifted } from './drift.js';
import {
  FORMAT_VERSION,
  FORMAT_VERSION_WITHOUT_DRIFT,
  readPackageFile,
  writePackageFile,
  type DataSource,
  type ManifestEntry,
} from './package-file.js';
import * as repository from './repository.js';
import { rootRowsOf, trackingMapOf, type TrackingMap } from './tracking.js';
import type { Db, PackageDefinition, PackageRow } from './repository.js';
import { splitUrlCredentials, type CredentialSeal } from './credentials.js';
import type { AttributeChange, DbConfigService, StructuralChangeGuard } from '../dbconfig/service.js';
import { typedView, dynamicView, type Database } from '../db/schema.js';
import type { PropertyService } from '../properties/service.js';
import { carried, deployProperty, isPropertyStructure, previewProperty } from './properties.js';

/** Package statuses (docs/migration.md, "Statuses"): the deployed systems' list, nothing more. */
export const PACKAGE_STATUS = {
  createNew: 'CREATE_NEW',
  createInProgress: 'CREATE_INPROGRESS',
  created: 'CREATED',
  createError: 'CREATE_ERROR',
  closed: 'CLOSED',
  deployNew: 'DEPLOY_NEW',
  deployInProgress: 'DEPLOY_INPROGRESS',
  deployed: 'DEPLOYED',
  deployError: 'DEPLOY_ERROR',
} as const;

/** Statuses a target-side package may be deployed from: an interrupted deploy left DEPLOY_INPROGRESS behind. */
const DEPLOYABLE: ReadonlySet<string> = new Set([
  PACKAGE_STATUS.deployNew,
  PACKAGE_STATUS.deployInProgress,
  PACKAGE_STATUS.deployError,
  PACKAGE_STATUS.deployed,
]);

/** The package record as the endpoints answer it (docs/migration.md, "Package record"). */
export interface PackageRecord {
  dmpackageid: number;
  pkgdefname: string;
  source: string;
  package: string;
  type: string;
  status: string;
  statusdate: string;
  filename: string | null;
  readme: string | null;
  createby: string | null;
  createdate: string;
  progressstatus: string | null;
  distributionmessage?: string;
}

export interface DeployOutcome {
  warningmsg: string;
}

/** Per object structure: what a deploy would add, change (attribute by attribute) and delete. */
export interface PreviewOutcome {
  pkgdefname: string;
  dmpackageid: number;
  objects: Array<{
    objectstructure: string;
    add: string[];
    change: Array<{ key: string; attributes: Record<string, { from: unknown; to: unknown }> }>;
    delete: string[];
    /** Records the target holds in another state than the source expected (docs/migration.md, "Drift guard"). */
    drift: string[];
  }>;
  /** Custom attributes the deploy would add or change (`ADD ASSET.MIGRATED`). */
  structural: string[];
}

type JsonRecord = Record<string, unknown>;

/** Objects whose writes change which records are tracked. */
export const DEFINITION_OBJECTS: ReadonlySet<string> = new Set(['DMPACKAGEDEF', 'DMPKGDEFCONTENT']);

const DELETE_ACTION = 'Delete';

/**
 * Migration packages (docs/migration.md): definitions say what to move, packages carry it. A package is created
 * into staging rows (its manifest and NDJSON chunks), distributed as a zip file (FILE) or written into the target
 * deployment's database (DATABASE), and deployed on the target in one transaction of the write path.
 */
export class MigrationService {
  private readonly db: Db;
  private source: string | undefined;
  /** Object name → where it sits in the structures active CHANGE definitions cover (root or child). */
  private tracking: TrackingMap | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly resources: ResourceService,
    private readonly seal: CredentialSeal,
    private readonly dbconfig: DbConfigService,
    private readonly guard: StructuralChangeGuard,
    private readonly properties: PropertyService,
  ) {
    this.db = storage.db;
  }

  /** Loads the source identity and listens for changes of definitions (the tracking cache). */
  async start(): Promise<void> {
    this.source = await repository.databaseIdentity(this.db);
    await this.storage.bus.listen('object', (objectName) => {
      if (DEFINITION_OBJECTS.has(objectName) || objectName === EVERYTHING_CHANGED) this.tracking = undefined;
    });
  }

  sourceIdentity(): string {
    if (this.source === undefined) throw new Error('MigrationService used before start()');
    return this.source;
  }

  /** Write rules of package definitions: `source` from this deployment; CHANGE activation checks. */
  readonly definitionRules: WriteRules = {
    beforeInsert: async ({ values }) => {
      values.source = this.sourceIdentity();
      values.statusdate = new Date();
      this.checkActivation(values, values);
    },
    beforeUpdate: async ({ values, before }) => {
      if ('status' in values && values.status !== before.status) values.statusdate = new Date();
      this.checkActivation(values, { ...before, ...values });
    },
  };

  /**
   * Write rules of a definition's content: its where clause is parsed and planned against its object structure when
   * it is written, and refused with the query engine's own error (docs/migration.md, "Where clauses").
   */
  readonly contentRules: WriteRules = {
    beforeInsert: async ({ values }) => this.checkWhereClause(values),
    beforeUpdate: async ({ values, before }) => {
      if ('whereclause' in values || 'objectstructure' in values)
        this.checkWhereClause({ ...before, ...values });
    },
  };

  private checkWhereClause(record: Record<string, StoredValue>): void {
    const structure = this.resources.findObjectStructure(String(record.objectstructure ?? ''));
    // An unknown structure is refused when the package is created, as before (contentOf).
    if (structure && typeof record.whereclause === 'string') this.snapshotPlan(structure, record.whereclause);
  }

  /**
   * The plan of a SNAPSHOT structure's records: every attribute, in unique id order, matching its where clause. A
   * clause that does not parse is the client's error (400 BMXAA8744E), never a failure of the server.
   */
  private snapshotPlan(structure: ObjectStructure, where: string | null): QueryPlan {
    const object = structure.root.object;
    let clause;
    try {
      clause = where !== null && where.trim() !== '' ? parseWhere(where) : undefined;
    } catch (error) {
      if (error instanceof QueryParseError)
        throw errors.queryNotParsed(`The where clause of ${structure.name}: ${error.message}`);
      throw error;
    }
    return this.resources.plan(structure, {
      select: parseSelect(selectAll(structure.root)),
      orderBy: parseOrderBy(`+${object.uniqueId}`),
      ...(clause && { where: clause }),
    });
  }

  /**
   * Write rules of targets: credentials in a DATABASE target's URL are moved into `username` and `password`, and
   * the password is sealed before it is stored (docs/security.md, "URL credentials").
   */
  readonly targetRules: WriteRules = {
    beforeInsert: async ({ values }) => this.sealTargetCredentials(values),
    beforeUpdate: async ({ values }) => this.sealTargetCredentials(values),
  };

  private sealTargetCredentials(values: Record<string, StoredValue>): void {
    if (typeof values.url === 'string') {
      const split = splitUrlCredentials(values.url);
      values.url = split.url;
      // A user name or password given on its own wins over the one the URL carried.
      if (split.username !== undefined && !values.username) values.username = split.username;
      if (split.password !== undefined && !values.password) values.password = split.password;
    }
    if (typeof values.password === 'string' && values.password !== '')
      values.password = this.seal.seal(values.password);
  }

  /** A target's URL as read: one stored with credentials by an earlier release is shown without them. */
  readonly targetUrlShown: ReadTransform = (stored) =>
    typeof stored === 'string' ? splitUrlCredentials(stored).url : stored;

  /**
   * Activating a CHANGE definition needs status APPR and no object structure whose root is keyed by its unique id
   * (a record moved to another deployment has another unique id there).
   */
  private checkActivation(changed: Record<string, StoredValue>, record: Record<string, StoredValue>): void {
    if (changed.active !== true || record.type !== 'CHANGE') return;
    const name = String(record.pkgdefname);
    if (record.status !== 'APPR')
      throw errors.packageDefinitionRefused(
        name,
        'a CHANGE definition must have the status APPR to be activated',
      );
  }

  /**
   * The writes CHANGE tracking may record: of an object some active definition covers, or of any while the
   * definitions are not known (the write path runs the observer only for these).
   */
  readonly changeWrites: ObservedWrites = (object) => !this.tracking || this.tracking.has(object.name);

  /**
   * The write observer of CHANGE tracking: one row per write of a covered record, in the writer's transaction. A
   * write of a child collection's row marks its root record as written; each row keeps the root's drift hash before
   * the write (docs/migration.md, "Drift guard").
   */
  readonly changeObserver: WriteObserver = async (transaction, write) => {
    const places = (await this.trackingMap(typedView(transaction), write.object.name)).get(write.object.name);
    if (!places) return;
    const row = write.after ?? write.before;
    if (!row) return;
    for (const { pkgdefname, structure, path } of places) {
      const root = structure.root.object;
      const names = driftAttributes(root);
      const record = (
        operation: string,
        rootRow: Readonly<Record<string, StoredValue>>,
        before: string | null,
      ) =>
        repository.recordChange(
          typedView(transaction),
          pkgdefname,
          structure.name,
          operation,
          JSON.stringify(root.keys.map((key) => jsonValue(rootRow[key] ?? null))),
          before,
        );
      if (path.length === 1) {
        const before = write.before ? driftHash(root, names, write.before) : null;
        await record(write.operation === 'delete' ? 'delete' : 'write', row, before);
        continue;
      }
      for (const rootRow of await rootRowsOf(transaction, path, row))
        await record('write', rootRow, driftHash(root, names, rootRow));
    }
  };

  /**
   * Object → where active CHANGE definitions cover it. Read through the writer's transaction (on the embedded
   * database it holds the only connection), and kept until the change bus says a definition changed; not kept when
   * the transaction itself writes definitions, as it may yet roll back.
   */
  private async trackingMap(transaction: Db, objectName: string): Promise<TrackingMap> {
    if (this.tracking) return this.tracking;
    const rows = await repository.activeChangeDefinitions(transaction);
    const map = trackingMapOf(
      rows.flatMap((row) => {
        const structure = this.resources.findObjectStructure(row.objectstructure);
        return structure ? [{ pkgdefname: row.pkgdefname, structure }] : [];
      }),
    );
    if (!DEFINITION_OBJECTS.has(objectName)) this.tracking = map;
    return map;
  }

  private async definition(pkgdefname: string): Promise<PackageDefinition> {
    const definition = await repository.findDefinition(this.db, pkgdefname.toUpperCase());
    if (!definition) throw errors.packageDefinitionNotFound(pkgdefname);
    return definition;
  }

  private async packageOf(pkgdefname: string, dmpackageid: number): Promise<PackageRow> {
    const row = await repository.findPackage(this.db, dmpackageid);
    if (!row || row.pkgdefname !== pkgdefname.toUpperCase())
      throw errors.packageNotFound(String(dmpackageid), pkgdefname);
    return row;
  }

  /** Content structures of a definition, checked: known, and for CHANGE not keyed by a unique id. */
  private async contentOf(
    definition: PackageDefinition,
  ): Promise<Array<{ structure: ObjectStructure; where: string | null; order: number }>> {
    const content = await repository.definitionContent(this.db, definition.pkgdefname);
    if (content.length === 0)
      throw errors.packageDefinitionRefused(definition.pkgdefname, 'it names no object structure');
    return content.map((entry, index) => {
      const structure = this.resources.findObjectStructure(entry.objectstructure);
      if (!structure)
        throw errors.packageDefinitionRefused(
          definition.pkgdefname,
          `the object structure ${entry.objectstructure} does not exist`,
        );
      // A clause stored before it was checked on write is refused here, before any package exists.
      this.snapshotPlan(structure, entry.whereclause);
      return { structure, where: entry.whereclause, order: index + 1 };
    });
  }

  /** `POST /dm/create`: the package's records read into staging, its manifest written; status CREATED. */
  async create(pkgdefname: string, readme: string | undefined, user: UserProfile): Promise<PackageRecord> {
    const definition = await this.definition(pkgdefname);
    const content = await this.contentOf(definition);
    if (definition.type === 'CHANGE') {
      for (const { structure } of content) refuseUniqueIdKeys(definition.pkgdefname, structure);
    }
    const created = await this.db.transaction().execute(async (trx) => {
      const row = await repository.insertPackage(trx, {
        pkgdefname: definition.pkgdefname,
        source: this.sourceIdentity(),
        package: `${definition.pkgdefname}_${Date.now().toString(36).toUpperCase()}`,
        type: definition.type,
        status: PACKAGE_STATUS.createInProgress,
        filename: null,
        readme: readme ?? null,
        createby: user.userid,
        changeby: user.userid,
        progressstatus: 'Reading records',
        distributionmessage: null,
        side: 'SOURCE',
      });
      return repository.updatePackage(trx, row.dmpackageid, {
        filename: `${definition.pkgdefname}_${row.dmpackageid}.zip`,
      });
    });
    // A CHANGE package's period starts at the previous package's mark (docs/migration.md, "Drift guard").
    const period =
      definition.type === 'CHANGE'
        ? await repository.markPackage(this.db, definition.pkgdefname, created.dmpackageid)
        : undefined;
    try {
      const entries: ManifestEntry[] = [];
      for (const { structure, where, order } of content) {
        const lines = period
          ? this.changeLines(definition.pkgdefname, structure, period.periodStart)
          : this.snapshotLines(structure, where, definition.batchsize);
        const progress = (count: number) =>
          repository.updatePackage(this.db, created.dmpackageid, {
            progressstatus: `Reading: ${formatCount(count)} ${structure.name} records (${order} of ${content.length} object structures)`,
          });
        const entry = await this.stage(
          created.dmpackageid,
          structure.name,
          order,
          lines,
          definition.batchsize,
          progress,
        );
        entries.push(
          period ? { ...entry, expectedattributes: driftAttributes(structure.root.object) } : entry,
        );
        await repository.updatePackage(this.db, created.dmpackageid, {
          progressstatus: `Read ${entries.length} of ${content.length} object structures`,
        });
      }
      const manifest: Manifest = {
        formatVersion: period ? FORMAT_VERSION : FORMAT_VERSION_WITHOUT_DRIFT,
        source: created.source,
        pkgdefname: created.pkgdefname,
        type: definition.type,
        xmlaction: definition.xmlaction,
        package: created.package,
        ...(readme !== undefined && { readme }),
        createby: user.userid,
        createdate: created.createdate.toISOString(),
        entries,
        attributes: await this.customAttributesOf(content.map((entry) => entry.structure)),
      };
      const done = await this.db.transaction().execute(async (trx) => {
        await repository.insertStaging(trx, created.dmpackageid, {
          type: 'MANIFEST',
          cfgobject: null,
          cfgdataorder: 0,
          chunk: 0,
          cfgobjectcount: entries.length,
          content: JSON.stringify(manifest),
        });
        return repository.updatePackage(trx, created.dmpackageid, {
          status: PACKAGE_STATUS.created,
          progressstatus: `Created: ${describeCounts(entries)}`,
        });
      });
      return packageRecord(done);
    } catch (error) {
      if (period) await repository.removeMark(this.db, period.mark);
      await repository.deleteStaging(this.db, created.dmpackageid);
      await repository.updatePackage(this.db, created.dmpackageid, {
        status: PACKAGE_STATUS.createError,
        progressstatus: isMaximoError(error) ? error.message.slice(0, 200) : 'Creation failed',
      });
      throw error;
    }
  }

  /** The custom attributes of every object of the structures (root and children), as the manifest carries them. */
  private async customAttributesOf(
    structures: readonly ObjectStructure[],
  ): Promise<NonNullable<Manifest['attributes']>> {
    const objects = new Set<string>();
    const visit = (node: StructureNode) => {
      objects.add(node.object.name);
      node.children.forEach(visit);
    };
    structures.forEach((structure) => visit(structure.root));
    const rows = await this.dbconfig.listCustomAttributes();
    return rows
      .filter((row) => objects.has(row.objectname))
      .map((row) => ({
        objectname: row.objectname,
        attributename: row.attributename,
        maxtype: row.maxtype,
        length: row.length,
        scale: row.scale,
        required: row.required,
        defaultvalue: row.defaultvalue,
        domainid: row.domainid,
        title: row.title,
      }));
  }

  /** The configuration changes a package needs on this deployment: its custom attributes that are missing or differ. */
  private async structuralChanges(manifest: Manifest): Promise<AttributeChange[]> {
    const wanted = manifest.attributes ?? [];
    if (wanted.length === 0) return [];
    const present = new Map(
      (await this.dbconfig.listCustomAttributes()).map((row) => [
        `${row.objectname}.${row.attributename}`,
        row,
      ]),
    );
    const changes: AttributeChange[] = [];
    for (const attribute of wanted) {
      const current = present.get(`${attribute.objectname}.${attribute.attributename}`);
      const same =
        current !== undefined &&
        current.maxtype === attribute.maxtype &&
        current.length === attribute.length &&
        current.scale === attribute.scale &&
        current.required === attribute.required &&
        current.defaultvalue === attribute.defaultvalue &&
        current.domainid === attribute.domainid &&
        current.title === attribute.title;
      if (!same) changes.push({ ...attribute, changetype: current ? 'CHANGE' : 'ADD' });
    }
    return changes;
  }

  /** Writes one object's lines into staging chunks, counting, sizing and hashing them as the file will hold them. */
  private async stage(
    dmpackageid: number,
    objectstructure: string,
    order: number,
    lines: AsyncIterable<string>,
    batchSize: number,
    /** Hears the records staged so far after each chunk (the package's progress, docs/migration.md "Progress"). */
    progress: (count: number) => Promise<unknown>,
  ): Promise<ManifestEntry> {
    const hash = createHash('sha256');
    let bytes = 0;
    let count = 0;
    let chunk = 0;
    let batch: string[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      await repository.insertStaging(this.db, dmpackageid, {
        type: 'CFGDATA',
        cfgobject: objectstructure,
        cfgdataorder: order,
        chunk: chunk++,
        cfgobjectcount: batch.length,
        content: batch.join('\n'),
      });
      batch = [];
      await giveTurnWhenDue();
      await progress(count);
    };
    for await (const line of lines) {
      const bytesOfLine = Buffer.from(`${line}\n`);
      hash.update(bytesOfLine);
      bytes += bytesOfLine.length;
      count += 1;
      batch.push(line);
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    return {
      name: `data/${String(order).padStart(3, '0')}-${objectstructure}.ndjson`,
      objectstructure,
      cfgdataorder: order,
      count,
      bytes,
      sha256: hash.digest('hex'),
    };
  }

  /**
   * The records of a SNAPSHOT structure matching its where clause, a page at a time in unique id order, each page
   * after the last unique id of the one before (an offset would read every earlier record again: quadratic).
   */
  private async *snapshotLines(
    structure: ObjectStructure,
    where: string | null,
    pageSize: number,
  ): AsyncGenerator<string> {
    const object = structure.root.object;
    const uniqueId = object.attributes.get(object.uniqueId)!;
    const plan = this.snapshotPlan(structure, where);
    let after: number | undefined;
    for (;;) {
      const page = await this.resources.page({
        plan,
        window: { limit: pageSize, offset: 0 },
        ...(after !== undefined && {
          extraFilters: [
            {
              combine: 'and',
              predicates: [
                { op: 'gt', column: { via: [], viaTables: [], object, attribute: uniqueId }, value: after },
              ],
            },
          ],
        }),
        withCount: false,
        reader: null,
      });
      for (const member of page.members) {
        if (carried(structure, member)) yield JSON.stringify(exportRecord(member));
      }
      if (!page.hasMore || page.members.length === 0) return;
      after = Number(page.members.at(-1)!.values[object.uniqueId]);
    }
  }

  /**
   * The records a CHANGE definition tracked: each changed record as it is now, or its deletion; each with the drift
   * hash the target's row is expected to have (docs/migration.md, "Drift guard"): the hash before the record's first
   * write since `periodStart`, or, for a record not written since, its hash now (the previous package carried it so).
   */
  private async *changeLines(
    pkgdefname: string,
    structure: ObjectStructure,
    periodStart: number,
  ): AsyncGenerator<string> {
    const object = structure.root.object;
    const names = driftAttributes(object);
    const plan = this.resources.plan(structure, { select: parseSelect(selectAll(structure.root)) });
    const changes = await repository.trackedChanges(this.db, pkgdefname, structure.name, periodStart);
    for (const change of changes) {
      const keys = JSON.parse(change.keyvalues) as StoredValue[];
      const keyRecord = Object.fromEntries(object.keys.map((key, index) => [key, keys[index] ?? null]));
      const row =
        change.operation === 'delete' ? undefined : await findByKeys(this.dynamicDb(), object, keys);
      // Added in the period (no before hash), or deleted before it: nothing the target's row must match.
      const expected = change.inperiod ? change.firstbefore : row ? driftHash(object, names, row) : null;
      const guard = expected === null ? {} : { [EXPECTED_FIELD]: expected };
      if (!row) {
        yield JSON.stringify({ ...keyRecord, _action: DELETE_ACTION, ...guard });
        continue;
      }
      const page = await this.resources.page({
        plan,
        window: { limit: 1, offset: 0 },
        extraFilters: [this.resources.byUniqueId(structure, Number(row[object.uniqueId]))],
        withCount: false,
        reader: null,
      });
      const member = page.members[0];
      if (member) yield JSON.stringify({ ...exportRecord(member), ...guard });
    }
  }

  private dynamicDb(): Kysely<DynamicDatabase> {
    return dynamicView(this.storage.db);
  }

  private async manifestOf(db: Db, dmpackageid: number): Promise<Manifest> {
    const text = await repository.readManifest(db, dmpackageid);
    if (text === undefined) throw errors.packageStatusRefused(String(dmpackageid), 'without content', 'this');
    return JSON.parse(text) as Manifest;
  }

  /**
   * `POST /dm/distribute`: to the named target, or every target of the definition. A FILE target makes the package
   * file downloadable; a DATABASE target receives the package as a target-side record ready to deploy. A CHANGE
   * definition's listener is deactivated.
   */
  async distribute(
    pkgdefname: string,
    dmpackageid: number,
    targetname: string | undefined,
    user: UserProfile,
  ): Promise<PackageRecord> {
    const definition = await this.definition(pkgdefname);
    const row = await this.packageOf(definition.pkgdefname, dmpackageid);
    if (row.side !== 'SOURCE' || row.status !== PACKAGE_STATUS.created)
      throw errors.packageStatusRefused(String(dmpackageid), row.status, 'distribute');
    const targets = await repository.definitionTargets(this.db, definition.pkgdefname);
    const chosen =
      targetname === undefined
        ? targets
        : targets.filter((target) => target.targetname === targetname.toUpperCase());
    if (targetname !== undefined && chosen.length === 0)
      throw errors.packageTargetNotFound(targetname, definition.pkgdefname);
    const messages: string[] = [];
    for (const target of chosen) {
      if (target.type === 'DATABASE') {
        const received = await this.sendToDatabase(target, row);
        messages.push(
          `Package ${row.package} distributed to the database of target ${target.targetname} as package ${received}.`,
        );
      } else {
        messages.push(
          `Package ${row.package} is ready for download as ${row.filename ?? ''} (target ${target.targetname}).`,
        );
      }
    }
    if (chosen.length === 0) messages.push(`Package ${row.package} has no target: it is ready for download.`);
    const updated = await this.db.transaction().execute(async (trx) => {
      if (definition.type === 'CHANGE') {
        await repository.setDefinitionActive(trx, definition.pkgdefname, false);
        await this.storage.bus.notify<Database>(trx, 'object', 'DMPACKAGEDEF');
      }
      return repository.updatePackage(trx, dmpackageid, {
        distributionmessage: messages.join(' ').slice(0, 1000),
        changeby: user.userid,
      });
    });
    if (definition.type === 'CHANGE') this.storage.bus.deliverLocally('object', 'DMPACKAGEDEF');
    return { ...packageRecord(updated), distributionmessage: updated.distributionmessage ?? '' };
  }

  /** Writes the package into a DATABASE target as a target-side record with its staging rows, in one transaction. */
  private async sendToDatabase(target: repository.PackageTarget, row: PackageRow): Promise<number> {
    if (!target.url)
      throw errors.packageTargetUnreachable(target.targetname, 'the target has no database URL');
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      throw errors.packageTargetUnreachable(target.targetname, 'the database URL is not valid');
    }
    if (target.username) url.username = encodeURIComponent(target.username);
    if (target.password) {
      const password = this.seal.open(target.password);
      if (password === undefined)
        throw errors.packageTargetUnreachable(target.targetname, 'the stored password cannot be opened');
      url.password = encodeURIComponent(password);
    }
    let remote: Storage;
    try {
      remote = await openStorage({
        kind: 'postgres',
        url: url.toString(),
        ...(target.schemaname && { schema: target.schemaname }),
        poolSize: 1,
        onFault: () => undefined,
      });
    } catch {
      throw errors.packageTargetUnreachable(target.targetname, 'the database cannot be reached');
    }
    try {
      const manifest = await this.manifestOf(this.db, row.dmpackageid);
      const remoteDb = remote.db;
      return await remoteDb.transaction().execute(async (trx) => {
        const existing = await repository.findReceived(trx, row.pkgdefname, row.source, row.package);
        if (existing) {
          if (existing.status === PACKAGE_STATUS.deployed) return existing.dmpackageid;
          await repository.deletePackage(trx, existing.dmpackageid);
        }
        const received = await repository.insertPackage(trx, {
          ...receivedValues(manifest, row.filename),
        });
        await repository.insertStaging(trx, received.dmpackageid, {
          type: 'MANIFEST',
          cfgobject: null,
          cfgdataorder: 0,
          chunk: 0,
          cfgobjectcount: manifest.entries.length,
          content: JSON.stringify(manifest),
        });
        for (const entry of manifest.entries) {
          let chunk = 0;
          for await (const content of repository.stagedChunks(this.db, row.dmpackageid, entry.cfgdataorder)) {
            await repository.insertStaging(trx, received.dmpackageid, {
              type: 'CFGDATA',
              cfgobject: entry.objectstructure,
              cfgdataorder: entry.cfgdataorder,
              chunk: chunk++,
              cfgobjectcount: content.split('\n').length,
              content,
            });
          }
        }
        return received.dmpackageid;
      });
    } catch (error) {
      if (isMaximoError(error)) throw error;
      throw errors.packageTargetUnreachable(
        target.targetname,
        'writing the package failed (is the target migrated to this release?)',
      );
    } finally {
      await remote.close();
    }
  }

  /** `GET /dm/download`: the package file, streamed from staging. */
  async download(pkgdefname: string, dmpackageid: number): Promise<{ filename: string; file: Readable }> {
    const row = await this.packageOf(pkgdefname, dmpackageid);
    if (row.side !== 'SOURCE' || row.status !== PACKAGE_STATUS.created)
      throw errors.packageStatusRefused(String(dmpackageid), row.status, 'download');
    const manifest = await this.manifestOf(this.db, dmpackageid);
    const sources: DataSource[] = manifest.entries.map((entry) => ({
      name: entry.name,
      lines: () => this.stagedLines(this.db, dmpackageid, entry.cfgdataorder),
    }));
    return {
      filename: row.filename ?? `${row.pkgdefname}_${row.dmpackageid}.zip`,
      file: writePackageFile(manifest, sources),
    };
  }

  private async *stagedLines(db: Db, dmpackageid: number, order: number): AsyncGenerator<string> {
    for await (const content of repository.stagedChunks(db, dmpackageid, order)) {
      for (const line of content.split('\n')) yield line;
    }
  }

  /**
   * `POST /dm/upload`: the file at `path` (the request body, on disk) checked whole and stored as a target-side
   * package in one transaction; a file refused leaves nothing behind. The same package uploaded again answers the
   * record it made the first time.
   */
  async upload(path: string, filename: string, user: UserProfile): Promise<PackageRecord> {
    const stored = await this.db.transaction().execute(async (trx) => {
      let received: PackageRow | undefined;
      const manifest = await readPackageFile(
        path,
        1000,
        async (entry, lines, batch) => {
          if (!received) return;
          await repository.insertStaging(trx, received.dmpackageid, {
            type: 'CFGDATA',
            cfgobject: entry.objectstructure,
            cfgdataorder: entry.cfgdataorder,
            chunk: batch,
            cfgobjectcount: lines.length,
            content: lines.join('\n'),
          });
        },
        async (manifest) => {
          const existing = await repository.findReceived(
            trx,
            manifest.pkgdefname,
            manifest.source,
            manifest.package,
          );
          if (existing) {
            if (
              existing.status === PACKAGE_STATUS.deployed ||
              existing.status === PACKAGE_STATUS.deployInProgress
            )
              return false;
            await repository.deletePackage(trx, existing.dmpackageid);
          }
          received = await repository.insertPackage(trx, {
            ...receivedValues(manifest, filename),
            changeby: user.userid,
          });
          await repository.insertStaging(trx, received.dmpackageid, {
            type: 'MANIFEST',
            cfgobject: null,
            cfgdataorder: 0,
            chunk: 0,
            cfgobjectcount: manifest.entries.length,
            content: JSON.stringify(manifest),
          });
          return true;
        },
      );
      return (
        received ??
        (await repository.findReceived(trx, manifest.pkgdefname, manifest.source, manifest.package))
      );
    });
    if (!stored) throw errors.internal();
    return packageRecord(stored);
  }

  private deployObserver: ((result: 'deployed' | 'failed') => void) | undefined;

  /** Tells `observer` how each deploy that started writing ended (the deploy counter of the metrics). */
  observeDeploys(observer: (result: 'deployed' | 'failed') => void): void {
    this.deployObserver = observer;
  }

  /**
   * `POST /dm/deploy`: every record of the package through the write path, in one transaction: added when the
   * target has no record with its keys, else changed (merged for AddChange, replaced for Replace), or deleted.
   * Any refusal rolls everything back and names the record; the package is then DEPLOY_ERROR. So does drift (a
   * record this deployment holds in another state than the source expected) unless `force`.
   */
  async deploy(
    pkgdefname: string,
    dmpackageid: number,
    user: UserProfile,
    force = false,
  ): Promise<DeployOutcome> {
    const row = await this.packageOf(pkgdefname, dmpackageid);
    if (row.side !== 'TARGET' || !DEPLOYABLE.has(row.status))
      throw errors.packageStatusRefused(String(dmpackageid), row.status, 'deploy');
    const manifest = await this.manifestOf(this.db, dmpackageid);
    const structures = manifest.entries.map((entry) => {
      const structure = this.resources.findObjectStructure(entry.objectstructure);
      if (!structure)
        throw errors.packageRecordRefused(
          entry.objectstructure,
          '*',
          'the object structure does not exist here.',
        );
      return structure;
    });
    const structural = await this.structuralChanges(manifest);
    if (structural.length > 0) {
      try {
        await this.guard.assertStructuralChangesAllowed();
      } catch (error) {
        if (isMaximoError(error) && error.reasonCode === 'BMXAA0578E')
          throw errors.adminModeRequired({ attrName: 'dmpackageid', attrValue: String(dmpackageid) });
        throw error;
      }
    }
    // System properties are set through the property service's rules (docs/migration.md, "System properties").
    const propertySets = structures.some(isPropertyStructure)
      ? await this.properties.prepareSets(user)
      : undefined;
    const started = await repository.updatePackage(this.db, dmpackageid, {
      status: PACKAGE_STATUS.deployInProgress,
      progressstatus: 'Deploying',
      changeby: user.userid,
    });
    this.deploying.set(dmpackageid, started);
    const total = manifest.entries.reduce((sum, entry) => sum + entry.count, 0);
    try {
      const counts = await this.resources.writeWith(
        user,
        {},
        async (writer) => {
          const trx = typedView(writer.db);
          await repository.lockDeploy(trx, dmpackageid);
          // Before anything is written, and before the structural changes, so both sides hash the same columns.
          if (!force) await this.refuseDrift(writer.db, manifest, structures, dmpackageid);
          let written = structures;
          if (structural.length > 0) {
            // The package's configuration first, in the same transaction: it commits only with the records,
            // which are written against the metadata this transaction sees, the attributes it adds included.
            await this.dbconfig.stageChanges(structural, user.userid, { transaction: trx });
            await this.dbconfig.applyPending(user.userid, { transaction: trx });
            const metadata = await this.dbconfig.metadataWithin(trx);
            written = structures.map((structure) => metadata.findObjectStructure(structure.name)!);
          }
          const counts = { added: 0, changed: 0, unchanged: 0, deleted: 0 };
          const batch = writer.batch();
          let done = 0;
          for (const [index, entry] of manifest.entries.entries()) {
            const structure = written[index]!;
            for await (const content of repository.stagedChunks(trx, dmpackageid, entry.cfgdataorder)) {
              const lines = content.split('\n');
              if (propertySets && isPropertyStructure(structure)) {
                for (const line of lines)
                  counts[await deployProperty(propertySets, trx, JSON.parse(line) as JsonRecord)] += 1;
              } else {
                const records = lines.map((line) => batchRecord(structure, line));
                const outcomes = await batch.sync(
                  structure.root,
                  records,
                  manifest.xmlaction === 'AddChange',
                  (at, refused) => recordRefused(structure, records[at]!.keys, refused),
                );
                for (const outcome of outcomes) counts[outcome] += 1;
              }
              done += lines.length;
              // The records' checks run in JavaScript between the statements (docs/migration.md, "Progress").
              await giveTurnWhenDue();
              await this.reportProgress(
                dmpackageid,
                `Deploying: ${formatCount(done)} of ${formatCount(total)} records`,
              );
            }
          }
          await repository.updatePackage(trx, dmpackageid, {
            status: PACKAGE_STATUS.deployed,
            progressstatus: `Deployed: ${counts.added} added, ${counts.changed} changed, ${counts.unchanged} unchanged, ${counts.deleted} deleted`,
          });
          return counts;
        },
        () => ({ structure: structures[0]!, uniqueId: 0 }),
      );
      if (structural.length > 0) await this.dbconfig.refresh();
      await propertySets?.refresh();
      this.deployObserver?.('deployed');
      return {
        warningmsg: `BMXAA8040I - Package ${row.package} was deployed: ${manifest.entries
          .map((entry) => `${entry.count} ${entry.objectstructure}`)
          .join(
            ', ',
          )} (${counts.added} added, ${counts.changed} changed, ${counts.unchanged} unchanged, ${counts.deleted} deleted).`,
      };
    } catch (error) {
      this.deployObserver?.('failed');
      await repository.updatePackage(this.db, dmpackageid, {
        status: PACKAGE_STATUS.deployError,
        progressstatus: (isMaximoError(error) ? error.message : 'Deploy failed').slice(0, 200),
      });
      throw error;
    } finally {
      this.deploying.delete(dmpackageid);
    }
  }

  /** Refuses the deploy when a record's row here differs from the state the source expected (drift guard). */
  private async refuseDrift(
    db: Kysely<DynamicDatabase>,
    manifest: Manifest,
    structures: readonly ObjectStructure[],
    dmpackageid: number,
  ): Promise<void> {
    let first: { structure: string; key: string } | undefined;
    let count = 0;
    for (const [index, entry] of manifest.entries.entries()) {
      const names = entry.expectedattributes;
      if (names === undefined) continue;
      const object = structures[index]!.root.object;
      for await (const line of this.stagedLines(typedView(db), dmpackageid, entry.cfgdataorder)) {
        const record = JSON.parse(line) as JsonRecord;
        if (record[EXPECTED_FIELD] === undefined) continue;
        const { values } = keyValuesOf(object, record, {});
        if (!drifted(object, names, record, await findByKeys(db, object, values))) continue;
        count += 1;
        first ??= { structure: entry.objectstructure, key: keyText(object, values) };
      }
    }
    if (first) throw errors.packageDrifted(first.structure, first.key, count);
  }

  /** Packages this process is deploying, as read when their deploy began, with the progress since. */
  private readonly deploying = new Map<number, PackageRow>();
  private progressObserver: ((dmpackageid: number) => Promise<void>) | undefined;

  /** Calls `observer` each time a deploy's progress moved on, before the deploy goes on (tests read it then). */
  observeProgress(observer: (dmpackageid: number) => Promise<void>): void {
    this.progressObserver = observer;
  }

  /**
   * The progress of a deploy, while its transaction is open (docs/migration.md, "Progress"): kept in memory for this
   * process (on PGlite the transaction holds the only connection, so no other reader reaches the database meanwhile),
   * and on PostgreSQL also written to the package row by a short update of its own on another pooled connection, for
   * readers in every process. The deploy locks the package with an advisory lock rather than its row, so that update
   * never waits for the deploy; it only applies while the package is DEPLOY_INPROGRESS.
   */
  private async reportProgress(dmpackageid: number, progressstatus: string): Promise<void> {
    const row = this.deploying.get(dmpackageid);
    if (row) this.deploying.set(dmpackageid, { ...row, progressstatus });
    if (this.storage.kind === 'postgres' && (this.storage.poolUsage?.().max ?? 1) > 1) {
      try {
        await repository.updateProgress(
          this.db,
          dmpackageid,
          PACKAGE_STATUS.deployInProgress,
          progressstatus,
        );
      } catch {
        // Progress is a courtesy to readers: a busy or lost connection must not fail the deploy.
      }
    }
    await this.progressObserver?.(dmpackageid);
  }

  /**
   * `POST /dm/preview` (same body as deploy): what a deploy would do, per object structure, without writing: the
   * records it would add, change (attribute by attribute, root attributes) and delete, and the structural changes.
   */
  async preview(pkgdefname: string, dmpackageid: number): Promise<PreviewOutcome> {
    const row = await this.packageOf(pkgdefname, dmpackageid);
    if (row.side !== 'TARGET' || !DEPLOYABLE.has(row.status))
      throw errors.packageStatusRefused(String(dmpackageid), row.status, 'preview');
    const manifest = await this.manifestOf(this.db, dmpackageid);
    const objects: PreviewOutcome['objects'] = [];
    for (const entry of manifest.entries) {
      const structure = this.resources.findObjectStructure(entry.objectstructure);
      if (!structure)
        throw errors.packageRecordRefused(
          entry.objectstructure,
          '*',
          'the object structure does not exist here.',
        );
      const object = structure.root.object;
      const outcome: PreviewOutcome['objects'][number] = {
        objectstructure: structure.name,
        add: [],
        change: [],
        delete: [],
        drift: [],
      };
      for await (const line of this.stagedLines(this.db, dmpackageid, entry.cfgdataorder)) {
        const record = JSON.parse(line) as JsonRecord;
        if (isPropertyStructure(structure)) {
          outcome.change.push(...(await previewProperty(this.properties, record)));
          continue;
        }
        const { values } = keyValuesOf(object, record, {});
        const key = keyText(object, values);
        const existing = await findByKeys(this.dynamicDb(), object, values);
        if (drifted(object, entry.expectedattributes, record, existing)) outcome.drift.push(key);
        if (record._action === DELETE_ACTION) {
          if (existing) outcome.delete.push(key);
          continue;
        }
        if (!existing) {
          outcome.add.push(key);
          continue;
        }
        const attributes: Record<string, { from: unknown; to: unknown }> = {};
        for (const [name, value] of Object.entries(record)) {
          const attribute = object.attributes.get(name);
          if (!attribute || Array.isArray(value)) continue;
          const stored = jsonValue(existing[name] ?? null);
          if (String(stored ?? '') !== String(value ?? '')) attributes[name] = { from: stored, to: value };
        }
        if (Object.keys(attributes).length > 0) outcome.change.push({ key, attributes });
      }
      objects.push(outcome);
    }
    const structural = await this.structuralChanges(manifest);
    return {
      pkgdefname: row.pkgdefname,
      dmpackageid,
      objects,
      structural: structural.map(
        (change) => `${change.changetype} ${change.objectname}.${change.attributename}`,
      ),
    };
  }

  /** `POST /dm/close`: the staging rows deleted, the package CLOSED. */
  async close(pkgdefname: string, dmpackageid: number, user: UserProfile): Promise<PackageRecord> {
    const row = await this.packageOf(pkgdefname, dmpackageid);
    if (row.status === PACKAGE_STATUS.createInProgress || row.status === PACKAGE_STATUS.deployInProgress)
      throw errors.packageStatusRefused(String(dmpackageid), row.status, 'close');
    const closed = await this.db.transaction().execute(async (trx) => {
      await repository.deleteStaging(trx, dmpackageid);
      return repository.updatePackage(trx, dmpackageid, {
        status: PACKAGE_STATUS.closed,
        progressstatus: 'Closed',
        changeby: user.userid,
      });
    });
    return packageRecord(closed);
  }

  /** `POST /dm/delete`: the package and its content removed. */
  async delete(pkgdefname: string, dmpackageid: number): Promise<void> {
    const row = await this.packageOf(pkgdefname, dmpackageid);
    if (row.status === PACKAGE_STATUS.createInProgress || row.status === PACKAGE_STATUS.deployInProgress)
      throw errors.packageStatusRefused(String(dmpackageid), row.status, 'delete');
    await repository.deletePackage(this.db, dmpackageid);
  }

  /** `POST /dm/reset`: the tracked history of a CHANGE definition cleared. */
  async reset(pkgdefname: string): Promise<{ pkgdefname: string; active: boolean }> {
    const definition = await this.definition(pkgdefname);
    if (definition.type !== 'CHANGE')
      throw errors.packageDefinitionRefused(definition.pkgdefname, 'only a CHANGE definition tracks changes');
    await repository.clearChanges(this.db, definition.pkgdefname);
    return { pkgdefname: definition.pkgdefname, active: definition.active };
  }

  /** `POST /dm/toggleactive`: the listener of a CHANGE definition switched on (or off when on). */
  async toggleActive(pkgdefname: string): Promise<{ pkgdefname: string; active: boolean }> {
    const definition = await this.definition(pkgdefname);
    if (definition.type !== 'CHANGE')
      throw errors.packageDefinitionRefused(definition.pkgdefname, 'only a CHANGE definition has a listener');
    const active = !definition.active;
    if (active) {
      if (definition.status !== 'APPR')
        throw errors.packageDefinitionRefused(
          definition.pkgdefname,
          'a CHANGE definition must have the status APPR to be activated',
        );
      for (const { structure } of await this.contentOf(definition))
        refuseUniqueIdKeys(definition.pkgdefname, structure);
    }
    await this.db.transaction().execute(async (trx) => {
      await repository.setDefinitionActive(trx, definition.pkgdefname, active);
      await this.storage.bus.notify<Database>(trx, 'object', 'DMPACKAGEDEF');
    });
    this.storage.bus.deliverLocally('object', 'DMPACKAGEDEF');
    return { pkgdefname: definition.pkgdefname, active };
  }

  /**
   * The package record of a package, by id (the CLI and tests read progress through it); a package this process is
   * deploying is answered from memory, with its progress, without waiting for the deploy's transaction.
   */
  async record(pkgdefname: string, dmpackageid: number): Promise<PackageRecord> {
    const deploying = this.deploying.get(dmpackageid);
    if (deploying && deploying.pkgdefname === pkgdefname.toUpperCase()) return packageRecord(deploying);
    return packageRecord(await this.packageOf(pkgdefname, dmpackageid));
  }
}

/**
 * A CHANGE definition cannot cover an object whose records are told apart by their unique id alone, nor system
 * properties: they are set outside the write path, so no write of theirs is tracked.
 */
function refuseUniqueIdKeys(pkgdefname: string, structure: ObjectStructure): void {
  if (isPropertyStructure(structure))
    throw errors.packageDefinitionRefused(
      pkgdefname,
      `the object structure ${structure.name} migrates in SNAPSHOT packages only`,
    );
  const object = structure.root.object;
  if (object.keys.length === 0 || object.keys.includes(object.uniqueId))
    throw errors.packageDefinitionRefused(
      pkgdefname,
      `the object structure ${structure.name} is keyed by the unique id ${object.uniqueId}, which differs between deployments`,
    );
}

function receivedValues(manifest: Manifest, filename: string | null): repository.PackageValues {
  return {
    pkgdefname: manifest.pkgdefname,
    source: manifest.source,
    package: manifest.package,
    type: manifest.type,
    status: PACKAGE_STATUS.deployNew,
    filename,
    readme: manifest.readme ?? null,
    createby: manifest.createby,
    changeby: manifest.createby,
    progressstatus: `Received: ${describeCounts(manifest.entries)}`,
    distributionmessage: null,
    side: 'TARGET',
  };
}

function describeCounts(entries: readonly ManifestEntry[]): string {
  return entries.map((entry) => `${entry.count} ${entry.objectstructure}`).join(', ') || 'no records';
}

export function packageRecord(row: PackageRow): PackageRecord {
  return {
    dmpackageid: row.dmpackageid,
    pkgdefname: row.pkgdefname,
    source: row.source,
    package: row.package,
    type: row.type,
    status: row.status,
    statusdate: row.statusdate.toISOString(),
    filename: row.filename,
    readme: row.readme,
    createby: row.createby,
    createdate: row.createdate.toISOString(),
    progressstatus: row.progressstatus,
  };
}

/** `*` and every child collection, nested: the whole record as the package carries it. */
function selectAll(node: StructureNode): string {
  return ['*', ...node.children.map((child) => `${child.name}{${selectAll(child)}}`)].join(',');
}

function jsonValue(value: StoredValue): unknown {
  return value instanceof Date ? value.toISOString() : value;
}

/**
 * A member as the package carries it: what a client may write, no unique ids, stamps or derived values. Nulls are
 * carried: a value cleared here is cleared on the target (docs/migration.md).
 */
function exportRecord(member: MemberRecord): JsonRecord {
  const object = member.node.object;
  const record: JsonRecord = {};
  for (const attribute of object.attributes.values()) {
    if (attribute.generated || attribute.writeOnly || attribute.name === object.uniqueId) continue;
    if (!(attribute.name in member.values)) continue;
    const value = member.values[attribute.name] ?? null;
    record[attribute.name] = value === null ? null : jsonValue(value);
  }
  for (const [name, children] of member.children) record[name] = children.map(exportRecord);
  return record;
}

function keyText(object: ObjectMeta, keys: readonly StoredValue[]): string {
  return object.keys
    .map(
      (key, index) =>
        `${key}=${keys[index] === null || keys[index] === undefined ? 'null' : String(jsonValue(keys[index]))}`,
    )
    .join(', ');
}

/** One line of a package as a record of a batch: its key values read, a missing one refused. */
function batchRecord(structure: ObjectStructure, line: string): BatchRecord {
  const object = structure.root.object;
  const body = JSON.parse(line) as JsonRecord;
  let keys: StoredValue[] = [];
  try {
    const read = keyValuesOf(object, body, {});
    keys = read.values;
    if (read.missing !== undefined)
      throw errors.requiredField(read.missing, object.name, read.missing, object.name.toLowerCase());
  } catch (error) {
    if (!isMaximoError(error)) throw error;
    throw recordRefused(structure, keys, error);
  }
  return { body, keys, delete: body._action === DELETE_ACTION };
}

/** The error of a record the target refuses: the structure, the record's key and the reason (EAS0165E). */
function recordRefused(
  structure: ObjectStructure,
  keys: readonly StoredValue[],
  refused: MaximoError,
): MaximoError {
  const object = structure.root.object;
  return errors.packageRecordRefused(
    structure.name,
    keys.length === 0 ? '' : keyText(object, keys),
    refused.message,
    refused.detail.attrName,
  );
}

/** `40,000`: counts in progress texts, grouped as the deployed systems show them. */
const formatCount = (count: number): string => count.toLocaleString('en-US');
