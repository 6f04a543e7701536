import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { DOCLINKS_FOLDER, PARTIAL_SUFFIX } from '../attachments/content-folder.js';
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
 * suffix are their files being written. Attachment files being written are left out too: no row of the backup
 * names them, and their upload may remove them while the archive is read (src/attachments/content-folder.ts).
 */
function leftOut(path: string): boolean {
  if (path.startsWith(`${DOCLINKS_FOLDER}/`)) return path.endsWith(PARTIAL_SUFFIX);
  return [LOCK_FILE, MASTER_KEY_FILE].some((kept) => path === kept || path.startsWith(`${kept}.`));
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
      if (leftOut(path)) continue;
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

/**
 * The archive's stream gives out pieces of this size: each file's bytes are read straight into the piece that goes
 * to the socket (no copy between), several small files to a piece.
 */
const PIECE_BYTES = 1024 * 1024;

export type ManifestFacts = Omit<BackupManifest, 'directories' | 'files' | 'checksum'>;

export interface ArchiveOptions {
  /**
   * `always`: ZIP64 records for every entry and the end, as an archive past 4 GiB needs them (tests read such an
   * archive without writing 4 GiB). Otherwise only where a size or offset needs them.
   */
  zip64?: 'always';
}

export interface ArchiveWriting {
  /** The zip, as it is written. */
  output: Readable;
  /** Settles once the last data file has been read (the files need not be held any longer) or the writing failed. */
  filesRead: Promise<void>;
  /** The manifest, once written. */
  manifest: Promise<BackupManifest>;
}

/**
 * The archive of the held data directory, streamed: each file read once, through its hash and CRC-32, into the zip
 * (stored: PostgreSQL's pages would compress, but the backup's time would then be the compressor's); the manifest
 * last.
 */
export function writeArchive(
  dataDir: string,
  listing: { directories: string[]; files: DataFile[] },
  facts: ManifestFacts,
  options: ArchiveOptions = {},
): ArchiveWriting {
  let settleRead!: (error?: unknown) => void;
  const filesRead = new Promise<void>((resolve, reject) => {
    settleRead = (error) => (error === undefined ? resolve() : reject(error));
  });
  let settleManifest!: (manifest: BackupManifest) => void;
  const manifest = new Promise<BackupManifest>((resolve) => (settleManifest = resolve));
  const output = new ArchiveStream(dataDir, listing, facts, options.zip64 === 'always', (complete) => {
    settleRead();
    settleManifest(complete);
  });
  // A reader that goes away (or a file that cannot be read) ends the writing: the files are let go at once.
  output.once('close', () => settleRead(new Error('The archive was not read to its end.')));
  output.once('error', (error) => settleRead(error));
  return { output, filesRead, manifest };
}

/** What the central directory needs of an entry written. */
interface WrittenEntry {
  name: Buffer;
  directory: boolean;
  crc32: number;
  bytes: number;
  offset: number;
  /** Whether its size or offset does not fit the 32-bit fields (or ZIP64 is asked for throughout). */
  zip64: boolean;
}

/** The entry being written: its file (none for the manifest), what is left of it, its running hash and CRC-32. */
interface CurrentEntry {
  written: WrittenEntry;
  file: DataFile | undefined;
  fd: number | undefined;
  position: number;
  hash: Hash;
  /** The manifest's bytes, for its entry. */
  bytes?: Buffer;
}

/**
 * The zip, written here rather than by yazl (bench/README.md, "Backup"): yazl pipes every entry through four
 * streams of its own after the file's read stream, and with over a thousand files, most of a few KiB, that machinery
 * and the reads' round trips through the thread pool were most of the server's time. Here each piece of the output
 * is filled in one `_read`: headers, then each file's bytes read synchronously into the piece (the files are held
 * still and were just checkpointed: they are in the page cache, and a read of at most a piece keeps the event loop
 * turning between pieces), hashed and CRC'd where they lie.
 *
 * The layout is what yazl wrote, and what yauzl (`archive-reader.ts`) and other unzip tools read: stored entries,
 * names in UTF-8, each file's CRC-32 and size in a data descriptor after its bytes, ZIP64 records where a size or
 * offset needs them (APPNOTE 6.3, sections 4.3.9 and 4.5.3).
 */
class ArchiveStream extends Readable {
  private readonly dos: { date: number; time: number };
  private readonly archived: ArchivedFile[] = [];
  private readonly entries: WrittenEntry[] = [];
  /** Directories, then files, then the manifest: the index of the next to start. */
  private next = 0;
  private current: CurrentEntry | undefined;
  /** Bytes of the archive queued or read so far: where the next header goes. */
  private produced = 0;
  /** Headers and trailers waiting to be copied into the next piece. */
  private pending: Buffer[] = [];
  private finished = false;

  constructor(
    private readonly dataDir: string,
    private readonly listing: { directories: string[]; files: DataFile[] },
    private readonly facts: ManifestFacts,
    private readonly zip64Always: boolean,
    private readonly onManifest: (manifest: BackupManifest) => void,
  ) {
    super({ highWaterMark: PIECE_BYTES });
    this.dos = dosDateTime(new Date(facts.createdAt));
  }

  override _read(): void {
    try {
      const piece = Buffer.allocUnsafe(PIECE_BYTES);
      let filled = 0;
      while (filled < PIECE_BYTES) {
        const waiting = this.pending[0];
        if (waiting !== undefined) {
          const taken = waiting.copy(piece, filled);
          filled += taken;
          if (taken === waiting.length) this.pending.shift();
          else this.pending[0] = waiting.subarray(taken);
        } else if (this.current !== undefined) {
          filled += this.readInto(this.current, piece, filled);
        } else if (!this.startNext()) {
          break;
        }
      }
      if (filled > 0) this.push(piece.subarray(0, filled));
      if (this.finished && this.pending.length === 0) this.push(null);
    } catch (error) {
      this.destroy(error as Error);
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const fd = this.current?.fd;
    if (fd !== undefined) closeSync(fd);
    this.current = undefined;
    callback(error);
  }

  /** The next entry's header, or the central directory once there is none: false once everything is queued. */
  private startNext(): boolean {
    if (this.finished) return false;
    const { directories, files } = this.listing;
    const index = this.next;
    this.next += 1;
    if (index < directories.length) {
      const entry = this.newEntry(DATA_FOLDER + directories[index]! + '/', true, 0);
      this.queue(localHeader(entry, this.dos));
      this.entries.push(entry);
      return true;
    }
    const fileIndex = index - directories.length;
    const file = files[fileIndex];
    if (file !== undefined) {
      const entry = this.newEntry(DATA_FOLDER + file.path, false, file.bytes);
      this.queue(localHeader(entry, this.dos));
      const fd = openSync(join(this.dataDir, file.path), 'r');
      this.current = { written: entry, file, fd, position: 0, hash: createHash('sha256') };
      return true;
    }
    if (fileIndex === files.length) {
      // Every data file has been read: the files need not be held any longer.
      const complete: BackupManifest = {
        ...this.facts,
        directories: directories,
        files: this.archived,
        checksum: archiveChecksum(this.archived),
      };
      this.onManifest(complete);
      const bytes = Buffer.from(JSON.stringify(complete, null, 1));
      const entry = this.newEntry(MANIFEST_NAME, false, bytes.length);
      this.queue(localHeader(entry, this.dos));
      this.current = {
        written: entry,
        file: undefined,
        fd: undefined,
        position: 0,
        hash: createHash('sha256'),
        bytes,
      };
      return true;
    }
    this.queue(centralDirectory(this.entries, this.produced, this.dos, this.zip64Always));
    this.finished = true;
    return true;
  }

  private newEntry(name: string, directory: boolean, bytes: number): WrittenEntry {
    const offset = this.produced;
    const zip64 = this.zip64Always || bytes >= MAX_32 || offset >= MAX_32;
    return { name: Buffer.from(name, 'utf8'), directory, crc32: 0, bytes, offset, zip64 };
  }

  private queue(buffer: Buffer): void {
    this.pending.push(buffer);
    this.produced += buffer.length;
  }

  /** Reads what fits of the current entry's bytes into `piece` at `at`; ends the entry once all are read. */
  private readInto(current: CurrentEntry, piece: Buffer, at: number): number {
    const entry = current.written;
    const wanted = Math.min(PIECE_BYTES - at, entry.bytes - current.position);
    let read = 0;
    if (wanted > 0) {
      if (current.bytes !== undefined) {
        read = current.bytes.copy(piece, at, current.position, current.position + wanted);
      } else {
        read = readSync(current.fd!, piece, at, wanted, current.position);
        // The files are held still: one shorter than it was listed is not a cluster to archive.
        if (read === 0) throw new Error(`${current.file!.path} ended before its ${entry.bytes} bytes`);
      }
      const bytes = piece.subarray(at, at + read);
      current.hash.update(bytes);
      entry.crc32 = crc32(bytes, entry.crc32);
      current.position += read;
      this.produced += read;
    }
    if (current.position === entry.bytes) {
      if (current.fd !== undefined) closeSync(current.fd);
      if (current.file !== undefined)
        this.archived.push({
          path: current.file.path,
          bytes: entry.bytes,
          sha256: current.hash.digest('hex'),
        });
      this.queue(dataDescriptor(entry));
      this.entries.push(entry);
      this.current = undefined;
    }
    return read;
  }
}

/**
 * Node's native CRC-32 (`zlib.crc32`, Node 20.15 and later); an older Node 20 computes it here, a table's byte at a
 * time (what yazl's JavaScript CRC did: the largest cost of a backup, bench/README.md "Backup").
 */
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
let crcTable: Uint32Array | undefined;

function crc32(data: Buffer, previous: number): number {
  if (nativeCrc32 !== undefined) return nativeCrc32(data, previous);
  crcTable ??= Uint32Array.from({ length: 256 }, (_, index) => {
    let value = index;
    for (let bit = 0; bit < 8; bit += 1) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
    return value >>> 0;
  });
  let crc = ~previous >>> 0;
  for (const byte of data) crc = crcTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

/** The MS-DOS date and time of the entries, in local time as yazl and unzip tools take it. */
function dosDateTime(when: Date): { date: number; time: number } {
  const year = Math.min(Math.max(when.getFullYear(), 1980), 2107);
  return {
    date: (when.getDate() & 0x1f) | (((when.getMonth() + 1) & 0xf) << 5) | (((year - 1980) & 0x7f) << 9),
    time:
      Math.floor(when.getSeconds() / 2) |
      ((when.getMinutes() & 0x3f) << 5) |
      ((when.getHours() & 0x1f) << 11),
  };
}

const UTF8_NAMES = 0x0800;
const SIZES_AFTER_DATA = 0x0008;
const VERSION_NEEDED = 20;
const VERSION_NEEDED_ZIP64 = 45;
/** Made by: Unix (3), specification 6.3. */
const VERSION_MADE_BY = (3 << 8) | 63;
const MAX_32 = 0xffffffff;

function flagsOf(entry: WrittenEntry): number {
  return entry.directory ? UTF8_NAMES : UTF8_NAMES | SIZES_AFTER_DATA;
}

/** The local header; a file's CRC-32 and sizes follow its bytes in the data descriptor. */
function localHeader(entry: WrittenEntry, dos: { date: number; time: number }): Buffer {
  const header = Buffer.alloc(30 + entry.name.length);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(VERSION_NEEDED, 4);
  header.writeUInt16LE(flagsOf(entry), 6);
  header.writeUInt16LE(0, 8); // stored
  header.writeUInt16LE(dos.time, 10);
  header.writeUInt16LE(dos.date, 12);
  // CRC-32 and sizes: zero (a directory's are; a file's are in its data descriptor).
  header.writeUInt16LE(entry.name.length, 26);
  header.writeUInt16LE(0, 28);
  entry.name.copy(header, 30);
  return header;
}

function dataDescriptor(entry: WrittenEntry): Buffer {
  if (entry.zip64) {
    const descriptor = Buffer.alloc(24);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(entry.crc32, 4);
    descriptor.writeBigUInt64LE(BigInt(entry.bytes), 8);
    descriptor.writeBigUInt64LE(BigInt(entry.bytes), 16);
    return descriptor;
  }
  const descriptor = Buffer.alloc(16);
  descriptor.writeUInt32LE(0x08074b50, 0);
  descriptor.writeUInt32LE(entry.crc32, 4);
  descriptor.writeUInt32LE(entry.bytes, 8);
  descriptor.writeUInt32LE(entry.bytes, 12);
  return descriptor;
}

/** The central directory, written at `start`, and its end records (ZIP64 ones where the counts or offsets need). */
function centralDirectory(
  entries: readonly WrittenEntry[],
  start: number,
  dos: { date: number; time: number },
  zip64Always: boolean,
): Buffer {
  const records = entries.map((entry) => {
    const zip64 = entry.zip64;
    const record = Buffer.alloc(46 + entry.name.length + (zip64 ? 28 : 0));
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(VERSION_MADE_BY, 4);
    record.writeUInt16LE(zip64 ? VERSION_NEEDED_ZIP64 : VERSION_NEEDED, 6);
    record.writeUInt16LE(flagsOf(entry), 8);
    record.writeUInt16LE(0, 10); // stored
    record.writeUInt16LE(dos.time, 12);
    record.writeUInt16LE(dos.date, 14);
    record.writeUInt32LE(entry.crc32, 16);
    record.writeUInt32LE(zip64 ? MAX_32 : entry.bytes, 20);
    record.writeUInt32LE(zip64 ? MAX_32 : entry.bytes, 24);
    record.writeUInt16LE(entry.name.length, 28);
    record.writeUInt16LE(zip64 ? 28 : 0, 30);
    // Comment length, disk number, internal attributes: zero.
    record.writeUInt32LE(((entry.directory ? 0o40700 : 0o100600) << 16) >>> 0, 38);
    record.writeUInt32LE(zip64 ? MAX_32 : entry.offset, 42);
    entry.name.copy(record, 46);
    if (zip64) {
      const extra = 46 + entry.name.length;
      record.writeUInt16LE(0x0001, extra);
      record.writeUInt16LE(24, extra + 2);
      record.writeBigUInt64LE(BigInt(entry.bytes), extra + 4);
      record.writeBigUInt64LE(BigInt(entry.bytes), extra + 12);
      record.writeBigUInt64LE(BigInt(entry.offset), extra + 20);
    }
    return record;
  });
  const size = records.reduce((sum, record) => sum + record.length, 0);
  const zip64 = zip64Always || entries.length >= 0xffff || size >= MAX_32 || start >= MAX_32;
  const end: Buffer[] = [];
  if (zip64) {
    const record = Buffer.alloc(56);
    record.writeUInt32LE(0x06064b50, 0);
    record.writeBigUInt64LE(44n, 4);
    record.writeUInt16LE(VERSION_MADE_BY, 12);
    record.writeUInt16LE(VERSION_NEEDED_ZIP64, 14);
    record.writeBigUInt64LE(BigInt(entries.length), 24);
    record.writeBigUInt64LE(BigInt(entries.length), 32);
    record.writeBigUInt64LE(BigInt(size), 40);
    record.writeBigUInt64LE(BigInt(start), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(start + size), 8);
    locator.writeUInt32LE(1, 16);
    end.push(record, locator);
  }
  const last = Buffer.alloc(22);
  last.writeUInt32LE(0x06054b50, 0);
  last.writeUInt16LE(zip64 ? 0xffff : entries.length, 8);
  last.writeUInt16LE(zip64 ? 0xffff : entries.length, 10);
  last.writeUInt32LE(zip64 ? MAX_32 : size, 12);
  last.writeUInt32LE(zip64 ? MAX_32 : start, 16);
  end.push(last);
  return Buffer.concat([...records, ...end]);
}
