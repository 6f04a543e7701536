import { createHash, type Hash } from 'node:crypto';
import { close, existsSync, open, writev } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Command } from 'commander';
import { clientFor, type GlobalOptions } from './common.js';
import { CliError, EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import { transferProgress } from './migrate-progress.js';
import { writeJson } from './output.js';

/** Bytes of the archive gathered before they are written to its file. */
const WRITE_BYTES = 1024 * 1024;

/**
 * The archive's file: each piece of the answer goes through `hash` and is counted as it comes, and the pieces are
 * written together once WRITE_BYTES have gathered, in one `writev` (no copy into one buffer): the answer arrives in
 * pieces of a socket read, and written one by one, the file's writes were most of the command's time
 * (bench/README.md, "Backup").
 */
class ArchiveFile extends Writable {
  private fd: number | undefined;
  private gathered: Buffer[] = [];
  private gatheredBytes = 0;

  constructor(
    private readonly path: string,
    private readonly hash: Hash,
    private readonly counted: (bytes: number) => void,
  ) {
    super({ highWaterMark: WRITE_BYTES });
  }

  override _construct(callback: (error?: Error | null) => void): void {
    open(this.path, 'wx', 0o600, (error, fd) => {
      this.fd = fd;
      callback(error);
    });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.hash.update(chunk);
    this.counted(chunk.length);
    this.gathered.push(chunk);
    this.gatheredBytes += chunk.length;
    if (this.gatheredBytes < WRITE_BYTES) return callback();
    this.writeGathered(callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.writeGathered(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.fd === undefined) return callback(error);
    close(this.fd, (closeError) => callback(error ?? closeError));
    this.fd = undefined;
  }

  private writeGathered(callback: (error?: Error | null) => void): void {
    const buffers = this.gathered;
    this.gathered = [];
    this.gatheredBytes = 0;
    writeAll(this.fd!, buffers, callback);
  }
}

/** Writes `buffers` whole at the file's position, a short write followed by the rest. */
function writeAll(fd: number, buffers: Buffer[], callback: (error?: Error | null) => void): void {
  if (buffers.length === 0) return callback();
  writev(fd, buffers, (error, written) => {
    if (error) return callback(error);
    let rest = written;
    while (buffers.length > 0 && rest >= buffers[0]!.length) rest -= buffers.shift()!.length;
    if (buffers.length > 0) buffers[0] = buffers[0]!.subarray(rest);
    writeAll(fd, buffers, callback);
  });
}

/**
 * `eas backup <file>`: the deployment's archive (docs/operations.md, "Backup and restore"), written under a
 * temporary name and given its own only once whole, so a backup cut short is never taken for one.
 */
export function backupCommand(io: CliIo): Command {
  return new Command('backup')
    .description('write a consistent archive of the deployment to FILE while it serves (administrators)')
    .argument('<file>', 'the archive to write; an existing file is not overwritten')
    .option('--quiet', 'no progress on stderr')
    .addHelpText(
      'after',
      '\nExample:\n  EAS_USER=MAXADMIN EAS_PASSWORD=... eas --url http://host/maximo backup /backups/eas-2026-11-28.zip\n' +
        'Restore with `npm run admin -- restore FILE` (docs/operations.md, "Backup and restore").',
    )
    .action(async (file: string, options: { quiet?: boolean }, command: Command) => {
      const global = command.optsWithGlobals<GlobalOptions>();
      if (existsSync(file)) throw new CliError(`${file} exists; name a new file.`, EXIT.usage);
      const client = clientFor(io, global);
      const partial = `${file}.partial-${process.pid}`;
      const interrupted = new AbortController();
      const stopListening = io.onInterrupt(() => interrupted.abort());
      try {
        const answer = await client.backup.download();
        const total = answer.dataBytes;
        const progress = options.quiet ? undefined : transferProgress(io.stderr, 'backing up');
        const hash = createHash('sha256');
        let written = 0;
        const archiveFile = new ArchiveFile(partial, hash, (bytes) => {
          written += bytes;
          // The archive is a little larger than its data: the last report is the one at the end.
          if (written < total) progress?.(written, total);
        });
        try {
          await pipeline(answer.body, archiveFile, { signal: interrupted.signal });
        } catch (error) {
          if (interrupted.signal.aborted)
            throw new CliError('Interrupted; no archive was written.', EXIT.interrupted);
          throw new CliError(
            `The archive was cut off after ${written} bytes (${(error as Error).message}); nothing was written.`,
            EXIT.connection,
          );
        }
        progress?.(total, total);
        await rename(partial, file);
        const summary = {
          file,
          bytes: written,
          sha256: hash.digest('hex'),
          createdAt: answer.createdAt,
          deployment: answer.deployment,
          schemaVersion: answer.schemaVersion,
          release: answer.release,
        };
        if (global.json) writeJson(io.stdout, summary);
        else
          io.stdout.write(
            `backup written to ${file}: ${written} bytes, taken at ${summary.createdAt}, deployment ` +
              `${summary.deployment}, schema ${summary.schemaVersion}, release ${summary.release}\n` +
              `SHA-256 of the file: ${summary.sha256}\n` +
              "The master key is not in the archive: keep EAS_MASTER_KEY (or the data directory's " +
              'apikey-master.key) apart, a restore needs it.\n',
          );
      } finally {
        stopListening();
        await rm(partial, { force: true });
        await client.logout().catch(() => undefined);
      }
    });
}
