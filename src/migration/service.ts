import type { Readable } from 'node:stream';
import { NO_AUDIT, recorderIn, type AuditRecorder, type RequestOrigin } from '../audit/types.js';
import type { UserProfile } from '../auth/types.js';
import type { Storage } from '../db/database.js';
import type { DbConfigService, StructuralChangeGuard } from '../dbconfig/service.js';
import type { ResourceService } from '../oslc/service.js';
import type { ObservedWrites, ReadTransform, WriteObserver, WriteRules } from '../oslc/write-extensions.js';
import type { PropertyService } from '../properties/service.js';
import { backoutPackage, type BackoutOutcome } from './backout/apply.js';
import { previewBackout, type BackoutPreview } from './backout/preview.js';
import { backoutFacts } from './backout/store.js';
import type { MigrationContext } from './context.js';
import type { CredentialSeal } from './credentials.js';
import { packageOf, packageRecord, type PackageRecord } from './packages.js';
import { ChangeCapture } from './source/change-capture.js';
import { createPackage } from './source/create.js';
import { contentRules, definitionRules, resetDefinition, toggleActive } from './source/definitions.js';
import { distributePackage } from './source/distribute.js';
import { targetRules, targetUrlShown } from './source/targets.js';
import { closePackage, deletePackage } from './target/close.js';
import { deployPackage, type DeployOutcome } from './target/deploy.js';
import { previewPackage, type PreviewOutcome } from './target/preview.js';
import { DeployProgress, type DeployResultObserver } from './target/progress.js';
import { downloadPackage } from './transfer/download.js';
import { uploadPackage } from './transfer/upload.js';
import { deploymentIdentity } from '../system/deployment-identity.js';

export { DEFINITION_OBJECTS } from './source/change-capture.js';
export { PACKAGE_STATUS, packageRecord, type PackageRecord } from './packages.js';
export type { DeployOutcome } from './target/deploy.js';
export type { PreviewOutcome } from './target/preview.js';
export type { BackoutOutcome } from './backout/apply.js';
export type { BackoutPreview } from './backout/preview.js';

/**
 * Migration packages (docs/migration.md): definitions say what to move, packages carry it. The facade the routes,
 * the CLI's server side and the app's wiring call; each method hands its step (one file per step, in the order a
 * package travels: `source/`, `transfer/`, `target/`) the part of the context it needs.
 */
export class MigrationService {
  private readonly context: MigrationContext;
  private source: string | undefined;
  private readonly changes: ChangeCapture;
  private readonly progress: DeployProgress;
  private deployObserver: DeployResultObserver | undefined;
  private backoutChunkObserver: (() => Promise<void>) | undefined;

  /** Write rules of package definitions: `source` from this deployment; CHANGE activation checks. */
  readonly definitionRules: WriteRules;
  /** Write rules of a definition's content: its where clause checked when written. */
  readonly contentRules: WriteRules;
  /** Write rules of targets: URL credentials moved out and the password sealed. */
  readonly targetRules: WriteRules;
  /** A target's URL as read, without credentials. */
  readonly targetUrlShown: ReadTransform = targetUrlShown;
  /** The writes CHANGE tracking may record. */
  readonly changeWrites: ObservedWrites;
  /** The write observer of CHANGE tracking. */
  readonly changeObserver: WriteObserver;

  constructor(
    storage: Storage,
    resources: ResourceService,
    seal: CredentialSeal,
    dbconfig: DbConfigService,
    guard: StructuralChangeGuard,
    properties: PropertyService,
    audit: AuditRecorder = NO_AUDIT,
  ) {
    this.context = {
      storage,
      db: storage.db,
      resources,
      seal,
      dbconfig,
      guard,
      properties,
      audit,
      sourceIdentity: () => this.sourceIdentity(),
    };
    this.changes = new ChangeCapture(this.context);
    this.progress = new DeployProgress(this.context);
    this.definitionRules = definitionRules(this.context);
    this.contentRules = contentRules(this.context);
    this.targetRules = targetRules(seal);
    this.changeWrites = this.changes.writes;
    this.changeObserver = this.changes.observer;
  }

  /** Loads the source identity and listens for changes of definitions (the tracking cache). */
  async start(): Promise<void> {
    this.source = (await deploymentIdentity(this.context.db)).source;
    await this.changes.start();
  }

  sourceIdentity(): string {
    if (this.source === undefined) throw new Error('MigrationService used before start()');
    return this.source;
  }

  // The source side: definitions, create, distribute.

  async create(
    pkgdefname: string,
    readme: string | undefined,
    user: UserProfile,
    origin?: RequestOrigin,
  ): Promise<PackageRecord> {
    return createPackage(this.within(origin), pkgdefname, readme, user);
  }

  async distribute(
    pkgdefname: string,
    dmpackageid: number,
    targetname: string | undefined,
    user: UserProfile,
    origin?: RequestOrigin,
  ): Promise<PackageRecord> {
    return distributePackage(this.within(origin), pkgdefname, dmpackageid, targetname, user);
  }

  async reset(pkgdefname: string): Promise<{ pkgdefname: string; active: boolean }> {
    return resetDefinition(this.context, pkgdefname);
  }

  async toggleActive(pkgdefname: string): Promise<{ pkgdefname: string; active: boolean }> {
    return toggleActive(this.context, pkgdefname);
  }

  // The transfer: download, upload.

  async download(
    pkgdefname: string,
    dmpackageid: number,
    origin?: RequestOrigin,
  ): Promise<{ filename: string; file: Readable }> {
    return downloadPackage(this.within(origin), pkgdefname, dmpackageid);
  }

  async upload(
    path: string,
    filename: string,
    user: UserProfile,
    origin?: RequestOrigin,
  ): Promise<PackageRecord> {
    return uploadPackage(this.within(origin), path, filename, user);
  }

  // The target side: preview, deploy, close, delete.

  async preview(
    pkgdefname: string,
    dmpackageid: number,
    user: UserProfile,
    origin?: RequestOrigin,
  ): Promise<PreviewOutcome> {
    return previewPackage(this.within(origin), pkgdefname, dmpackageid, user);
  }

  /** Tells `observer` how each deploy that started writing ended (the deploy counter of the metrics). */
  observeDeploys(observer: DeployResultObserver): void {
    this.deployObserver = observer;
  }

  /** Calls `observer` each time a deploy's progress moved on, before the deploy goes on (tests read it then). */
  observeProgress(observer: (dmpackageid: number) => Promise<void>): void {
    this.progress.observe(observer);
  }

  async deploy(
    pkgdefname: string,
    dmpackageid: number,
    user: UserProfile,
    force = false,
    completing = false,
    origin?: RequestOrigin,
  ): Promise<DeployOutcome> {
    const context = { ...this.within(origin), progress: this.progress, onResult: this.deployObserver };
    return deployPackage(context, pkgdefname, dmpackageid, user, { force, completing });
  }

  /** `POST /dm/backout`: the inverse package captured at deploy applied (docs/migration.md, "Back-out"). */
  async backout(
    pkgdefname: string,
    dmpackageid: number,
    user: UserProfile,
    force = false,
    origin?: RequestOrigin,
  ): Promise<BackoutOutcome> {
    const context = {
      ...this.within(origin),
      progress: this.progress,
      afterChunk: this.backoutChunkObserver,
    };
    return backoutPackage(context, pkgdefname, dmpackageid, user, force);
  }

  /** `POST /dm/preview` with `backout: true`: what the back-out would write. */
  async previewBackout(pkgdefname: string, dmpackageid: number): Promise<BackoutPreview> {
    return previewBackout(this.context, pkgdefname, dmpackageid);
  }

  /** Calls `observer` after each chunk a back-out wrote, inside its transaction (tests interrupt it there). */
  observeBackoutChunks(observer: () => Promise<void>): void {
    this.backoutChunkObserver = observer;
  }

  async close(
    pkgdefname: string,
    dmpackageid: number,
    user: UserProfile,
    origin?: RequestOrigin,
  ): Promise<PackageRecord> {
    return closePackage(this.within(origin), pkgdefname, dmpackageid, user);
  }

  async delete(pkgdefname: string, dmpackageid: number, origin?: RequestOrigin): Promise<void> {
    return deletePackage(this.within(origin), pkgdefname, dmpackageid);
  }

  /** The context of a step run in a request: its writes and records say who and from where (`origin`). */
  private within(origin: RequestOrigin | undefined): MigrationContext {
    if (!origin) return this.context;
    return { ...this.context, origin, audit: recorderIn(this.context.audit, origin) };
  }

  /**
   * The package record of a package, by id (the CLI and tests read progress through it); a package this process is
   * deploying is answered from memory, with its progress, without waiting for the deploy's transaction.
   */
  async record(pkgdefname: string, dmpackageid: number): Promise<PackageRecord> {
    const deploying = this.progress.current(dmpackageid);
    if (deploying && deploying.pkgdefname === pkgdefname.toUpperCase()) return packageRecord(deploying);
    const row = await packageOf(this.context.db, pkgdefname, dmpackageid);
    return { ...packageRecord(row), ...(await backoutFacts(this.context.db, row)) };
  }
}
