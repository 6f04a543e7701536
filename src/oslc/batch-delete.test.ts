import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { countStatements, settleBackgroundWrites } from '../../test/helpers/statements.js';
import type { UserProfile } from '../auth/types.js';
import { errors, MaximoError } from '../errors.js';
import type { StructureNode } from '../metadata/registry.js';
import type { BatchOutcome, BatchRecord } from './batch-writer.js';

/**
 * Deletions of a batch, set-wise (src/oslc/batch-delete.ts): many stored records and their child collections go
 * with a number of statements that does not grow with the records, while rules, observers, refusals and the order of
 * the batch's records behave as deleting them one by one did.
 */

const admin = maxauth('MAXADMIN');

describe('set-wise deletions of a batch', () => {
  let t: TestApp;
  let user: UserProfile;

  before(async () => {
    t = await startTestApp();
    // The audit trail's sealing sweep (a transaction every 5 s) would be counted among a batch's statements when a
    // loaded machine makes the batch slow: this file seals when it settles the background writes, not on a timer.
    await t.services.audit.close();
    const profile = await t.services.auth.profile('MAXADMIN');
    assert.ok(profile);
    user = profile;
  });

  after(() => t.close());

  const root = (structure: string): StructureNode => {
    const found = t.services.resources.findObjectStructure(structure);
    assert.ok(found, structure);
    return found.root;
  };

  /** One batch of records in one transaction of the write path; a refusal is answered as `refused <index>`. */
  const sync = (node: StructureNode, records: BatchRecord[]): Promise<BatchOutcome[]> =>
    t.services.resources.writeWith(
      user,
      {},
      (writer) =>
        writer.batch().sync(node, records, false, (index, error) => {
          error.message = `refused ${index}: ${error.message}`;
          return error;
        }),
      () => ({ structure: t.services.resources.findObjectStructure('MXAPIASSET')!, uniqueId: 0 }),
    );

  const asset = (assetnum: string, deleted = false): BatchRecord => ({
    body: {
      assetnum,
      siteid: 'BEDFORD',
      description: `Asset ${assetnum}`,
      assetspec: [{ assetattrid: 'A' }, { assetattrid: 'B' }],
    },
    keys: [assetnum, 'BEDFORD'],
    delete: deleted,
  });

  const workOrder = (wonum: string, deleted = false): BatchRecord => ({
    body: { wonum, siteid: 'BEDFORD', description: `Work ${wonum}`, woactivity: [{ description: 'Step' }] },
    keys: [wonum, 'BEDFORD'],
    delete: deleted,
  });

  const count = async (query: string): Promise<number> => {
    const result = await sql<{ n: string }>`${sql.raw(query)}`.execute(t.storage.db);
    return Number(result.rows[0]?.n);
  };

  const assetnums = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, index) => `${prefix}${String(index).padStart(4, '0')}`);

  /** Adds `n` assets with two specifications each, deletes them in one batch, and answers the statements sent. */
  const addThenDelete = async (prefix: string, n: number): Promise<string[]> => {
    await sync(
      root('MXAPIASSET'),
      assetnums(prefix, n).map((assetnum) => asset(assetnum)),
    );
    assert.equal(await count(`select count(*) as n from assetspec where assetnum like '${prefix}%'`), 2 * n);
    // The logins' bookkeeping and the audit trail's sealing, due after the requests so far, would be counted too.
    await settleBackgroundWrites(t.services);
    const { result, statements } = await countStatements(() =>
      sync(
        root('MXAPIASSET'),
        assetnums(prefix, n).map((assetnum) => asset(assetnum, true)),
      ),
    );
    assert.deepEqual(result, Array<BatchOutcome>(n).fill('deleted'));
    assert.equal(await count(`select count(*) as n from asset where assetnum like '${prefix}%'`), 0);
    assert.equal(await count(`select count(*) as n from assetspec where assetnum like '${prefix}%'`), 0);
    return statements;
  };

  test('deleting many assets removes them and their children, in as many statements as deleting a few', async () => {
    const few = await addThenDelete('BDA', 3);
    const many = await addThenDelete('BDB', 60);
    assert.equal(many.length, few.length, many.join('\n'));
    assert.ok(
      many.filter((text) => /^\s*delete/i.test(text)).length <= 1 + root('MXAPIASSET').children.length,
      'one delete per table of the structure (assets, meters, specifications)',
    );
    // No observer takes part in these deletions: the records' rows come from the batch's read, not the delete.
    const deletes = many.filter((text) => /^\s*delete/i.test(text));
    assert.ok(deletes.length > 0);
    for (const text of deletes) assert.doesNotMatch(text, /returning \*/i, text);
    assert.ok(
      deletes.some((text) => /^\s*delete from "asset"[\s\S]*returning "assetuid"$/i.test(text.trim())),
      deletes.join('\n'),
    );
  });

  test("the records' delete checks the tables referring to them by index, and the transaction plans as before after it", async () => {
    const assetnumsAdded = assetnums('BDS', 3);
    await sync(
      root('MXAPIASSET'),
      assetnumsAdded.map((assetnum) => asset(assetnum)),
    );
    const { result, statements } = await countStatements(() =>
      t.services.resources.writeWith(
        user,
        {},
        async (writer) => {
          const outcomes = await writer.batch().sync(
            root('MXAPIASSET'),
            assetnumsAdded.map((assetnum) => asset(assetnum, true)),
            false,
            (_index, error) => error,
          );
          const shown = await sql<{ enable_seqscan: string }>`show enable_seqscan`.execute(writer.db);
          return { outcomes, seqscan: shown.rows[0]?.enable_seqscan };
        },
        () => ({ structure: t.services.resources.findObjectStructure('MXAPIASSET')!, uniqueId: 0 }),
      ),
    );
    assert.deepEqual(result.outcomes, ['deleted', 'deleted', 'deleted']);
    assert.equal(result.seqscan, 'on');
    const texts = statements.map((text) => text.trim());
    const at = texts.findIndex((text) => /^delete from "asset"/i.test(text));
    assert.ok(at > 0, texts.join('\n'));
    assert.equal(texts[at - 1], 'set local enable_seqscan = off');
    assert.equal(texts[at + 1], 'set local enable_seqscan = default');
    assert.equal(await count(`select count(*) as n from asset where assetnum like 'BDS%'`), 0);
  });

  test('work orders and their activities (a child collection of the same table) go together', async () => {
    const wonums = assetnums('BDW', 20);
    await sync(
      root('MXAPIWODETAIL'),
      wonums.map((wonum) => workOrder(wonum)),
    );
    assert.equal(await count(`select count(*) as n from workorder where parent like 'BDW%'`), 20);
    await sync(
      root('MXAPIWODETAIL'),
      wonums.map((wonum) => workOrder(wonum, true)),
    );
    assert.equal(
      await count(`select count(*) as n from workorder where wonum like 'BDW%' or parent like 'BDW%'`),
      0,
    );
  });

  test('CHANGE tracking records each deleted record', async () => {
    const post = (url: string, payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url: `/maximo/oslc${url}`,
        headers: { ...admin, 'content-type': 'application/json' },
        payload: payload as never,
      });
    const defined = await post('/os/mxapidmpkgdef', {
      pkgdefname: 'BDCHG',
      type: 'CHANGE',
      status: 'APPR',
      dmpkgdefcontent: [{ objectstructure: 'MXAPIASSET', cfgdataorder: 1 }],
    });
    assert.equal(defined.statusCode, 201, defined.body);
    assert.equal(json(await post('/dm/toggleactive', { pkgdefname: 'BDCHG' })).active, true);
    const names = assetnums('BDC', 5);
    await sync(
      root('MXAPIASSET'),
      names.map((assetnum) => asset(assetnum)),
    );
    const { statements } = await countStatements(() =>
      sync(
        root('MXAPIASSET'),
        names.map((assetnum) => asset(assetnum, true)),
      ),
    );
    // CHANGE tracking observes deletions: the records' delete answers their rows as they were, for the observer.
    assert.ok(
      statements.some((text) => /^\s*delete from "asset"[\s\S]*returning \*$/i.test(text.trim())),
      statements.join('\n'),
    );
    const deletions = await sql<{ keyvalues: string }>`select keyvalues from dmpkgchange
      where pkgdefname = 'BDCHG' and operation = 'delete' order by keyvalues`.execute(t.storage.db);
    assert.deepEqual(
      deletions.rows.map((row) => JSON.parse(row.keyvalues) as unknown),
      names.map((assetnum) => [assetnum, 'BEDFORD']),
    );
  });

  test('a record still referenced is refused as before, named by its index, and nothing is deleted', async () => {
    const names = assetnums('BDR', 4);
    await sync(
      root('MXAPIASSET'),
      names.map((assetnum) => asset(assetnum)),
    );
    const wo = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiwodetail?lean=1',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: { wonum: 'BDRWO', siteid: 'BEDFORD', assetnum: names[2] },
    });
    assert.equal(wo.statusCode, 201, wo.body);
    await assert.rejects(
      sync(
        root('MXAPIASSET'),
        names.map((assetnum) => asset(assetnum, true)),
      ),
      (error: unknown) => {
        assert.ok(error instanceof MaximoError);
        assert.equal(error.reasonCode, 'EAS0013E');
        assert.match(error.message, /^refused 2: /);
        return true;
      },
    );
    assert.equal(await count(`select count(*) as n from asset where assetnum like 'BDR%'`), 4);
    assert.equal(await count(`select count(*) as n from assetspec where assetnum like 'BDR%'`), 8);
  });

  test("an object's beforeDelete rule still sees and refuses each row, named by its index", async () => {
    const stored = await sql<{ propname: string }>`select propname from maxprop limit 1`.execute(
      t.storage.db,
    );
    const propname = stored.rows[0]?.propname;
    assert.ok(propname);
    const deletion = (name: string): BatchRecord => ({
      body: { propname: name },
      keys: [name],
      delete: true,
    });
    await assert.rejects(
      sync(root('MXAPIPROPERTY'), [deletion('BD.NO.SUCH.PROPERTY'), deletion(propname)]),
      (error: unknown) => {
        assert.ok(error instanceof MaximoError);
        assert.equal(error.reasonCode, errors.actionNotAllowed('delete', 'MAXPROP').reasonCode);
        assert.match(error.message, /^refused 1: /);
        return true;
      },
    );
    assert.equal(await count(`select count(*) as n from maxprop where propname = '${propname}'`), 1);
  });

  test('a key deleted and added again in the same batch ends up added', async () => {
    await sync(root('MXAPIASSET'), [asset('BDK1'), asset('BDK2')]);
    const readded = { ...asset('BDK1'), body: { ...asset('BDK1').body, description: 'Again' } };
    const outcomes = await sync(root('MXAPIASSET'), [asset('BDK1', true), asset('BDK2', true), readded]);
    assert.deepEqual(outcomes, ['deleted', 'deleted', 'added']);
    const rows = await sql<{
      assetnum: string;
      description: string;
    }>`select assetnum, description from asset where assetnum like 'BDK%'`.execute(t.storage.db);
    assert.deepEqual(rows.rows, [{ assetnum: 'BDK1', description: 'Again' }]);
    assert.equal(await count(`select count(*) as n from assetspec where assetnum like 'BDK%'`), 2);
  });
});
