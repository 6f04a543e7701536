import { fsyncSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

type EmscriptenOptions = Awaited<ReturnType<NodeFS['init']>>['emscriptenOpts'];

/** What this touches of Emscripten's NODEFS: the operations every open file of the data directory shares. */
interface NodeFileSystem {
  stream_ops: { fsync?: (stream: { nfd: number }) => number };
  /** Runs a Node file operation, turning its error into the errno PostgreSQL is given. */
  tryFSOperation<T>(operation: () => T): T;
}

/**
 * PGlite's data directory on Node's file system, with an fsync that reaches the disk. Emscripten's NODEFS has no
 * fsync of its own, so PostgreSQL's flushes of its write-ahead log and of the files a checkpoint wrote would return
 * at once, having flushed nothing: a commit would survive the process but not the machine (docs/operations.md,
 * "Durability of the embedded database"). Installed before PostgreSQL starts, so that recovery's own checkpoint is
 * flushed too. PostgreSQL's `fdatasync` is a no-op in PGlite whatever the file system, hence
 * `wal_sync_method=fsync` (`pgliteStartParams`, src/db/database.ts).
 */
export class DurableNodeFS extends NodeFS {
  constructor(
    dataDir: string,
    /** Flushes one open file or folder to the disk: injectable so that a test can see what is flushed. */
    private readonly flushToDisk: (fd: number) => void = fsyncSync,
  ) {
    super(dataDir);
  }

  override async init(
    pg: PGlite,
    options: Partial<EmscriptenOptions>,
  ): Promise<{ emscriptenOpts: EmscriptenOptions }> {
    const { emscriptenOpts } = await super.init(pg, options);
    const flushToDisk = this.flushToDisk;
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [
          ...(emscriptenOpts.preRun ?? []),
          (module) => {
            const nodeFs = module.NODEFS as unknown as NodeFileSystem;
            nodeFs.stream_ops.fsync = (stream) => {
              nodeFs.tryFSOperation(() => flushToDisk(stream.nfd));
              return 0;
            };
          },
        ],
      },
    };
  }
}
