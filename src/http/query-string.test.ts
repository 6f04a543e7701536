import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ParameterNames } from './parameter-names.js';
import { createQueryStringParser, parseQueryString, readFlag } from './query-string.js';

describe('parseQueryString', () => {
  it('decodes plus as space and percent escapes, keeping a literal plus written %2B', () => {
    assert.deepEqual(
      { ...parseQueryString('oslc.where=description%3D%22a+b%22&oslc.orderBy=%2Bassetnum') },
      { 'oslc.where': 'description="a b"', 'oslc.orderBy': '+assetnum' },
    );
  });

  it('tolerates a leading &, empty parts and names without a value; the first of repeated names wins', () => {
    assert.deepEqual({ ...parseQueryString('&&lean=1&&lean=0&count') }, { lean: '1', count: '' });
  });

  it('reads parameters named like Object members as plain parameters', () => {
    const query = parseQueryString('constructor=a&__proto__=b&toString=c&hasOwnProperty=d');
    assert.deepEqual(Object.entries(query), [
      ['constructor', 'a'],
      ['__proto__', 'b'],
      ['toString', 'c'],
      ['hasOwnProperty', 'd'],
    ]);
    assert.equal(({} as Record<string, unknown>).b, undefined);
  });

  it('keeps the case of names and skips a part whose escape is malformed', () => {
    assert.deepEqual(
      { ...parseQueryString('savedQuery=A&bad=%E0%A4%A&x=%zz&ok=1') },
      { savedQuery: 'A', ok: '1' },
    );
  });

  it('spells known names as the service reads them, in any case; savedQuery and unknown names stay as sent', () => {
    assert.deepEqual(
      {
        ...parseQueryString(
          'addSchema=1&OSLC.WHERE=a&oslc.orderby=b&Lean=0&savedquery=Q&MyParam=x&assetmeter.WHERE=c&wplabor.ORDERBY=d',
        ),
      },
      {
        addschema: '1',
        'oslc.where': 'a',
        'oslc.orderBy': 'b',
        lean: '0',
        savedquery: 'Q',
        MyParam: 'x',
        'assetmeter.where': 'c',
        'wplabor.orderBy': 'd',
      },
    );
    // Two spellings of one parameter are a repeated parameter: the first wins.
    assert.deepEqual({ ...parseQueryString('ADDSCHEMA=1&addschema=0') }, { addschema: '1' });
  });

  it('spells the names of route schemas an application adds', () => {
    const names = new ParameterNames();
    names.addSchema({ type: 'object', properties: { propName: {}, savedQuery: {} } });
    const parse = createQueryStringParser(names);
    assert.deepEqual({ ...parse('PROPNAME=a&savedquery=b') }, { propName: 'a', savedquery: 'b' });
  });

  it('reads flags as 1/true and 0/false in any case, anything else as absent', () => {
    assert.deepEqual(['1', 'TRUE', '0', 'False', 'yes', undefined].map(readFlag), [
      true,
      true,
      false,
      false,
      undefined,
      undefined,
    ]);
  });

  it('gives each request its own copy of a repeated query string', () => {
    const parseRequestQueryString = createQueryStringParser();
    const first = parseRequestQueryString('lean=1&oslc.pageSize=10');
    first.lean = 'changed by validation';
    const second = parseRequestQueryString('lean=1&oslc.pageSize=10');
    assert.deepEqual({ ...second }, { lean: '1', 'oslc.pageSize': '10' });
    assert.notEqual(second, first);
    // Nothing inherited: no Object.prototype members to mistake for parameters.
    assert.equal('toString' in second, false);
    assert.equal('constructor' in second, false);
  });
});
