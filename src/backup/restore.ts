import { chmod, copyFile, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { masterKeyCheckValue } from '../apikeys/master-key.js';
import { decodeKeyFile, MASTER_KEY_FILE } from '../apikeys/vault.js';
import { flush } from '../db/cluster-template.js';
import { LOCK_FILE, lockDataDirectory } from '../db/data-dir-lock.js';
import { openStorage } from '../db/database.js';
import { migrations } from '../db/migrations/index.js';
import { openArchive, ArchiveRefusedError } from './archive-reader.js';
import { replaceDeploymentIdentity } from './repository.js';
import type { BackupManifest } from './schemas.js';

/** PostgreSQL's own marker of a cluster, written last: a restore cut short leaves no cluster that starts. */
const VERSION_FILE = 'PG_VERSION';

/** A target the restore will not write into: not empty, or held by a running server. */
export class RestoreTargetError extends Error {}

export interface RestoreOptions {
  archive: string;
  dataDir: string;
  /** Give the restored deployment a new identity instead of the source's. */
  newIdentity: boolean;
  /** The source's master key file, copied into the restored directory once checked. */
  masterKeyFile?: string;
  /** EAS_MASTER_KEY of the servers that will run on the restored directory, checked against the archive. */
  masterKey?: string;
  onProgress?: (progress: RestoreProgress) => void;
}

export interface RestoreProgress {
  files: number;
  filesDone: number;
  bytes: number;
  bytesDone: number;
}

export interface RestoreOutcome {
  manifest: BackupManifest;
  /** The restored deployment's identity: the source's, or a new one. */
  deploymentId: string;
  /** How the restored servers get the master key: checked against the archive, or not given at all. */
  masterKey: 'file copied' | 'variable checked' | 'not given' | 'none needed';
}

/**
 * Restores an archive into an empty data directory (docs/operations.md, "Backup and restore"): the target is
 * locked as a server locks it, every file is checked against the manifest's SHA-256 as it is written, and a
 * failure removes what was written.
 */
export async function restoreArchive(options: RestoreOptions): Promise<RestoreOutcome> {
  await refuseUnlessEmpty(options.dataDir);
  const archive = await openArchive(options.archive);
  try {
    const { manifest } = archive;
    if (!migrations.some((migration) => migration.name === manifest.schemaVersion))
      throw new ArchiveRefusedError(
        `its schema (${manifest.schemaVersion}, release ${manifest.release}) is newer than this release knows: ` +
          'restore it with that release or a later one',
      );
    const key = await suppliedKey(options);
    if (
      key &&
      manifest.masterKey.checkValue !== null &&
      masterKeyCheckValue(key.value) !== manifest.masterKey.checkValue
    )
      throw new ArchiveRefusedError(
        `the master key in ${key.source} is not the one that sealed the archive's API keys`,
      );
    const lock = await lockDataDirectory(options.dataDir);
    try {
      await refuseUnlessEmpty(options.dataDir);
      await writeFiles(archive, options).catch(async (error: unknown) => {
        await removeRestored(options.dataDir);
        throw error;
      });
      if (options.masterKeyFile !== undefined) {
        const path = join(options.dataDir, MASTER_KEY_FILE);
        await copyFile(options.masterKeyFile, path);
        await chmod(path, 0o600);
      }
    } finally {
      await lock.release();
    }
    const deploymentId = options.newIdentity
      ? await giveNewIdentity(options.dataDir, manifest)
      : manifest.deployment.id;
    return { manifest, deploymentId, masterKey: keyOutcome(manifest, key) };
  } finally {
    archive.close();
  }
}

async function refuseUnlessEmpty(dataDir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  // A running server's lock says more than "not empty": lockDataDirectory names the process.
  if (names.includes(LOCK_FILE)) await (await lockDataDirectory(dataDir)).release();
  const others = names.filter((name) => name !== LOCK_FILE);
  if (others.length > 0)
    throw new RestoreTargetError(
      `The data directory ${dataDir} is not empty (it holds ${others.slice(0, 3).join(', ')}` +
        `${others.length > 3 ? ', ...' : ''}): a restore writes only into an empty one. Nothing was restored.`,
    );
}

async function suppliedKey(options: RestoreOptions): Promise<{ value: Buffer; source: string } | undefined> {
  if (options.masterKeyFile !== undefined) {
    const text = await readFile(options.masterKeyFile, 'utf8');
    return { value: decodeKeyFile(text, options.masterKeyFile), source: options.masterKeyFile };
  }
  if (options.masterKey !== undefined)
    return { value: Buffer.from(options.masterKey, 'utf8'), source: 'EAS_MASTER_KEY' };
  return undefined;
}

function keyOutcome(
  manifest: BackupManifest,
  key: { source: string } | undefined,
): RestoreOutcome['masterKey'] {
  if (manifest.masterKey.checkValue === null) return 'none needed';
  if (key === undefined) return 'not given';
  return key.source === 'EAS_MASTER_KEY' ? 'variable checked' : 'file copied';
}

async function writeFiles(
  archive: Awaited<ReturnType<typeof openArchive>>,
  options: RestoreOptions,
): Promise<void> {
  const { manifest } = archive;
  const progress: RestoreProgress = {
    files: manifest.files.length,
    filesDone: 0,
    bytes: manifest.files.reduce((sum, file) => sum + file.bytes, 0),
    bytesDone: 0,
  };
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  for (const directory of manifest.directories)
    await mkdir(join(options.dataDir, directory), { recursive: true });
  const last = manifest.files.find((file) => file.path === VERSION_FILE);
  const ordered = [...manifest.files.filter((file) => file !== last), ...(last ? [last] : [])];
  // Each file's fsync runs while the next ones are written, a few at a time (one descriptor each).
  const flushing = new Set<Promise<void>>();
  const failures: unknown[] = [];
  const settled = async (): Promise<void> => {
    await Promise.all(flushing);
    if (failures.length > 0) throw failures[0];
  };
  for (const [index, file] of ordered.entries()) {
    // Everything on disk before the marker that makes it a cluster: the files, then their folders.
    if (file === last) {
      await settled();
      await flushFolders(options.dataDir, manifest.directories);
    }
    const { flushed } = await archive
      .extract(file, join(options.dataDir, file.path), (bytes) => {
        progress.bytesDone += bytes;
      })
      .catch(async (error: unknown) => {
        // What was written is removed next: its flushes end first.
        await Promise.all(flushing);
        throw error;
      });
    const tracked = flushed
      .catch((error: unknown) => void failures.push(error))
      .finally(() => flushing.delete(tracked));
    flushing.add(tracked);
    if (flushing.size >= FLUSHES_AT_ONCE) await Promise.race(flushing);
    progress.filesDone = index + 1;
    options.onProgress?.({ ...progress });
  }
  await settled();
  if (last === undefined) return flushFolders(options.dataDir, manifest.directories);
  // The marker was flushed as it was written: its folder is what is left.
  await flush(options.dataDir);
}

/** Files whose fsync may be under way at once while the restore writes on. */
const FLUSHES_AT_ONCE = 32;

/** fsync of every folder restored, the data directory last: the files' names are on disk too. */
async function flushFolders(dataDir: string, directories: readonly string[]): Promise<void> {
  const folders = [...directories].reverse().map((directory) => join(dataDir, directory));
  for (let start = 0; start < folders.length; start += FLUSHES_AT_ONCE)
    await Promise.all(folders.slice(start, start + FLUSHES_AT_ONCE).map(flush));
  await flush(dataDir);
}

/** Everything but the lock, which its release removes. */
async function removeRestored(dataDir: string): Promise<void> {
  for (const name of await readdir(dataDir)) {
    if (name !== LOCK_FILE) await rm(join(dataDir, name), { recursive: true, force: true });
  }
}

async function giveNewIdentity(dataDir: string, manifest: BackupManifest): Promise<string> {
  const storage = await openStorage({ kind: 'pglite', dataDir });
  try {
    const label = `${manifest.deployment.label} (restored copy)`.slice(0, 150);
    return await replaceDeploymentIdentity(storage.db, label);
  } finally {
    await storage.close();
  }
}
