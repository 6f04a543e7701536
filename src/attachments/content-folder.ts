import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import * as repository from './repository.js';

/*
 * Attachment content as files (src/attachments/README.md, "Where content is kept"): a binary upload streams into a
 * file of the folder, named by a random id, before its row is written; the row names the file. A file no row names
 * (an upload whose row never committed, an attachment deleted) is removed inside a transaction that first reads
 * whether a row names it, so that no backup of the embedded database, which holds every statement while it reads
 * the files, sees a file go while it is being read.
 */

/** The folder of the embedded database's data directory that holds attachment content. */
export const DOCLINKS_FOLDER = 'doclinks';

/** The suffix of a file still being written; the backup leaves such files out, the sweep removes old ones. */
export const PARTIAL_SUFFIX = '.partial';

/** How old a file no row names must be before the sweep removes it: longer than any upload takes to commit. */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;

/** Files the sweep asks about in one statement. */
const SWEEP_BATCH = 500;

/** Bytes gathered into one write of an upload. */
const WRITE_BYTES = 1024 * 1024;

/** Bytes written between the flushes an upload starts while it is received. */
const FLUSH_BYTES = 16 * 1024 * 1024;

/** Read size of a download: a few large reads rather than many of the stream's 64 KB default. */
const READ_BYTES = 1024 * 1024;

/** What an upload wrote: the file's name in the folder, its size and its SHA-256. */
export interface StoredFile {
  name: string;
  size: number;
  checksum: string;
}

/**
 * The promise, marked as handled: a write or flush that fails while the next piece is awaited must not end the
 * process as an unhandled rejection before the upload awaits it and fails with its error.
 */
function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** Writes the pieces in order, with one call when the file takes them whole (as a regular file does). */
async function writeAll(file: FileHandle, pieces: readonly Uint8Array[]): Promise<void> {
  if (pieces.length === 0) return;
  const total = pieces.reduce((sum, piece) => sum + piece.byteLength, 0);
  const { bytesWritten } = await file.writev(pieces);
  if (bytesWritten === total) return;
  const rest = Buffer.concat(pieces).subarray(bytesWritten);
  for (let written = 0; written < rest.byteLength;) {
    written += (await file.write(rest, written, rest.byteLength - written)).bytesWritten;
  }
}

/** A folder of attachment content shared by every process that serves the deployment. */
export class ContentFolder {
  constructor(readonly directory: string) {}

  /**
   * Writes the pieces to a new file, flushed to disk before its name is answered, checking the size against the
   * limit as it goes; a refused or failed write leaves no file behind.
   */
  async write(
    pieces: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    limitBytes: number,
    tooLarge: () => Error,
  ): Promise<StoredFile> {
    await mkdir(this.directory, { recursive: true });
    const name = randomUUID();
    const partial = join(this.directory, `${name}${PARTIAL_SUFFIX}`);
    const file = await open(partial, 'wx', 0o600);
    const hash = createHash('sha256');
    let size = 0;
    // Pieces are gathered into writes of about WRITE_BYTES, one of them on disk while the next is gathered: the
    // socket's 64 KB pieces written one at a time each waited for the disk before the next was read.
    let gathered: Uint8Array[] = [];
    let gatheredBytes = 0;
    let writing: Promise<void> = Promise.resolve();
    // What is written is flushed every FLUSH_BYTES while the rest arrives, so that the flush the row waits for
    // has only the tail left (a 100 MB file's final flush took 65-190 ms, 15-30 ms so).
    let flushing: Promise<unknown> = Promise.resolve();
    let unflushed = 0;
    try {
      try {
        for await (const piece of pieces) {
          size += piece.byteLength;
          if (size > limitBytes) throw tooLarge();
          hash.update(piece);
          gathered.push(piece);
          gatheredBytes += piece.byteLength;
          if (gatheredBytes >= WRITE_BYTES) {
            await writing;
            writing = settledLater(writeAll(file, gathered));
            unflushed += gatheredBytes;
            gathered = [];
            gatheredBytes = 0;
            if (unflushed >= FLUSH_BYTES) {
              unflushed = 0;
              flushing = settledLater(Promise.all([flushing, writing.then(() => file.datasync())]));
            }
          }
        }
        await writing;
        await writeAll(file, gathered);
        await flushing;
        // The row that names the file commits durably: the file must be on disk first.
        await file.sync();
      } finally {
        await Promise.allSettled([writing, flushing]);
        await file.close();
      }
      await rename(partial, join(this.directory, name));
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return { name, size, checksum: hash.digest('hex') };
  }

  /**
   * The content of a file, in large reads; undefined when the file is not there. Opened before the answer is begun,
   * so that a lost file is answered as an error of its own, not as a download that fails.
   */
  async open(name: string): Promise<Readable | undefined> {
    try {
      const file = await open(join(this.directory, name), 'r');
      return file.createReadStream({ highWaterMark: READ_BYTES });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Removes those of the files that no row names, reading that in the same transaction as the removal. */
  async discard(db: Kysely<Database>, names: readonly string[]): Promise<number> {
    if (names.length === 0) return 0;
    return db.transaction().execute(async (transaction) => {
      const named = new Set(await repository.namedFiles(transaction, names));
      const unnamed = names.filter((name) => !named.has(name));
      for (const name of unnamed) await rm(join(this.directory, name), { force: true });
      return unnamed.length;
    });
  }

  /** Removes the files older than the grace period that no row names (and unfinished writes as old). */
  async sweep(db: Kysely<Database>, now = Date.now()): Promise<number> {
    let entries: string[];
    try {
      entries = await readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    const old: string[] = [];
    for (const name of entries) {
      const stats = await stat(join(this.directory, name)).catch(() => undefined);
      if (stats?.isFile() && now - stats.mtimeMs > ORPHAN_GRACE_MS) old.push(name);
    }
    let removed = 0;
    for (let at = 0; at < old.length; at += SWEEP_BATCH) {
      removed += await this.discard(db, old.slice(at, at + SWEEP_BATCH));
    }
    return removed;
  }
}
