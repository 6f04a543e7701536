import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';

/** Debian's Chromium (never a downloaded build), started headless as this machine's closed network needs it. */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether a browser test file can run. CI must have Chromium (.ci/run installs it): there a missing one fails the
 * file; elsewhere the file counts as skipped by the runner's own skip, never as passed.
 */
export function chromiumInstalled(what: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true')
    test('chromium is installed', () => {
      assert.fail(`${CHROMIUM} is missing: the browser test needs the Debian package chromium (see .ci/run)`);
    });
  else test(what, { skip: `${CHROMIUM} is not installed (apt-get install chromium)` });
  return false;
}
