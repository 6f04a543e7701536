import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { keepTickObjectShape, keptTickObject } from './tick-object-shape.js';

const run = promisify(execFile);

describe('keepTickObjectShape', () => {
  it('keeps a process.nextTick queue entry once the tick has run', async () => {
    keepTickObjectShape();
    await new Promise((resolve) => setImmediate(resolve));
    const kept = keptTickObject() as Record<string, unknown> | undefined;
    assert.ok(kept, 'an entry is kept');
    assert.equal(typeof kept.callback, 'function');
    const symbols = Object.getOwnPropertySymbols(kept).map((symbol) => symbol.description);
    assert.ok(symbols.includes('async_id_symbol'), `the entry carries its async id (${symbols.join(', ')})`);
  });

  it('later entries, after many ticks and a full collection, still have the kept entry’s shape', async () => {
    // V8's %HaveSameMap compares the hidden classes; it needs --allow-natives-syntax, so in a child process.
    const script = `
      import { executionAsyncResource } from 'node:async_hooks';
      import { keepTickObjectShape, keptTickObject } from './src/util/tick-object-shape.ts';
      keepTickObjectShape();
      await new Promise((resolve) => setImmediate(resolve));
      for (let tick = 0; tick < 50000; tick++) await new Promise((resolve) => process.nextTick(resolve));
      globalThis.gc();
      let later;
      process.nextTick(() => { later = executionAsyncResource(); });
      await new Promise((resolve) => setImmediate(resolve));
      process.stdout.write(JSON.stringify({ sameShape: %HaveSameMap(keptTickObject(), later) }));
    `;
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script],
      { cwd: new URL('../..', import.meta.url) },
    );
    assert.deepEqual(JSON.parse(stdout), { sameShape: true });
  });
});
