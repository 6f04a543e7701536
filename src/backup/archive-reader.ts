import { createHash } from 'node:crypto';
import { closeSync, createWriteStream, fstatSync, fsync, openSync, readSync, writeSync } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Value } from 'typebox/value';
import type * as yauzl from 'yauzl';
import { flush } from '../db/cluster-template.js';
import { archiveChecksum, BackupManifest, DATA_FOLDER, MANIFEST_NAME, type ArchivedFile } from './schemas.js';

/** An archive that cannot be restored: damaged, altered, or not a backup of this service. */
export class ArchiveRefusedError extends Error {
  constructor(why: string) {
    super(`The archive cannot be restored: ${why}. Nothing was restored.`);
  }
}

const MANIFEST_LIMIT_BYTES = 256 * 1024 * 1024;

export interface OpenArchive {
  manifest: BackupManifest;
  /**
   * Writes one file of the data directory to `path`, checked against the manifest as it goes; settles once written
   * and checked, with `flushed`, which settles once the file is on disk (fsync).
   */
  extract(
    file: ArchivedFile,
    path: string,
    onBytes: (bytes: number) => void,
  ): Promise<{ flushed: Promise<void> }>;
  close(): void;
}

/** Bytes copied from the archive to a restored file at a time, through one buffer kept for the whole restore. */
const COPY_BYTES = 1024 * 1024;

/**
 * Opens a backup archive and checks everything but the files' bytes: the zip's directory, the manifest against its
 * schema and its checksum, and that the zip holds exactly the files and folders the manifest lists.
 */
export async function openArchive(path: string): Promise<OpenArchive> {
  // Loaded when a restore runs, not at start-up (docs/startup.md).
  const { default: unzip } = await import('yauzl');
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    unzip.open(
      path,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true },
      (error, opened) => {
        if (error) reject(new ArchiveRefusedError(`it is not a readable zip archive (${error.message})`));
        else resolve(opened);
      },
    );
  });
  try {
    const entries = await listEntries(zip);
    const manifestEntry = entries.get(MANIFEST_NAME);
    if (!manifestEntry || manifestEntry.uncompressedSize > MANIFEST_LIMIT_BYTES)
      throw new ArchiveRefusedError(`it holds no ${MANIFEST_NAME}: it is not a backup of this service`);
    const manifest = parseManifest(await readWhole(zip, manifestEntry));
    checkEntries(manifest, entries);
    const copier = new StoredCopier(path);
    return {
      manifest,
      extract: (file, target, onBytes) => {
        const entry = entries.get(DATA_FOLDER + file.path)!;
        return entry.compressionMethod === 0
          ? Promise.resolve().then(() => copier.copy(entry, file, target, onBytes))
          : extractFile(zip, entry, file, target, onBytes);
      },
      close: () => {
        copier.close();
        zip.close();
      },
    };
  } catch (error) {
    zip.close();
    throw error;
  }
}

function listEntries(zip: yauzl.ZipFile): Promise<Map<string, yauzl.Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, yauzl.Entry>();
    zip.on('error', (error: Error) =>
      reject(new ArchiveRefusedError(`its zip directory is damaged (${error.message})`)),
    );
    zip.on('entry', (entry: yauzl.Entry) => {
      if (entries.has(entry.fileName)) {
        reject(new ArchiveRefusedError(`the entry ${entry.fileName} appears twice`));
        return;
      }
      entries.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.readEntry();
  });
}

async function readWhole(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseManifest(bytes: Buffer): BackupManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ArchiveRefusedError('its manifest is not JSON');
  }
  if (!Value.Check(BackupManifest, parsed)) {
    const first = [...Value.Errors(BackupManifest, parsed)][0];
    const where = first ? ` (${first.instancePath || '/'}: ${first.message})` : '';
    throw new ArchiveRefusedError(`its manifest is not one this release reads${where}`);
  }
  if (archiveChecksum(parsed.files) !== parsed.checksum)
    throw new ArchiveRefusedError('its manifest does not match its checksum');
  return parsed;
}

/** The zip holds the manifest's folders and files, each once at the listed size, and nothing else. */
function checkEntries(manifest: BackupManifest, entries: ReadonlyMap<string, yauzl.Entry>): void {
  const expected = new Map<string, number | undefined>([[MANIFEST_NAME, undefined]]);
  for (const directory of manifest.directories) expected.set(`${DATA_FOLDER}${directory}/`, undefined);
  for (const file of manifest.files) expected.set(DATA_FOLDER + file.path, file.bytes);
  for (const [name, entry] of entries) {
    if (!expected.has(name))
      throw new ArchiveRefusedError(`it holds ${name}, which its manifest does not list`);
    const bytes = expected.get(name);
    if (bytes !== undefined && entry.uncompressedSize !== bytes)
      throw new ArchiveRefusedError(`${name} is not of the size its manifest gives`);
  }
  for (const name of expected.keys()) {
    if (!entries.has(name)) throw new ArchiveRefusedError(`${name}, which its manifest lists, is missing`);
  }
}

/**
 * Stored entries (every one this service writes) copied straight from the archive's file: their bytes lie whole
 * after their local header. yauzl's read streams read the archive 16 KiB at a time through the thread pool, a stream
 * per file; here each file is read and written synchronously in pieces of COPY_BYTES through one buffer (the
 * restore is a command of its own: nothing else waits on its event loop), and its fsync runs in the thread pool
 * while the next files are written (bench/README.md, "Backup").
 */
class StoredCopier {
  private fd: number | undefined;
  private readonly archiveBytes: number;
  private readonly buffer = Buffer.allocUnsafe(COPY_BYTES);

  constructor(path: string) {
    this.fd = openSync(path, 'r');
    this.archiveBytes = fstatSync(this.fd).size;
  }

  copy(
    entry: yauzl.Entry,
    file: ArchivedFile,
    target: string,
    onBytes: (bytes: number) => void,
  ): { flushed: Promise<void> } {
    const source = this.fd!;
    const header = this.buffer;
    const at = entry.relativeOffsetOfLocalHeader;
    if (readSync(source, header, 0, 30, at) !== 30 || header.readUInt32LE(0) !== 0x04034b50)
      throw new ArchiveRefusedError(`the local header of ${file.path} is damaged`);
    let position = at + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    const end = position + entry.compressedSize;
    if (entry.compressedSize !== file.bytes || end > this.archiveBytes)
      throw new ArchiveRefusedError(`${file.path} lies beyond the end of the archive`);
    const hash = createHash('sha256');
    const written = openSync(target, 'wx', 0o600);
    try {
      while (position < end) {
        const read = readSync(source, this.buffer, 0, Math.min(COPY_BYTES, end - position), position);
        if (read === 0)
          throw new ArchiveRefusedError(`${file.path} cannot be read from it (the archive ends)`);
        const bytes = this.buffer.subarray(0, read);
        hash.update(bytes);
        for (let done = 0; done < read;) done += writeSync(written, bytes, done, read - done);
        position += read;
        onBytes(read);
      }
    } catch (error) {
      closeSync(written);
      throw error;
    }
    if (hash.digest('hex') !== file.sha256) {
      closeSync(written);
      throw new ArchiveRefusedError(
        `${file.path} does not match its checksum: the archive is damaged or was altered`,
      );
    }
    const flushed = new Promise<void>((resolve, reject) =>
      fsync(written, (error) => {
        closeSync(written);
        if (error) reject(error);
        else resolve();
      }),
    );
    return { flushed };
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** An entry compressed by another writer: through yauzl's stream and its inflater. */
async function extractFile(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  file: ArchivedFile,
  target: string,
  onBytes: (bytes: number) => void,
): Promise<{ flushed: Promise<void> }> {
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      onBytes(chunk.length);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(
      await zip.openReadStreamPromise(entry),
      hashing,
      createWriteStream(target, { mode: 0o600 }),
    );
  } catch (error) {
    throw new ArchiveRefusedError(`${file.path} cannot be read from it (${(error as Error).message})`);
  }
  if (hash.digest('hex') !== file.sha256)
    throw new ArchiveRefusedError(
      `${file.path} does not match its checksum: the archive is damaged or was altered`,
    );
  return { flushed: flush(target) };
}
