import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The source tree of an earlier release, from this repository's history (`git archive` of `commit`), to run its
 * `src/server.ts` beside this tree's (the rolling upgrade tests). Kept under `.cache/releases/<commit>` (ignored by
 * git), so it is extracted once; it uses this tree's `node_modules` (the releases named by the tests share its
 * dependencies), so nothing is installed.
 */
export async function releaseTree(commit: string): Promise<string> {
  const tree = join(root, '.cache', 'releases', commit);
  const complete = join(tree, '.complete');
  if (existsSync(complete)) return tree;
  const partial = `${tree}.${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  const archive = spawn('git', ['archive', '--format=tar', commit], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tar = spawn('tar', ['-x', '-C', partial], { stdio: ['pipe', 'ignore', 'pipe'] });
  archive.stdout.pipe(tar.stdin);
  let errors = '';
  archive.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  tar.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const [[archiveCode], [tarCode]] = await Promise.all([once(archive, 'exit'), once(tar, 'exit')]);
  if (archiveCode !== 0 || tarCode !== 0) throw new Error(`git archive ${commit} failed: ${errors}`);
  await symlink(join(root, 'node_modules'), join(partial, 'node_modules'), 'dir');
  await writeFile(join(partial, '.complete'), `${commit}\n`);
  // Two test files extracting at once: the first rename wins, the other's copy is dropped.
  await rename(partial, tree).catch(() => rm(partial, { recursive: true, force: true }));
  return tree;
}
