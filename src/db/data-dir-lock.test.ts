import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DataDirectoryLockedError, LOCK_FILE, lockDataDirectory } from './data-dir-lock.js';

describe('the PGlite data-directory lock', () => {
  const directories: string[] = [];
  after(async () => {
    for (const directory of directories) await rm(directory, { recursive: true, force: true });
  });
  async function directory(): Promise<string> {
    const path = await mkdtemp(join(tmpdir(), 'eas-lock-'));
    directories.push(path);
    return path;
  }

  test('the lock file holds the owner pid and goes away on release', async () => {
    const dir = await directory();
    const lock = await lockDataDirectory(dir);
    assert.equal((await readFile(join(dir, LOCK_FILE), 'utf8')).trim(), String(process.pid));
    await lock.release();
    await assert.rejects(stat(join(dir, LOCK_FILE)), { code: 'ENOENT' });
  });

  test('a lock held by a running process refuses, naming the directory', async () => {
    const dir = await directory();
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      await writeFile(join(dir, LOCK_FILE), `${holder.pid}\n`);
      await assert.rejects(lockDataDirectory(dir), (error: unknown) => {
        assert.ok(error instanceof DataDirectoryLockedError);
        assert.ok(error.message.includes(dir), error.message);
        assert.ok(error.message.includes(String(holder.pid)), error.message);
        return true;
      });
      assert.equal((await readFile(join(dir, LOCK_FILE), 'utf8')).trim(), String(holder.pid));
    } finally {
      holder.kill('SIGKILL');
    }
  });

  test('a stale lock (its process is gone) is taken over', async () => {
    const dir = await directory();
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await once(gone, 'exit');
    await writeFile(join(dir, LOCK_FILE), `${gone.pid}\n`);
    const lock = await lockDataDirectory(dir);
    assert.equal((await readFile(join(dir, LOCK_FILE), 'utf8')).trim(), String(process.pid));
    await lock.release();
  });

  test('an unreadable lock file is stale too', async () => {
    const dir = await directory();
    await writeFile(join(dir, LOCK_FILE), '');
    const lock = await lockDataDirectory(dir);
    await lock.release();
  });
});
