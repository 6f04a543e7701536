import { parseArgs } from 'node:util';
import { ArchiveRefusedError } from '../backup/archive-reader.js';
import { restoreArchive, RestoreTargetError } from '../backup/restore.js';
import { EXIT } from '../cli/exit-codes.js';
import type { CliStream } from '../cli/io.js';
import { transferProgress } from '../cli/migrate-progress.js';
import type { AppConfig } from '../config.js';
import { DataDirectoryLockedError } from '../db/data-dir-lock.js';

export const RESTORE_USAGE = `Usage: npm run admin -- restore <archive> [--new-identity] [--master-key-file PATH] [--data-dir DIR]

Restores an archive of \`eas backup\` into an empty data directory (EAS_DATA_DIR, or --data-dir), checking every
file against the archive's checksums. The master key is not in the archive: give the source's key file with
--master-key-file, or set EAS_MASTER_KEY as the source's servers had it (it is checked against the archive).
--new-identity gives the copy a deployment identity of its own (docs/operations.md, "Backup and restore").
Exit codes: 0 restored; 1 the archive cannot be restored (damaged, altered, of a newer release, wrong key);
2 usage; 4 the data directory is not empty or a running server holds it.
`;

/** `restore`: the one admin command that opens no storage (it makes the data directory the storage opens). */
export async function runRestore(
  argv: readonly string[],
  config: AppConfig,
  io: { out: (text: string) => void; err: (text: string) => void },
  progressOut?: CliStream,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        'new-identity': { type: 'boolean' },
        'master-key-file': { type: 'string' },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${RESTORE_USAGE}`);
    return EXIT.usage;
  }
  if (parsed.values.help) {
    io.out(RESTORE_USAGE);
    return EXIT.ok;
  }
  const [archive, ...extra] = parsed.positionals;
  if (archive === undefined || extra.length > 0) {
    io.err(`restore takes one archive.\n\n${RESTORE_USAGE}`);
    return EXIT.usage;
  }
  if (config.databaseUrl) {
    io.err(
      'DATABASE_URL is set: a PostgreSQL deployment is restored with pg_restore (docs/operations.md, ' +
        '"Backup and restore"); this command restores the embedded database.\n',
    );
    return EXIT.usage;
  }
  const dataDir = parsed.values['data-dir'] ?? config.dataDir;
  const progress = progressOut ? transferProgress(progressOut, 'restoring') : undefined;
  try {
    const outcome = await restoreArchive({
      archive,
      dataDir,
      newIdentity: parsed.values['new-identity'] === true,
      ...(parsed.values['master-key-file'] !== undefined && {
        masterKeyFile: parsed.values['master-key-file'],
      }),
      ...(config.apiKeys.masterKey !== undefined && { masterKey: config.apiKeys.masterKey }),
      ...(progress && { onProgress: (step) => progress(step.bytesDone, step.bytes) }),
    });
    const { manifest } = outcome;
    io.out(
      `Restored ${manifest.files.length} files (${manifest.files.reduce((sum, file) => sum + file.bytes, 0)} ` +
        `bytes) into ${dataDir}: the backup of ${manifest.createdAt}, release ${manifest.release}, schema ` +
        `${manifest.schemaVersion}, checksum ${manifest.checksum} verified.\n` +
        (outcome.deploymentId === manifest.deployment.id
          ? `Deployment identity kept: ${outcome.deploymentId}.\n`
          : `New deployment identity ${outcome.deploymentId} (the source was ${manifest.deployment.id}).\n`) +
        MASTER_KEY_NOTES[outcome.masterKey],
    );
    return EXIT.ok;
  } catch (error) {
    if (error instanceof RestoreTargetError || error instanceof DataDirectoryLockedError) {
      io.err(`${error.message}\n`);
      return EXIT.refused;
    }
    if (error instanceof ArchiveRefusedError) {
      io.err(`${error.message}\n`);
      return EXIT.failure;
    }
    throw error;
  }
}

const MASTER_KEY_NOTES = {
  'file copied': 'The master key file was checked and copied into the data directory.\n',
  'variable checked':
    "EAS_MASTER_KEY is the key that sealed the archive's API keys: start the servers with it.\n",
  'not given':
    "No master key was given: start the servers with EAS_MASTER_KEY as the source had it, or copy the source's " +
    'apikey-master.key into the data directory first; without it the server refuses to start.\n',
  'none needed': 'The archive holds no sealed API keys.\n',
} as const;
