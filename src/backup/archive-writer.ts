import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import { LOCK_FILE } from '../db/data-dir-lock.js';
import { MASTER_KEY_FILE } from '../apikeys/vault.js';
import {
  archiveChecksum,
  DATA_FOLDER,
  MANIFEST_NAME,
  type ArchivedFile,
  type BackupManifest,
} from './schemas.js';

/** A file of the data directory as found when the files were held: its path and size then. */
export interface DataFile {
  path: string;
  bytes: number;
}

/**
 * What the archive leaves out: the lock (it names the process that held the directory) and the master key's file,
 * which never travels with the data it protects (docs/operations.md, "Backup and restore"); the same names with a
 * suffix are their files being written.
 */
function leftOut(name: string): boolean {
  return [LOCK_FILE, MASTER_KEY_FILE].some((kept) => name === kept || name.startsWith(`${kept}.`));
}

/** Every file and folder of the data directory but those left out, in a stable order. */
export async function listDataDirectory(
  dataDir: string,
): Promise<{ directories: string[]; files: DataFile[] }> {
  const directories: string[] = [];
  const files: DataFile[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(join(dataDir, relative), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (relative === '' && leftOut(entry.name)) continue;
      if (entry.isDirectory()) {
        directories.push(path);
        await walk(path);
      } else if (entry.isFile()) {
        files.push({ path, bytes: (await stat(join(dataDir, path))).size });
      }
    }
  };
  await walk('');
  return { directories, files };
}

/** Bytes read from a data file at a time: few large chunks through the hash, the zip's counters and the socket. */
const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * yazl computes each entry's CRC-32 in JavaScript (buffer-crc32, a byte at a time): measured on a 161 MiB data
 * directory, that was the largest part of the server's CPU time during a backup (bench/README.md, "Backup"). Node's
 * `zlib.crc32` (20.15 and later) gives the same value natively; yazl looks `unsigned` up on that module at every
 * chunk, so pointing it at the native function once is enough. An older Node keeps the JavaScript one.
 */
function useNativeCrc32(): void {
  const native = (zlib as { crc32?: (data: Buffer | string, value?: number) => number }).crc32;
  if (native === undefined) return;
  const fromYazl = createRequire(createRequire(import.meta.url).resolve('yazl'));
  const crc32 = fromYazl('buffer-crc32') as {
    unsigned: (data: Buffer | string, previous?: number) => number;
  };
  crc32.unsigned = (data, previous) => native(data, previous ?? 0);
}

export type ManifestFacts = Omit<BackupManifest, 'directories' | 'files' | 'checksum'>;

export interface ArchiveWriting {
  /** The zip, as it is written. */
  output: Readable;
  /** Settles once the last data file has been read (the files need not be held any longer) or the writing failed. */
  filesRead: Promise<void>;
  /** The manifest, once written. */
  manifest: Promise<BackupManifest>;
}

/**
 * The archive of the held data directory, streamed: each file read once, through its hash, into the zip (stored:
 * PostgreSQL's pages would compress, but the backup's time would then be the compressor's); the manifest last.
 */
export async function writeArchive(
  dataDir: string,
  listing: { directories: string[]; files: DataFile[] },
  facts: ManifestFacts,
): Promise<ArchiveWriting> {
  // Loaded when a backup is first taken, not at start-up (docs/startup.md).
  const { default: yazl } = await import('yazl');
  useNativeCrc32();
  const zip = new yazl.ZipFile();
  const mtime = new Date(facts.createdAt);
  const archived: ArchivedFile[] = [];
  let settleRead!: (error?: unknown) => void;
  const filesRead = new Promise<void>((resolve, reject) => {
    settleRead = (error) => (error === undefined ? resolve() : reject(error));
  });
  let settleManifest!: (manifest: BackupManifest) => void;
  const manifest = new Promise<BackupManifest>((resolve) => (settleManifest = resolve));
  for (const directory of listing.directories) zip.addEmptyDirectory(DATA_FOLDER + directory, { mtime });
  for (const file of listing.files) {
    zip.addReadStreamLazy(
      DATA_FOLDER + file.path,
      { compress: false, mtime, mode: 0o600, size: file.bytes },
      (callback) => callback(null, hashedFile(join(dataDir, file.path), file, archived)),
    );
  }
  // Asked for only once every file before it has been written into the zip: the hashes are all known.
  zip.addReadStreamLazy(MANIFEST_NAME, { compress: false, mtime, mode: 0o600 }, (callback) => {
    settleRead();
    const complete: BackupManifest = {
      ...facts,
      directories: listing.directories,
      files: archived,
      checksum: archiveChecksum(archived),
    };
    settleManifest(complete);
    callback(null, Readable.from([Buffer.from(JSON.stringify(complete, null, 1))]));
  });
  zip.end();
  const output = zip.outputStream as Readable;
  // A reader that goes away (or a file that cannot be read) ends the writing: the files are let go at once.
  output.once('close', () => settleRead(new Error('The archive was not read to its end.')));
  output.once('error', (error) => settleRead(error));
  zip.once('error', (error: unknown) => {
    settleRead(error);
    output.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  return { output, filesRead, manifest };
}

/** One file's bytes, hashed on their way into the zip; its entry joins `archived` once read whole. */
function hashedFile(path: string, file: DataFile, archived: ArchivedFile[]): Readable {
  const hash = createHash('sha256');
  let bytes = 0;
  const through = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      bytes += chunk.length;
      callback(null, chunk);
    },
    flush(callback) {
      archived.push({ path: file.path, bytes, sha256: hash.digest('hex') });
      callback();
    },
  });
  // A stream allocates its whole chunk for every read: a small file (most of them) gets a chunk of its size.
  const source = createReadStream(path, {
    highWaterMark: Math.max(1, Math.min(READ_CHUNK_BYTES, file.bytes)),
  });
  source.once('error', (error) => through.destroy(error));
  return source.pipe(through);
}
