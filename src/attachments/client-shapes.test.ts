import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * Attachments and work logs in the shapes the clients send beside the `doclinks` address (docs/compatibility.md,
 * "Attachments", "Work logs"): a parent MERGE that adds a work log and an attachment at once, `doclinks` entries in
 * BULK elements, and `oslc.select=doclinks{...}` on the parent.
 */
let ctx: TestApp;
const admin = maxauth('MAXADMIN');
const merge = { 'x-method-override': 'PATCH', patchtype: 'MERGE' };

before(async () => {
  ctx = await startTestApp();
});
after(async () => ctx.close());

const send = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  ctx.app.inject({
    method,
    url,
    headers: { ...admin, ...headers },
    ...(payload !== undefined && { payload: payload as object }),
  });

const pathOf = (href: string): string => new URL(href).pathname;

async function created(url: string, body: unknown): Promise<string> {
  const response = await send('POST', url, body);
  assert.equal(response.statusCode, 201, response.body);
  return pathOf(String(response.headers.location));
}

/** The attachments of a record as its `doclinks` address lists them: file name and content. */
async function attachments(href: string): Promise<Array<[unknown, string]>> {
  const listed = await send('GET', `${href}/doclinks?lean=1&inlinedoc=1`);
  assert.equal(listed.statusCode, 200, listed.body);
  return (json(listed).member ?? [])
    .map((member): [unknown, string] => [
      (member.describedBy as Record<string, unknown>).fileName,
      String(member.documentdata),
    ])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}

describe('a parent MERGE with a work log and an attachment', () => {
  test('both are added in the one request; the logs and attachments the record held are kept', async () => {
    const first = randomBytes(700).toString('base64');
    const wo = await created('/maximo/api/os/mxapiwodetail?lean=1', {
      siteid: 'BEDFORD',
      description: 'Leaking valve',
      worklog: [{ description: 'Reported', logtype: 'CLIENTNOTE' }],
      doclinks: [{ urltype: 'FILE', doctype: 'Attachments', urlname: 'before.jpg', documentdata: first }],
    });
    const photo = randomBytes(3_000).toString('base64');
    // The shape IBM's Python client sends (update_resource: PATCH override, patchtype MERGE, properties).
    const merged = await send(
      'POST',
      `${wo}?lean=1`,
      {
        description: 'Leaking valve, repaired',
        worklog: [
          { description: 'Valve replaced', logtype: 'WORK', description_longdescription: 'New seal.' },
        ],
        doclinks: [
          {
            urltype: 'FILE',
            doctype: 'Attachments',
            urlname: 'after.jpg',
            description: 'After the repair',
            documentdata: photo,
          },
        ],
      },
      { ...merge, properties: 'wonum,description,worklog{description,logtype,createby}' },
    );
    assert.equal(merged.statusCode, 200, merged.body);
    const answer = json(merged);
    assert.equal(answer.description, 'Leaking valve, repaired');
    assert.deepEqual(
      ((answer.worklog as Array<Record<string, unknown>>) ?? [])
        .map((log) => [log.description, log.logtype, log.createby])
        .sort(),
      [
        ['Reported', 'CLIENTNOTE', 'MAXADMIN'],
        ['Valve replaced', 'WORK', 'MAXADMIN'],
      ],
    );
    assert.deepEqual(await attachments(wo), [
      ['after.jpg', photo],
      ['before.jpg', first],
    ]);
  });
});

describe('doclinks in BULK elements', () => {
  for (const allornothing of [false, true]) {
    test(`written as in a single create or update${allornothing ? ' (allornothing)' : ''}`, async () => {
      const asset = await created('/maximo/api/os/mxapiasset?lean=1', {
        assetnum: `BULKATT${allornothing ? 2 : 1}`,
        siteid: 'BEDFORD',
      });
      const manual = randomBytes(900).toString('base64');
      const drawing = randomBytes(1_200).toString('base64');
      const bulk = await send(
        'POST',
        '/maximo/api/os/mxapiasset?lean=1',
        [
          {
            assetnum: `BULKATT${allornothing ? 4 : 3}`,
            siteid: 'BEDFORD',
            description: 'Created with a manual',
            doclinks: [{ urltype: 'FILE', urlname: 'manual.pdf', documentdata: manual }],
          },
          {
            _data: { doclinks: [{ urltype: 'FILE', urlname: 'drawing.dwg', documentdata: drawing }] },
            _meta: { method: 'MERGE', uri: asset },
          },
        ],
        { 'x-method-override': 'BULK', ...(allornothing && { allornothing: '1' }) },
      );
      assert.equal(bulk.statusCode, 200, bulk.body);
      const answers = JSON.parse(bulk.body) as Array<{
        _responsemeta: { status: string; Location?: string };
      }>;
      assert.deepEqual(
        answers.map((answer) => answer._responsemeta.status),
        ['201', '204'],
      );
      assert.deepEqual(await attachments(pathOf(answers[0]!._responsemeta.Location!)), [
        ['manual.pdf', manual],
      ]);
      assert.deepEqual(await attachments(asset), [['drawing.dwg', drawing]]);
    });
  }

  test('an element whose doclinks entry is refused fails alone, leaving neither its record nor an attachment', async () => {
    const bulk = await send(
      'POST',
      '/maximo/api/os/mxapiasset?lean=1',
      [
        { assetnum: 'BULKATT5', siteid: 'BEDFORD', doclinks: [{ urlname: 'empty.txt' }] },
        { assetnum: 'BULKATT6', siteid: 'BEDFORD' },
      ],
      { 'x-method-override': 'BULK' },
    );
    assert.equal(bulk.statusCode, 200, bulk.body);
    const answers = JSON.parse(bulk.body) as Array<{
      _responsemeta: { status: string };
      _responsedata?: { Error?: { reasonCode?: string } };
    }>;
    assert.deepEqual(
      answers.map((answer) => answer._responsemeta.status),
      ['400', '201'],
    );
    assert.equal(answers[0]!._responsedata?.Error?.reasonCode, 'EAS0004E');
    const found = await send(
      'GET',
      `/maximo/api/os/mxapiasset?lean=1&oslc.select=assetnum&oslc.where=${encodeURIComponent('assetnum in ["BULKATT5","BULKATT6"]')}`,
    );
    assert.deepEqual(
      (json(found).member ?? []).map((member) => member.assetnum),
      ['BULKATT6'],
    );
  });
});
