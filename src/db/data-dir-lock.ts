import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Name of the lock file in a PGlite data directory; it holds the owner's process id. */
export const LOCK_FILE = 'eas.lock';

/**
 * A second process on a PGlite directory would open its own copy of the same files, and each would acknowledge
 * writes the other later overwrites (docs/operations.md): start-up stops with this instead.
 */
export class DataDirectoryLockedError extends Error {
  constructor(
    readonly directory: string,
    readonly ownerPid: number,
  ) {
    super(
      `The data directory ${directory} is in use by another process (pid ${ownerPid}): only one process may ` +
        `open a PGlite data directory. Stop that process, or use PostgreSQL (DATABASE_URL) to run several.`,
    );
  }
}

export interface DataDirectoryLock {
  path: string;
  release(): Promise<void>;
}

/** Whether a process with this id runs (on this machine). EPERM: it runs, as another user. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseOwner(text: string): number | undefined {
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

async function readOwner(path: string): Promise<number | undefined> {
  try {
    return parseOwner(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Takes the directory's lock: creates the lock file with this process's id, or takes over one whose process no
 * longer runs (a crash, `kill -9`, a power cut). A lock holding this process's own id is stale too: a container
 * restarted with the same pid. The file is written aside and linked (or renamed) into place, so a reader never
 * sees it empty.
 */
export async function lockDataDirectory(directory: string): Promise<DataDirectoryLock> {
  await mkdir(directory, { recursive: true });
  const path = join(directory, LOCK_FILE);
  const temporary = join(directory, `${LOCK_FILE}.${process.pid}.${randomBytes(4).toString('hex')}`);
  await writeFile(temporary, `${process.pid}\n`);
  try {
    try {
      await link(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = await readOwner(path);
      if (owner !== undefined && owner !== process.pid && isAlive(owner)) {
        throw new DataDirectoryLockedError(directory, owner);
      }
      await rename(temporary, path);
      // Two processes taking over the same stale lock at once: the last rename wins, and the other sees it.
      const winner = await readOwner(path);
      if (winner !== process.pid) throw new DataDirectoryLockedError(directory, winner ?? 0);
    }
  } finally {
    await unlink(temporary).catch(() => undefined);
  }

  const ownedByUs = () => {
    try {
      return parseOwner(readFileSync(path, 'utf8')) === process.pid;
    } catch {
      return false;
    }
  };
  // A process that ends without closing its storage (process.exit) still leaves the directory free.
  const onExit = () => {
    if (ownedByUs()) unlinkSync(path);
  };
  process.once('exit', onExit);
  return {
    path,
    async release() {
      process.off('exit', onExit);
      if (ownedByUs()) await unlink(path).catch(() => undefined);
    },
  };
}
