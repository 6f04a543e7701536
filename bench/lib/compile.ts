import { execFile } from 'node:child_process';
import { copyFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The checkout this runner belongs to. */
export const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where this checkout's compiled servers and modules go (`.cache/bench/<path of the source>.js`). */
export const compiledDir = join(rootDir, '.cache', 'bench');

const compiled = new Map<string, Promise<void>>();

/** Where the compiled servers of a checkout go: `.cache/bench/bench/servers/<name>.js`, its modules beside them. */
export function compiledServersDirOf(root: string = rootDir): string {
  return join(root, '.cache', 'bench', 'bench', 'servers');
}

/**
 * Compiles bench/servers/ and what they import (the service's sources) to JavaScript once per run, so that every
 * server child runs under plain `node` like a production process: no transpiling loader in the measured processes.
 * Incremental: a run after an unchanged one takes a few seconds. `root` names another checkout of the project (an
 * earlier release, bench/README.md "Release"), compiled with its own settings into its own `.cache/bench`.
 */
export function compileServers(log: (message: string) => void, root: string = rootDir): Promise<void> {
  let compiling = compiled.get(root);
  if (!compiling) {
    compiling = compileTree(log, root);
    compiled.set(root, compiling);
  }
  return compiling;
}

async function compileTree(log: (message: string) => void, root: string): Promise<void> {
  const started = Date.now();
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', join(root, 'bench', 'tsconfig.servers.json')], {
    cwd: root,
  }).catch((error: unknown) => {
    const output = (error as { stdout?: string }).stdout ?? '';
    throw new Error(`compiling bench/servers of ${root} failed:\n${output}`, { cause: error });
  });
  // The service reads its version from the package.json two levels above its modules (src/system/release.ts).
  const outDir = join(root, '.cache', 'bench');
  await mkdir(outDir, { recursive: true });
  await copyFile(join(root, 'package.json'), join(outDir, 'package.json'));
  log(`compiled bench/servers to ${outDir} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
