import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

/*
 * A first start on an empty PGlite data directory spends most of its time in initdb (docs/startup.md, "First
 * start"). `npm run build` runs initdb once and leaves the empty cluster in dist/; a first start copies it instead.
 * The cluster holds PostgreSQL's catalog only: no schema, no data, no key. It is used only when the PGlite that
 * made it is the one installed; otherwise PGlite runs initdb as it would without it.
 */

/** Beside dist/bundle/ and dist/db/ alike; from the sources (tsx) it does not exist and initdb runs. */
export const TEMPLATE_DIR = fileURLToPath(new URL('../pgdata-template/', import.meta.url));

/** Written last by the build: which PGlite made the cluster. */
const STAMP_FILE = 'eas-template.json';
/** PGlite reads a directory with this file as an existing cluster, so it is copied last. */
const VERSION_FILE = 'PG_VERSION';

interface Stamp {
  pglite: string;
}

/** The installed PGlite's version, from its package.json (its exports do not list it, its entry sits in dist/). */
export async function installedPgliteVersion(): Promise<string> {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const manifest = JSON.parse(await readFile(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

async function readStamp(templateDir: string): Promise<Stamp | undefined> {
  try {
    return JSON.parse(await readFile(join(templateDir, STAMP_FILE), 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
}

/**
 * Makes the template: initdb in a scratch directory, one clean start and stop, then the stamp, then the rename into
 * place. Nothing to do when the template was made by the installed PGlite. Returns whether it made one.
 */
export async function buildClusterTemplate(templateDir = TEMPLATE_DIR): Promise<boolean> {
  const version = await installedPgliteVersion();
  if ((await readStamp(templateDir))?.pglite === version) return false;
  const scratch = `${templateDir.replace(/\/$/, '')}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    const pglite = new PGlite({ dataDir: scratch });
    await pglite.waitReady;
    await pglite.close();
    const stamp: Stamp = { pglite: version };
    await writeFile(join(scratch, STAMP_FILE), `${JSON.stringify(stamp)}\n`);
    await rm(templateDir, { recursive: true, force: true });
    await rename(scratch, templateDir);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return true;
}

/**
 * Copies the template into `dataDir` when it holds no cluster yet and the template was made by the installed PGlite;
 * returns whether it did. The caller holds the data directory's lock. Every file is flushed to disk before
 * PG_VERSION is written: until then PGlite sees no cluster, and a copy cut short is made again at the next start.
 */
export async function copyClusterTemplate(dataDir: string, templateDir = TEMPLATE_DIR): Promise<boolean> {
  if (existsSync(join(dataDir, VERSION_FILE))) return false;
  const stamp = await readStamp(templateDir);
  if (stamp === undefined || stamp.pglite !== (await installedPgliteVersion())) return false;
  const skipped = new Set([join(templateDir, STAMP_FILE), join(templateDir, VERSION_FILE)]);
  await mkdir(dataDir, { recursive: true });
  await cp(templateDir, dataDir, {
    recursive: true,
    force: true,
    preserveTimestamps: true,
    filter: (source) => !skipped.has(source),
  });
  await flushTree(dataDir);
  await copyFile(join(templateDir, VERSION_FILE), join(dataDir, VERSION_FILE));
  await flush(join(dataDir, VERSION_FILE));
  await flush(dataDir);
  return true;
}

/** fsync of one file or directory. */
export async function flush(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync of every file and directory under `directory`, a few at a time (one descriptor each), the directory last. */
export async function flushTree(directory: string): Promise<void> {
  const paths: string[] = [];
  const walk = async (path: string): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      if (entry.isDirectory()) await walk(join(path, entry.name));
      else paths.push(join(path, entry.name));
    }
    paths.push(path);
  };
  await walk(directory);
  for (let start = 0; start < paths.length; start += FLUSHES_AT_ONCE) {
    await Promise.all(paths.slice(start, start + FLUSHES_AT_ONCE).map(flush));
  }
}

const FLUSHES_AT_ONCE = 32;
