import { execFile } from 'node:child_process';
import { copyFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where the compiled servers go: `.cache/bench/bench/servers/<name>.js`, the service's modules beside them. */
export const compiledDir = join(rootDir, '.cache', 'bench');
export const compiledServersDir = join(compiledDir, 'bench', 'servers');

let compiled: Promise<void> | undefined;

/**
 * Compiles bench/servers/ and what they import (the service's sources) to JavaScript once per run, so that every
 * server child runs under plain `node` like a production process: no transpiling loader in the measured processes.
 * Incremental: a run after an unchanged one takes a few seconds.
 */
export function compileServers(log: (message: string) => void): Promise<void> {
  compiled ??= (async () => {
    const started = Date.now();
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    await promisify(execFile)(
      process.execPath,
      [tsc, '-p', join(rootDir, 'bench', 'tsconfig.servers.json')],
      {
        cwd: rootDir,
      },
    ).catch((error: unknown) => {
      const output = (error as { stdout?: string }).stdout ?? '';
      throw new Error(`compiling bench/servers failed:\n${output}`, { cause: error });
    });
    // The service reads its version from the package.json two levels above its modules (src/system/release.ts).
    await mkdir(compiledDir, { recursive: true });
    await copyFile(join(rootDir, 'package.json'), join(compiledDir, 'package.json'));
    log(`compiled bench/servers to ${compiledDir} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  })();
  return compiled;
}
