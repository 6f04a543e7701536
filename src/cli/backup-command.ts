import { createHash, type Hash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Command } from 'commander';
import { clientFor, type GlobalOptions } from './common.js';
import { CliError, EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import { transferProgress } from './migrate-progress.js';
import { writeJson } from './output.js';

/** Bytes of the archive written to its file at a time. */
const WRITE_BYTES = 1024 * 1024;

/**
 * The archive's bytes through `hash`, each piece counted, passed on in writes of WRITE_BYTES: the answer arrives in
 * pieces of a socket read, and written as they came, the file's writes were most of the command's time
 * (bench/README.md, "Backup").
 */
function hashedInWrites(hash: Hash, counted: (bytes: number) => void): Transform {
  let gathered: Buffer[] = [];
  let gatheredBytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      counted(chunk.length);
      gathered.push(chunk);
      gatheredBytes += chunk.length;
      if (gatheredBytes < WRITE_BYTES) return callback();
      const whole = Buffer.concat(gathered, gatheredBytes);
      gathered = [];
      gatheredBytes = 0;
      callback(null, whole);
    },
    flush(callback) {
      callback(null, gatheredBytes > 0 ? Buffer.concat(gathered, gatheredBytes) : undefined);
    },
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
        const counting = hashedInWrites(hash, (bytes) => {
          written += bytes;
          // The archive is a little larger than its data: the last report is the one at the end.
          if (written < total) progress?.(written, total);
        });
        try {
          await pipeline(
            Readable.fromWeb(answer.body as WebReadableStream<Uint8Array>),
            counting,
            createWriteStream(partial, { flags: 'wx', mode: 0o600 }),
            { signal: interrupted.signal },
          );
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
