import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The npm name `eas` belongs to an unrelated package: `npx eas` outside a checkout would run it. The package is
 * named so that it can be published, and keeps the `eas` command (README.md, "Command line").
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  bin: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { name: string };

test('the package has a name of its own and keeps the eas command', () => {
  assert.equal(manifest.name, 'enterprise-asset-service');
  assert.notEqual(manifest.name, 'eas', 'the npm name eas belongs to another package');
  assert.equal(lock.name, manifest.name, 'package-lock.json names the same package');
  assert.equal(manifest.bin.eas, 'bin/eas.js');
});
