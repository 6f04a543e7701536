import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EasClient } from '../client/index.js';
import type { CliStream } from './io.js';
import { uploadProgress } from './migrate-progress.js';

function collector(isTTY: boolean): CliStream & { text: string } {
  return {
    text: '',
    write(chunk: string) {
      this.text += chunk;
    },
    isTTY,
    columns: 120,
  };
}

/** The upload's progress (docs/cli.md, "Progress"): bytes handed to the connection, shown as a bar or lines. */
describe('upload progress', () => {
  test('the client reports each chunk of the file as fetch reads it, and sends every byte', async () => {
    const file = new Uint8Array(200 * 1024).map((_, index) => index % 251);
    let received: Uint8Array | undefined;
    const client = new EasClient({
      baseUrl: 'http://target.invalid/maximo',
      credentials: { scheme: 'apikey', apikey: 'key' },
      fetch: async (_input, init) => {
        received = new Uint8Array(await new Response(init?.body).arrayBuffer());
        return new Response(JSON.stringify({ dmpackageid: 7 }), {
          headers: { 'content-type': 'application/json' },
        });
      },
    });
    const reports: Array<[number, number]> = [];
    const answer = await client.packages.upload('package.zip', file, (sent, total) =>
      reports.push([sent, total]),
    );
    assert.deepEqual(answer, { dmpackageid: 7 });
    assert.deepEqual(received, file);
    const chunk = 64 * 1024;
    assert.deepEqual(reports, [
      [chunk, file.length],
      [2 * chunk, file.length],
      [3 * chunk, file.length],
      [file.length, file.length],
    ]);
  });

  test('without a terminal: the first report and the last as lines, the ones between within 10 s left out', () => {
    const out = collector(false);
    const onSent = uploadProgress(out, false);
    assert.ok(onSent);
    for (const sent of [1000, 2000, 3000, 4000]) onSent(sent, 4000);
    const lines = out.text.trimEnd().split('\n');
    assert.equal(lines.length, 2, out.text);
    assert.match(lines[0]!, /^uploading: 1,000 of 4,000 bytes, [\d,]+ bytes\/s$/);
    assert.match(lines[1]!, /^uploading: 4,000 of 4,000 bytes, [\d,]+ bytes\/s$/);
  });

  test('on a terminal: a bar redrawn on every report, cleared once all is sent; nothing when quiet', () => {
    const out = collector(true);
    const onSent = uploadProgress(out, false);
    assert.ok(onSent);
    for (const sent of [1000, 2000, 4000]) onSent(sent, 4000);
    const frames = out.text.split('\r\u001b[2K').filter((frame) => frame !== '');
    assert.equal(frames.length, 3, JSON.stringify(out.text));
    assert.match(frames[0]!, /^\[#{6}-{18}\] uploading 1,000 of 4,000 bytes/);
    assert.match(frames[2]!, /^\[#{24}\] uploading 4,000 of 4,000 bytes/);
    assert.ok(out.text.endsWith('\r\u001b[2K'), 'the line is cleared at the end');
    assert.equal(uploadProgress(collector(true), true), undefined);
  });
});
