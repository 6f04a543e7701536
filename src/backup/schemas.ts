import { createHash } from 'node:crypto';
import { Type, type Static } from 'typebox';

/*
 * The backup archive (docs/operations.md, "Backup and restore"): a zip, stored without compression, of the embedded
 * database's data directory under `data/`, then `manifest.json`, written last because it carries the SHA-256 of
 * every file, known only once each has been read.
 */

export const ARCHIVE_FORMAT = 'eas-backup';
export const ARCHIVE_FORMAT_VERSION = 1;
export const MANIFEST_NAME = 'manifest.json';
/** The folder of the archive that holds the data directory's files. */
export const DATA_FOLDER = 'data/';

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });
/** A path inside the data directory: relative, `/`-separated, no `.` or `..` part. */
const RelativePath = Type.String({
  pattern: '^(?!/)(?!.*(^|/)\\.{1,2}(/|$))[A-Za-z0-9_.@+-]+(/[A-Za-z0-9_.@+-]+)*$',
  maxLength: 400,
});

export const ArchivedFile = Type.Object(
  { path: RelativePath, bytes: Type.Integer({ minimum: 0 }), sha256: Sha256 },
  { additionalProperties: false },
);
export type ArchivedFile = Static<typeof ArchivedFile>;

export const BackupManifest = Type.Object(
  {
    format: Type.Literal(ARCHIVE_FORMAT),
    formatVersion: Type.Literal(ARCHIVE_FORMAT_VERSION),
    /** The release of the server that wrote it (package.json). */
    release: Type.String({ maxLength: 100 }),
    /** The last migration applied to the schema, and how many are: a restore needs a release that knows it. */
    schemaVersion: Type.String({ maxLength: 200 }),
    migrations: Type.Integer({ minimum: 0 }),
    /** When the files were held still: every transaction committed before is in the archive, none after. */
    createdAt: Type.String({ format: 'date-time', maxLength: 40 }),
    engine: Type.Object(
      { kind: Type.Literal('pglite'), pgliteVersion: Type.String(), serverVersion: Type.String() },
      { additionalProperties: false },
    ),
    deployment: Type.Object(
      { id: Type.String({ maxLength: 64 }), label: Type.String({ maxLength: 200 }) },
      { additionalProperties: false },
    ),
    /**
     * The master key is not in the archive: only its check value (HKDF of the key for a purpose of its own, the
     * value the database already stores), by which a restore tells whether the key it is given is the right one.
     */
    masterKey: Type.Object(
      { inArchive: Type.Literal(false), checkValue: Type.Union([Sha256, Type.Null()]) },
      { additionalProperties: false },
    ),
    directories: Type.Array(RelativePath, { maxItems: 100_000 }),
    files: Type.Array(ArchivedFile, { maxItems: 1_000_000 }),
    /** SHA-256 of the file list (`<sha256> <bytes> <path>` lines): with each file's own, covers every byte. */
    checksum: Sha256,
  },
  { additionalProperties: false },
);
export type BackupManifest = Static<typeof BackupManifest>;

/** The archive's checksum: SHA-256 of one line per file, in the manifest's order. */
export function archiveChecksum(files: readonly ArchivedFile[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file.sha256} ${file.bytes} ${file.path}\n`);
  return hash.digest('hex');
}
