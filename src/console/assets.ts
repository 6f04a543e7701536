import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One built file of the console, held in memory: the bundle is small and never changes while the process runs. */
export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
  /** Strong validator of the content: browsers revalidate (`no-cache`) and get 304 while the build is the same. */
  etag: string;
}

/** The files `npm run build` writes (web/console, bundled by esbuild), by name. */
const FILES: Readonly<Record<string, string>> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/**
 * Where the build put the console: `dist/public/console`, found from this module whether it runs from `src/`
 * (tsx), from `dist/` (tsc) or from the bundle in `dist/bundle/`.
 */
function builtDirectory(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, '..', 'public', 'console'),
    join(here, '..', '..', 'dist', 'public', 'console'),
  ];
  return candidates.find((candidate) => existsSync(join(candidate, 'app.js')));
}

/** The console's files, or an empty map when the build has not run (the console then answers 404). */
export function loadConsoleAssets(directory = builtDirectory()): ReadonlyMap<string, ConsoleAsset> {
  const assets = new Map<string, ConsoleAsset>();
  if (directory === undefined) return assets;
  for (const [name, contentType] of Object.entries(FILES)) {
    const path = join(directory, name);
    if (!existsSync(path)) continue;
    const body = readFileSync(path);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    assets.set(name, { body, contentType, etag });
  }
  return assets;
}
