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

describe('oslc.select=doclinks{...} on the parent structure', () => {
  let asset: string;
  before(async () => {
    asset = await created('/maximo/api/os/mxapiasset?lean=1', {
      assetnum: 'SELATT1',
      siteid: 'BEDFORD',
      doclinks: [
        { urlname: 'manual.pdf', description: 'Manual', documentdata: randomBytes(400).toString('base64') },
        { urlname: 'wiring.png', description: 'Wiring', documentdata: randomBytes(300).toString('base64') },
      ],
    });
    await created('/maximo/api/os/mxapiasset?lean=1', { assetnum: 'SELATT2', siteid: 'BEDFORD' });
  });

  test('a member carries its attachments inline, as its doclinks address lists them', async () => {
    const read = await send('GET', `${asset}?lean=1&oslc.select=assetnum,doclinks{*}`);
    assert.equal(read.statusCode, 200, read.body);
    const listed = json(await send('GET', `${asset}/doclinks?lean=1`));
    const inline = json(read).doclinks as { href: string; member: Array<{ href: string }> };
    assert.deepEqual(inline, listed);
    assert.equal(inline.member.length, 2);
    const content = await send('GET', pathOf(inline.member[0]!.href));
    assert.equal(content.statusCode, 200);
  });

  test('a collection query carries each member its own, an empty list for none; namespaced too', async () => {
    const where = encodeURIComponent('assetnum in ["SELATT1","SELATT2"]');
    const read = await send(
      'GET',
      `/maximo/api/os/mxapiasset?lean=1&oslc.select=assetnum,doclinks{*}&oslc.where=${where}&oslc.orderBy=%2Bassetnum`,
    );
    assert.equal(read.statusCode, 200, read.body);
    const members = (json(read).member ?? []) as Array<{ assetnum: string; doclinks: { member: unknown[] } }>;
    assert.deepEqual(
      members.map((member) => [member.assetnum, member.doclinks.member.length]),
      [
        ['SELATT1', 2],
        ['SELATT2', 0],
      ],
    );
    const namespaced = await send(
      'GET',
      `/maximo/oslc/os/mxapiasset?oslc.select=spi:assetnum,spi:doclinks{*}&oslc.where=${encodeURIComponent('spi:assetnum="SELATT1"')}`,
    );
    assert.equal(namespaced.statusCode, 200, namespaced.body);
    const [first] = (json(namespaced)['rdfs:member'] ?? []) as Array<
      Record<string, Record<string, unknown[]>>
    >;
    assert.equal(first?.['spi:doclinks']?.['rdfs:member']?.length, 2);
  });

  test('named attributes narrow each attachment to them', async () => {
    const read = await send('GET', `${asset}?lean=1&oslc.select=doclinks{document,description}`);
    assert.equal(read.statusCode, 200, read.body);
    const inline = json(read).doclinks as { member: Array<{ describedBy: Record<string, unknown> }> };
    assert.deepEqual(
      inline.member.map((member) => Object.keys(member.describedBy).sort()),
      [
        ['description', 'fileName', 'href'],
        ['description', 'fileName', 'href'],
      ],
    );
    assert.deepEqual(inline.member.map((member) => member.describedBy.description).sort(), [
      'Manual',
      'Wiring',
    ]);
  });

  test('without doclinks in the select, the record carries none', async () => {
    const read = json(await send('GET', `${asset}?lean=1&oslc.select=assetnum`));
    assert.equal(read.doclinks, undefined);
  });
});
