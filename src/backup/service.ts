import type { Readable } from 'node:stream';
import { findCheckValue } from '../apikeys/key-check-repository.js';
import { MASTER_KEY_VARIABLE } from '../apikeys/master-key.js';
import { installedPgliteVersion } from '../db/cluster-template.js';
import type { Storage } from '../db/database.js';
import { errors } from '../errors.js';
import { deploymentIdentity } from '../system/deployment-identity.js';
import { PACKAGE_VERSION } from '../system/release.js';
import { databaseVersion } from '../system/repository.js';
import { listDataDirectory, writeArchive, type ManifestFacts } from './archive-writer.js';
import { appliedMigrations } from './repository.js';
import { ARCHIVE_FORMAT, ARCHIVE_FORMAT_VERSION, type BackupManifest } from './schemas.js';

/** A backup under way: the archive as it is written, and what it holds. */
export interface BackupRun {
  output: Readable;
  facts: ManifestFacts;
  /** Bytes of the data files the archive holds (the archive is a little larger): for a reader's progress. */
  dataBytes: number;
  /** The manifest, once the last file has been read. */
  manifest: Promise<BackupManifest>;
}

/**
 * Backups of the embedded database while it serves (src/backup/README.md): its files are held still (no statement
 * runs, no transaction is open, a checkpoint has written everything into them) for as long as the archive reads
 * them, and let go as soon as the last one is read.
 */
export class BackupService {
  constructor(private readonly storage: Storage) {}

  async start(): Promise<BackupRun> {
    const hold = this.storage.holdFiles;
    if (!hold) {
      throw errors.backupNotServed(
        this.storage.kind === 'postgres'
          ? 'its database is PostgreSQL; back it up with pg_dump (docs/operations.md, "Backup and restore")'
          : 'its embedded database is in memory, without a data directory',
      );
    }
    const known = await this.facts();
    return new Promise<BackupRun>((resolve, reject) => {
      hold(async (dataDir) => {
        const facts: ManifestFacts = { ...known, createdAt: new Date().toISOString() };
        const listing = await listDataDirectory(dataDir);
        const writing = writeArchive(dataDir, listing, facts);
        resolve({
          output: writing.output,
          facts,
          dataBytes: listing.files.reduce((sum, file) => sum + file.bytes, 0),
          manifest: writing.manifest,
        });
        // Whether the reader took the whole archive or went away, the files are let go now.
        await writing.filesRead.catch(() => undefined);
      }).catch(reject);
    });
  }

  /** What the manifest says besides the files; read before the files are held (the hold keeps out queries). */
  private async facts(): Promise<Omit<ManifestFacts, 'createdAt'>> {
    const db = this.storage.db;
    const [identity, migrations, server, pgliteVersion, checkValue] = await Promise.all([
      deploymentIdentity(db),
      appliedMigrations(db),
      databaseVersion(db),
      installedPgliteVersion(),
      findCheckValue(db, MASTER_KEY_VARIABLE),
    ]);
    return {
      format: ARCHIVE_FORMAT,
      formatVersion: ARCHIVE_FORMAT_VERSION,
      release: PACKAGE_VERSION,
      schemaVersion: migrations.last,
      migrations: migrations.count,
      engine: { kind: 'pglite', pgliteVersion, serverVersion: server.version },
      deployment: { id: identity.id, label: identity.label },
      masterKey: { inArchive: false, checkValue: checkValue ?? null },
    };
  }
}
