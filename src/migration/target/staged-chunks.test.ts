import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { builtPackage } from '../../../test/helpers/migration-packages.js';
import { StagedChunks, type ParsedChunk } from './staged-chunks.js';

/**
 * A deploy reads and parses its next staged chunk while the database writes the one before
 * (docs/migration.md, "Deploy: speed"): the chunks must come as an unhurried read gives them, and a chunk that cannot
 * be read must fail at its own turn, never while the chunk before it is still being written.
 */

const LINES = 2500; // three staged chunks: 1,000, 1,000 and 500 lines

const assetLine = (index: number) => ({
  assetnum: `CHUNK${String(index).padStart(5, '0')}`,
  siteid: 'BEDFORD',
  description: `Staged ${index}`,
});

async function takeAll(reader: StagedChunks, ahead: boolean): Promise<ParsedChunk[]> {
  const chunks: ParsedChunk[] = [];
  for (let chunk = await reader.take(); chunk; chunk = await reader.take()) {
    if (ahead) reader.readAhead();
    chunks.push(chunk);
  }
  return chunks;
}

describe('the staged chunks of a deploy, read ahead', () => {
  let app: TestApp;
  let dmpackageid: number;

  before(async () => {
    app = await startTestApp();
    const lines = Array.from({ length: LINES }, (_, index) => assetLine(index));
    const uploaded = await app.app.inject({
      method: 'POST',
      url: '/maximo/oslc/dm/upload?filename=CHUNKS.zip',
      headers: { ...maxauth('MAXADMIN'), 'content-type': 'application/zip' },
      payload: await builtPackage('CHUNKS', [{ objectstructure: 'MXAPIASSET', lines }], []),
    });
    assert.equal(uploaded.statusCode, 200, uploaded.body);
    dmpackageid = json(uploaded).dmpackageid as number;
  });
  after(async () => {
    await app?.close();
  });

  test('come in order and parsed, the same whether the next is read ahead or not', async () => {
    const db = app.storage.db;
    const plain = await takeAll(new StagedChunks(db, dmpackageid, 1), false);
    const ahead = await takeAll(new StagedChunks(db, dmpackageid, 1), true);
    assert.deepEqual(
      plain.map((chunk) => chunk.lines.length),
      [1000, 1000, 500],
    );
    assert.deepEqual(ahead, plain);
    const bodies = plain.flatMap((chunk) => chunk.bodies);
    assert.deepEqual(bodies[0], assetLine(0));
    assert.deepEqual(bodies.at(-1), assetLine(LINES - 1));
    assert.deepEqual(
      plain.flatMap((chunk) => chunk.lines),
      bodies.map((body) => JSON.stringify(body)),
    );
  });

  test('a chunk that cannot be parsed fails when it is taken, not when it is read ahead', async () => {
    const db = app.storage.db;
    await sql`update dmpkgstaging set content = content || ${'\n{"assetnum": '}
      where dmpackageid = ${dmpackageid} and type = 'CFGDATA' and chunk = 1`.execute(db);
    try {
      const reader = new StagedChunks(db, dmpackageid, 1);
      const first = await reader.take();
      assert.equal(first?.lines.length, 1000);
      // Read ahead while the first chunk would be written: its failure waits for its turn.
      reader.readAhead();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await assert.rejects(reader.take(), SyntaxError);
      await reader.abandon();
    } finally {
      await sql`update dmpkgstaging set content = left(content, length(content) - ${'\n{"assetnum": '.length})
        where dmpackageid = ${dmpackageid} and type = 'CFGDATA' and chunk = 1`.execute(db);
    }
    const restored = await takeAll(new StagedChunks(db, dmpackageid, 1), true);
    assert.equal(restored.flatMap((chunk) => chunk.bodies).length, LINES);
  });

  test('abandoned while a read is under way, the read ends first and nothing more is read', async () => {
    const reader = new StagedChunks(app.storage.db, dmpackageid, 1);
    assert.ok(await reader.take());
    reader.readAhead();
    await reader.abandon();
    assert.equal(await reader.take(), undefined);
  });
});
