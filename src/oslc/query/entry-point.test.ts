import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const SRC = resolve(import.meta.dirname, '../..');
const QUERY = resolve(import.meta.dirname);

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return Promise.resolve(entry.name.endsWith('.ts') ? [path] : []);
    }),
  );
  return nested.flat();
}

/** The engine's table types: a leaf the database type assembles (src/db/schema.ts), which index.ts cannot be. */
const TABLES = join(QUERY, 'tables.js');

test('code outside the query engine imports it only through query/index.ts (and the schema its tables)', async () => {
  const offenders: string[] = [];
  for (const file of await sourceFiles(SRC)) {
    if (file.startsWith(`${QUERY}/`)) continue;
    const text = await readFile(file, 'utf8');
    for (const [, target] of text.matchAll(/from '([^']+)'/g)) {
      if (!target!.startsWith('.')) continue;
      const path = resolve(join(file, '..'), target!);
      const schemaTables = path === TABLES && relative(SRC, file) === join('db', 'schema.ts');
      if (path.startsWith(`${QUERY}/`) && path !== join(QUERY, 'index.js') && !schemaTables) {
        offenders.push(`${relative(SRC, file)} imports ${target}`);
      }
    }
  }
  assert.deepEqual(offenders, []);
});
