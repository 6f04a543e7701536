import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { readCollectionParams } from './collection-params.js';
import { collectionText, memberText } from './member-text.js';
import type { MemberRecord } from './query/index.js';
import { collectionJson, memberJson, type PageInfo, type ResponseOptions } from './response.js';
import type { StoredValue } from './values.js';

/**
 * The serializer of a selection writes what JSON.stringify wrote of the objects response.ts builds, for any value:
 * checked on members read from the database and then given values that are hard to write (quotes, control
 * characters, unicode and lone surrogates, dates, numbers JSON has no form for), with child collections, in both
 * forms and with every option that changes what a member holds.
 */

const TRICKY_TEXTS = [
  'plain',
  'quote " and \\ backslash',
  'line\nbreak\ttab\u0000nul\u001f',
  'ünïcode ✓ 日本 😀',
  'lone \ud800 surrogate',
  '</script><!--',
  '',
];
const TRICKY_NUMBERS = [0, -0, 1.5, -123456789.125, 1e21, 5e-324, Number.NaN, Number.POSITIVE_INFINITY];
const TRICKY_DATES = [
  new Date('2026-03-04T05:06:07Z'),
  new Date('0999-06-01T00:00:00Z'),
  new Date(Number.NaN),
];

/** `record` with its values replaced by the `n`th tricky value of each attribute's type (nulls too). */
function withTrickyValues(record: MemberRecord, n: number): MemberRecord {
  const values: Record<string, StoredValue> = { ...record.values };
  for (const [name, attribute] of record.node.object.attributes) {
    if (record.node.object.keys.includes(name) || name === record.node.object.uniqueId) continue;
    if (n % 5 === 4) values[name] = null;
    else if (attribute.type === 'DATE' || attribute.type === 'DATETIME')
      values[name] = TRICKY_DATES[n % TRICKY_DATES.length]!;
    else if (attribute.type === 'YORN') values[name] = n % 2 === 0;
    else if (['INTEGER', 'BIGINT', 'DECIMAL', 'AMOUNT'].includes(attribute.type))
      values[name] = TRICKY_NUMBERS[n % TRICKY_NUMBERS.length]!;
    else values[name] = TRICKY_TEXTS[n % TRICKY_TEXTS.length]!;
  }
  const children = new Map(
    [...record.children].map(([name, rows]) => [
      name,
      rows.map((row, index) => withTrickyValues(row, n + index)),
    ]),
  );
  return { ...record, values, children };
}

describe('members written by the serializer of their selection', () => {
  let t: TestApp;
  let records: MemberRecord[];
  let base: Omit<ResponseOptions, 'lean' | 'dropNulls' | 'internalValues' | 'collectionRefs'>;

  before(async () => {
    t = await startTestApp();
    const created = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/os/mxapiasset?lean=1',
      headers: { ...maxauth('MAXADMIN'), 'content-type': 'application/json' },
      payload: {
        assetnum: 'MT-1',
        siteid: 'BEDFORD',
        description: 'with children',
        status: 'OPERATING',
        assetmeter: [{ metername: 'TEMP-F', lastreading: '71' }, { metername: 'PRESSURE' }],
        assetspec: [{ assetattrid: 'WEIGHT', numvalue: 12.5 }],
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const { resources, metadata } = t.services;
    const structure = metadata.findObjectStructure('MXAPIASSET')!;
    const { query } = readCollectionParams({
      'oslc.select': '*,assetmeter{*},assetspec{assetattrid,numvalue,alnvalue}',
      'oslc.where': 'assetnum="MT-1"',
    });
    const page = await resources.page({
      plan: resources.plan(structure, query),
      window: { limit: 10, offset: 0 },
      withCount: false,
    });
    assert.equal(page.members.length, 1);
    assert.equal(page.members[0]!.children.get('assetmeter')?.length, 2);
    records = [
      page.members[0]!,
      ...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => withTrickyValues(page.members[0]!, n)),
    ];
    base = { links: { api: 'http://host/maximo/oslc' }, osName: 'mxapiasset', domains: page.domains };
  });
  after(() => t.close());

  const optionSets = [true, false].flatMap((lean) =>
    [true, false].flatMap((dropNulls) =>
      [true, false].map((flag) => ({ lean, dropNulls, internalValues: flag, collectionRefs: !flag })),
    ),
  );

  test('a member is JSON.stringify of its object, in both forms and with every option', () => {
    for (const flags of optionSets) {
      const options: ResponseOptions = { ...base, ...flags };
      for (const record of records) {
        const text = memberText(record, options);
        assert.ok(text !== undefined, 'a selection without dot-notation values has a serializer');
        assert.equal(text, JSON.stringify(memberJson(record, options)), JSON.stringify(flags));
      }
    }
  });

  test('a page is JSON.stringify of its object, links with quotes and counts included', () => {
    const info: PageInfo = {
      href: 'http://host/maximo/oslc/os/mxapiasset?oslc.where=description="a \\"b\\""',
      pageNumber: 2,
      nextHref: 'http://host/x?"rdfs:member":[]',
      previousHref: 'http://host/{"member":[]}',
      totalCount: 41,
      totalPages: 5,
    };
    for (const flags of optionSets) {
      const options: ResponseOptions = { ...base, ...flags };
      const texts = records.map((record) => memberText(record, options)!);
      const objects = records.map((record) => memberJson(record, options));
      assert.equal(
        collectionText(texts, info, options),
        JSON.stringify(collectionJson(objects, info, options)),
      );
      assert.equal(collectionText([], info, options), JSON.stringify(collectionJson([], info, options)));
    }
  });

  test('a selection with dot-notation values is left to response.ts', async () => {
    const { resources, metadata } = t.services;
    const { query } = readCollectionParams({ 'oslc.select': 'assetnum,location.description' });
    const plan = resources.plan(metadata.findObjectStructure('MXAPIASSET')!, query);
    const page = await resources.page({ plan, window: { limit: 1, offset: 0 }, withCount: false });
    const options: ResponseOptions = {
      ...base,
      lean: true,
      dropNulls: true,
      internalValues: false,
      collectionRefs: true,
    };
    assert.equal(memberText(page.members[0]!, options), undefined);
  });
});
