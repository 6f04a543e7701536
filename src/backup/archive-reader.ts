import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Value } from 'typebox/value';
import type * as yauzl from 'yauzl';
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
  /** Writes one file of the data directory to `path`, checked against the manifest as it goes. */
  extract(file: ArchivedFile, path: string, onBytes: (bytes: number) => void): Promise<void>;
  close(): void;
}

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
    return {
      manifest,
      extract: (file, target, onBytes) =>
        extractFile(zip, entries.get(DATA_FOLDER + file.path)!, file, target, onBytes),
      close: () => zip.close(),
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

async function extractFile(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  file: ArchivedFile,
  target: string,
  onBytes: (bytes: number) => void,
): Promise<void> {
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
}
