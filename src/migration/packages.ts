import { errors } from '../errors.js';
import type { ObjectMeta, ObjectStructure } from '../metadata/registry.js';
import type { ResourceService } from '../oslc/service.js';
import type { StoredValue } from '../oslc/values.js';
import * as repository from './repository.js';
import type { Db, PackageDefinition, PackageRow } from './repository.js';
import type { Manifest, ManifestEntry } from './transfer/package-file.js';

/** Package statuses (docs/migration.md, "Statuses"): the deployed systems' list, and back-out's two. */
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
  // This service's own: the back-out of a deployed package (docs/migration.md, "Back-out").
  backoutInProgress: 'BACKOUT_INPROGRESS',
  backedOut: 'BACKEDOUT',
} as const;

/** Statuses a target-side package may be deployed from: an interrupted deploy left DEPLOY_INPROGRESS behind. */
export const DEPLOYABLE: ReadonlySet<string> = new Set([
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

export type JsonRecord = Record<string, unknown>;

/** The `_action` of a record the package deletes on the target. */
export const DELETE_ACTION = 'Delete';

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

export async function definitionNamed(db: Db, pkgdefname: string): Promise<PackageDefinition> {
  const definition = await repository.findDefinition(db, pkgdefname.toUpperCase());
  if (!definition) throw errors.packageDefinitionNotFound(pkgdefname);
  return definition;
}

export async function packageOf(db: Db, pkgdefname: string, dmpackageid: number): Promise<PackageRow> {
  const row = await repository.findPackage(db, dmpackageid);
  if (!row || row.pkgdefname !== pkgdefname.toUpperCase())
    throw errors.packageNotFound(String(dmpackageid), pkgdefname);
  return row;
}

export async function manifestOf(db: Db, dmpackageid: number): Promise<Manifest> {
  const text = await repository.readManifest(db, dmpackageid);
  if (text === undefined) throw errors.packageStatusRefused(String(dmpackageid), 'without content', 'this');
  return JSON.parse(text) as Manifest;
}

/** The staged lines (records) of one object structure of a package, a chunk at a time. */
export async function* stagedLines(db: Db, dmpackageid: number, order: number): AsyncGenerator<string> {
  for await (const content of repository.stagedChunks(db, dmpackageid, order)) {
    for (const line of content.split('\n')) yield line;
  }
}

export function describeCounts(entries: readonly ManifestEntry[]): string {
  return entries.map((entry) => `${entry.count} ${entry.objectstructure}`).join(', ') || 'no records';
}

/** A package's record counts by object structure, as its audit records keep them (docs/audit.md). */
export function recordCounts(manifest: Manifest): Record<string, number> {
  return Object.fromEntries(manifest.entries.map((entry) => [entry.objectstructure, entry.count]));
}

export function jsonValue(value: StoredValue): unknown {
  return value instanceof Date ? value.toISOString() : value;
}

export function keyText(object: ObjectMeta, keys: readonly StoredValue[]): string {
  return object.keys
    .map(
      (key, index) =>
        `${key}=${keys[index] === null || keys[index] === undefined ? 'null' : String(jsonValue(keys[index]))}`,
    )
    .join(', ');
}

/** `40,000`: counts in progress texts, grouped as the deployed systems show them. */
export const formatCount = (count: number): string => count.toLocaleString('en-US');

/**
 * A target-side package that may be deployed (or previewed): its row, its manifest, and each entry's object
 * structure, the package refused when its status does not allow `operation` or it names a structure this deployment
 * lacks.
 */
export async function deployablePackage(
  context: { db: Db; resources: Pick<ResourceService, 'findObjectStructure'> },
  pkgdefname: string,
  dmpackageid: number,
  operation: 'deploy' | 'preview',
): Promise<{ row: PackageRow; manifest: Manifest; structures: ObjectStructure[] }> {
  const row = await packageOf(context.db, pkgdefname, dmpackageid);
  if (row.side !== 'TARGET' || !DEPLOYABLE.has(row.status))
    throw errors.packageStatusRefused(String(dmpackageid), row.status, operation);
  const manifest = await manifestOf(context.db, dmpackageid);
  const structures = manifest.entries.map((entry) => {
    const structure = context.resources.findObjectStructure(entry.objectstructure);
    if (!structure)
      throw errors.packageRecordRefused(
        entry.objectstructure,
        '*',
        'the object structure does not exist here.',
      );
    return structure;
  });
  return { row, manifest, structures };
}
