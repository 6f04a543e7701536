import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  QueryParseError,
  type AttributePath,
  type ComparisonOperator,
  type OrderByClause,
  type OrderTerm,
  type Position,
  type SelectClause,
  type SelectItem,
  type WhereClause,
  type WhereLiteral,
  type WhereTerm,
} from './ast.js';
import { MAX_SELECT_DEPTH, parseOrderBy, parseSelect, parseWhere } from './parse.js';

// ---- helpers ----------------------------------------------------------------------------------------------

type Parameter = QueryParseError['parameter'];
type Parser = (text: string) => unknown;

const pos = (line: number, column: number): Position => ({ line, column });

const str = (value: string, line: number, column: number): WhereLiteral => ({
  kind: 'string',
  value,
  position: pos(line, column),
});
const num = (text: string, value: number, line: number, column: number): WhereLiteral => ({
  kind: 'number',
  value,
  text,
  position: pos(line, column),
});
const bool = (value: boolean, line: number, column: number): WhereLiteral => ({
  kind: 'boolean',
  value,
  position: pos(line, column),
});
const path = (segments: string[], line: number, column: number): AttributePath => ({
  segments,
  position: pos(line, column),
});
const cmp = (p: AttributePath, operator: ComparisonOperator, value: WhereLiteral): WhereTerm => ({
  kind: 'comparison',
  path: p,
  operator,
  value,
});
const inTerm = (p: AttributePath, values: WhereLiteral[]): WhereTerm => ({ kind: 'in', path: p, values });

/** The QueryParseError `parse(text)` throws; fails the test if it returns or throws anything else. */
function parseError(parse: Parser, text: string): QueryParseError {
  let result: unknown;
  try {
    result = parse(text);
  } catch (error) {
    assert.ok(error instanceof QueryParseError, `expected a QueryParseError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(text)} to be rejected, got ${JSON.stringify(result)}`);
}

interface ErrorCase {
  text: string;
  kind: string;
  token: string;
  at: [line: number, column: number];
  expected?: string[];
}

function assertError(parse: Parser, parameter: Parameter, c: ErrorCase): void {
  const error = parseError(parse, c.text);
  assert.equal(error.parameter, parameter);
  assert.equal(error.tokenKind, c.kind, `tokenKind for ${JSON.stringify(c.text)}`);
  assert.equal(error.tokenText, c.token, `tokenText for ${JSON.stringify(c.text)}`);
  assert.deepEqual(error.position, pos(...c.at), `position for ${JSON.stringify(c.text)}`);
  if (c.expected) assert.deepEqual(error.expected, c.expected, `expected for ${JSON.stringify(c.text)}`);
}

const OPERATORS_AFTER_PATH = ['"."', '"="', '"!="', '">"', '">="', '"<"', '"<="', '<IN>'];
const LITERALS = ['<STRING>', '<NUMBER>', '<BOOLEAN>'];

// ---- oslc.where: golden -----------------------------------------------------------------------------------

describe('parseWhere', () => {
  it('parses a single string comparison', () => {
    assert.deepEqual(parseWhere('status="APPR"'), {
      terms: [cmp(path(['status'], 1, 1), '=', str('APPR', 1, 8))],
    } satisfies WhereClause);
  });

  for (const operator of ['=', '!=', '>', '>=', '<', '<='] as const) {
    it(`parses the ${operator} operator, with and without spaces`, () => {
      assert.deepEqual(parseWhere(`priority${operator}3`), {
        terms: [cmp(path(['priority'], 1, 1), operator, num('3', 3, 1, 9 + operator.length))],
      });
      assert.deepEqual(parseWhere(`priority ${operator} 3`), {
        terms: [cmp(path(['priority'], 1, 1), operator, num('3', 3, 1, 11 + operator.length))],
      });
    });
  }

  it('keeps number literals as written', () => {
    const cases: [string, number][] = [
      ['1', 1],
      ['0', 0],
      ['-2', -2],
      ['3.5', 3.5],
      ['-0.25', -0.25],
      ['007', 7],
      ['-0', -0],
      // Beyond double precision: `value` is the nearest double, `text` keeps every digit.
      ['12345678901234567890', 1.2345678901234567e19],
    ];
    for (const [text, value] of cases) {
      assert.deepEqual(parseWhere(`a=${text}`), {
        terms: [cmp(path(['a'], 1, 1), '=', num(text, value, 1, 3))],
      });
    }
  });

  it('reads unquoted true/false in any case as booleans, and 1/0 as numbers', () => {
    assert.deepEqual(parseWhere('a=true and b=FALSE and c=True and d=1 and e=0'), {
      terms: [
        cmp(path(['a'], 1, 1), '=', bool(true, 1, 3)),
        cmp(path(['b'], 1, 12), '=', bool(false, 1, 14)),
        cmp(path(['c'], 1, 24), '=', bool(true, 1, 26)),
        cmp(path(['d'], 1, 35), '=', num('1', 1, 1, 37)),
        cmp(path(['e'], 1, 43), '=', num('0', 0, 1, 45)),
      ],
    });
  });

  it('passes string contents through raw: dates, wildcards, bracket lists, empty', () => {
    for (const value of [
      '2021-04-07T09:50:00-04:00',
      '%APPR%',
      '*',
      '[BR300,BR400]',
      '',
      ' a b ',
      'ÄÖü 😀',
    ]) {
      assert.deepEqual(parseWhere(`x="${value}"`), {
        terms: [cmp(path(['x'], 1, 1), '=', str(value, 1, 3))],
      });
    }
  });

  it('resolves \\" and \\\\ escapes and keeps other backslashes', () => {
    assert.deepEqual(parseWhere(String.raw`d="say \"hi\" \\ C:\temp\n"`), {
      terms: [cmp(path(['d'], 1, 1), '=', str(String.raw`say "hi" \ C:\temp\n`, 1, 3))],
    });
    assert.deepEqual(parseWhere(String.raw`d="\\" and e="\""`), {
      terms: [cmp(path(['d'], 1, 1), '=', str('\\', 1, 3)), cmp(path(['e'], 1, 12), '=', str('"', 1, 14))],
    });
  });

  it('parses in lists of every literal kind, keyword in any case', () => {
    assert.deepEqual(parseWhere('status in ["APPR","WAPPR"]'), {
      terms: [inTerm(path(['status'], 1, 1), [str('APPR', 1, 12), str('WAPPR', 1, 19)])],
    });
    assert.deepEqual(parseWhere('x IN[ "a" , -1.5,true ]'), {
      terms: [inTerm(path(['x'], 1, 1), [str('a', 1, 7), num('-1.5', -1.5, 1, 13), bool(true, 1, 18)])],
    });
    assert.deepEqual(parseWhere('x iN [1]'), { terms: [inTerm(path(['x'], 1, 1), [num('1', 1, 1, 7)])] });
  });

  it('parses dot paths and lower-cases every segment', () => {
    assert.deepEqual(parseWhere('Location.STATUS="OPERATING" and rel1.Rel2.attr_3 != 2'), {
      terms: [
        cmp(path(['location', 'status'], 1, 1), '=', str('OPERATING', 1, 17)),
        cmp(path(['rel1', 'rel2', 'attr_3'], 1, 33), '!=', num('2', 2, 1, 53)),
      ],
    });
    assert.deepEqual(parseWhere('_a . b="x"'), {
      terms: [cmp(path(['_a', 'b'], 1, 1), '=', str('x', 1, 8))],
    });
  });

  it('accepts and in any case, and a string running straight into and', () => {
    assert.deepEqual(parseWhere('a="1" AND b="2" And c="3"and d="4"'), {
      terms: [
        cmp(path(['a'], 1, 1), '=', str('1', 1, 3)),
        cmp(path(['b'], 1, 11), '=', str('2', 1, 13)),
        cmp(path(['c'], 1, 21), '=', str('3', 1, 23)),
        cmp(path(['d'], 1, 30), '=', str('4', 1, 32)),
      ],
    });
  });

  it('reports 1-based positions across lines, tabs and CRLF', () => {
    const text = '  status = "APPR"\n\tand siteid in\r\n ["BEDFORD",\n"TEXAS"]\nand x="a\nb" and y=1';
    assert.deepEqual(parseWhere(text), {
      terms: [
        cmp(path(['status'], 1, 3), '=', str('APPR', 1, 12)),
        inTerm(path(['siteid'], 2, 6), [str('BEDFORD', 3, 3), str('TEXAS', 4, 1)]),
        cmp(path(['x'], 5, 5), '=', str('a\nb', 5, 7)),
        cmp(path(['y'], 6, 8), '=', num('1', 1, 6, 10)),
      ],
    });
  });

  it('counts columns in code points', () => {
    assert.deepEqual(parseWhere('a="😀" and b=1'), {
      terms: [cmp(path(['a'], 1, 1), '=', str('😀', 1, 3)), cmp(path(['b'], 1, 11), '=', num('1', 1, 1, 13))],
    });
  });

  it('rejects or with the message Maximo gives', () => {
    const spaced = parseError(parseWhere, 'status = "A" or status = "B"');
    assert.equal(
      spaced.message,
      'Encountered " <IDENTIFIER> "or "" at line 1, column 14. Was expecting: <BOOLEAN_OP> ...',
    );
    assert.equal(spaced.tokenKind, '<IDENTIFIER>');
    assert.equal(spaced.tokenText, 'or');
    assert.deepEqual(spaced.position, pos(1, 14));
    assert.equal(spaced.parameter, 'oslc.where');
    assert.ok(spaced instanceof Error);

    assertError(parseWhere, 'oslc.where', {
      text: 'status="A" or status="B"',
      kind: '<IDENTIFIER>',
      token: 'or',
      at: [1, 12],
      expected: ['<BOOLEAN_OP>'],
    });
    assertError(parseWhere, 'oslc.where', {
      text: 'a="x"\n  OR b="y"',
      kind: '<IDENTIFIER>',
      token: 'OR',
      at: [2, 3],
    });
  });

  const errors: ErrorCase[] = [
    { text: '', kind: '<EOF>', token: '', at: [1, 1], expected: ['<IDENTIFIER>'] },
    { text: ' \t\n  ', kind: '<EOF>', token: '', at: [2, 3], expected: ['<IDENTIFIER>'] },
    { text: 'status="A" and', kind: '<EOF>', token: '', at: [1, 15], expected: ['<IDENTIFIER>'] },
    { text: 'status="A" AND ', kind: '<EOF>', token: '', at: [1, 16] },
    { text: 'and status="A"', kind: '<BOOLEAN_OP>', token: 'and', at: [1, 1], expected: ['<IDENTIFIER>'] },
    { text: 'a="x" and and b=1', kind: '<BOOLEAN_OP>', token: 'and', at: [1, 11] },
    { text: "status='A'", kind: '<UNKNOWN>', token: "'", at: [1, 8], expected: LITERALS },
    { text: 'status="A";', kind: '<UNKNOWN>', token: ';', at: [1, 11], expected: ['<BOOLEAN_OP>'] },
    { text: 'status="A" -- note', kind: '<UNKNOWN>', token: '-', at: [1, 12] },
    { text: '(status="A")', kind: '<UNKNOWN>', token: '(', at: [1, 1] },
    { text: 'status=("A")', kind: '<UNKNOWN>', token: '(', at: [1, 8] },
    { text: 'status=APPR', kind: '<IDENTIFIER>', token: 'APPR', at: [1, 8], expected: LITERALS },
    { text: 'status = "APPR', kind: '<UNTERMINATED_STRING>', token: '"', at: [1, 10], expected: LITERALS },
    { text: 'a="x" and b="\\"', kind: '<UNTERMINATED_STRING>', token: '"', at: [1, 13] },
    { text: 'status in []', kind: '"]"', token: ']', at: [1, 12], expected: LITERALS },
    { text: 'status in ["A",]', kind: '"]"', token: ']', at: [1, 16], expected: LITERALS },
    { text: 'status in ["A" "B"]', kind: '<STRING>', token: '"B"', at: [1, 16], expected: ['","', '"]"'] },
    { text: 'status in ["A"', kind: '<EOF>', token: '', at: [1, 15], expected: ['","', '"]"'] },
    { text: 'status in "A"', kind: '<STRING>', token: '"A"', at: [1, 11], expected: ['"["'] },
    { text: 'status="A" status="B"', kind: '<IDENTIFIER>', token: 'status', at: [1, 12] },
    { text: 'status="A"andx=1', kind: '<IDENTIFIER>', token: 'andx', at: [1, 11] },
    { text: 'a=1and b=2', kind: '<UNKNOWN>', token: '1and', at: [1, 3], expected: LITERALS },
    { text: '1abc="x"', kind: '<UNKNOWN>', token: '1abc', at: [1, 1], expected: ['<IDENTIFIER>'] },
    { text: 'a', kind: '<EOF>', token: '', at: [1, 2], expected: OPERATORS_AFTER_PATH },
    { text: 'a.="x"', kind: '"="', token: '=', at: [1, 3], expected: ['<IDENTIFIER>'] },
    { text: '.a="x"', kind: '"."', token: '.', at: [1, 1] },
    { text: 'a..b="x"', kind: '"."', token: '.', at: [1, 3] },
    { text: 'a=="x"', kind: '"="', token: '=', at: [1, 3], expected: LITERALS },
    { text: 'a<>"x"', kind: '">"', token: '>', at: [1, 3] },
    { text: 'a = - 1', kind: '<UNKNOWN>', token: '-', at: [1, 5] },
    { text: 'a=+1', kind: '<UNKNOWN>', token: '+', at: [1, 3] },
    { text: 'a=1.', kind: '"."', token: '.', at: [1, 4], expected: ['<BOOLEAN_OP>'] },
    { text: 'a=.5', kind: '"."', token: '.', at: [1, 3] },
    { text: 'a=1.5.6', kind: '"."', token: '.', at: [1, 6] },
    { text: 'a=true1', kind: '<IDENTIFIER>', token: 'true1', at: [1, 3] },
    { text: 'in="x"', kind: '<IN>', token: 'in', at: [1, 1], expected: ['<IDENTIFIER>'] },
    { text: 'a.true=1', kind: '<BOOLEAN>', token: 'true', at: [1, 3] },
    { text: 'é="x"', kind: '<UNKNOWN>', token: 'é', at: [1, 1] },
    { text: 'a\u00a0="x"', kind: '<UNKNOWN>', token: '\u00a0', at: [1, 2] },
    { text: 'a="😀" x', kind: '<IDENTIFIER>', token: 'x', at: [1, 7] },
    { text: 'a="x" 😀', kind: '<UNKNOWN>', token: '😀', at: [1, 7] },
    { text: 'a!"x"', kind: '<UNKNOWN>', token: '!', at: [1, 2] },
    { text: `"${'😀'.repeat(40)}"=1`, kind: '<STRING>', token: `"${'😀'.repeat(40)}"`, at: [1, 1] },
    { text: `"${'😀'.repeat(70)}"=1`, kind: '<STRING>', token: `"${'😀'.repeat(63)}...`, at: [1, 1] },
    {
      text: `a=${'9'.repeat(400)}`,
      kind: '<NUMBER>',
      token: `${'9'.repeat(64)}...`,
      at: [1, 3],
      expected: ['a finite <NUMBER>'],
    },
  ];
  for (const c of errors) {
    it(`rejects ${JSON.stringify(c.text.length > 40 ? `${c.text.slice(0, 40)}...` : c.text)}`, () => {
      assertError(parseWhere, 'oslc.where', c);
    });
  }

  it('treats injection attempts inside quotes as plain string values', () => {
    assert.deepEqual(parseWhere(`status="x'; drop table asset; --"`), {
      terms: [cmp(path(['status'], 1, 1), '=', str("x'; drop table asset; --", 1, 8))],
    });
    assert.deepEqual(parseWhere(String.raw`status="A\" or 1=1 --"`), {
      terms: [cmp(path(['status'], 1, 1), '=', str('A" or 1=1 --', 1, 8))],
    });
  });

  it('rejects injection attempts outside quotes', () => {
    assertError(parseWhere, 'oslc.where', {
      text: "status=x'; drop table asset",
      kind: '<IDENTIFIER>',
      token: 'x',
      at: [1, 8],
    });
    assertError(parseWhere, 'oslc.where', {
      text: 'status="A"; drop table asset',
      kind: '<UNKNOWN>',
      token: ';',
      at: [1, 11],
    });
    assertError(parseWhere, 'oslc.where', {
      text: 'status="A" and 1=1',
      kind: '<NUMBER>',
      token: '1',
      at: [1, 16],
      expected: ['<IDENTIFIER>'],
    });
    assertError(parseWhere, 'oslc.where', {
      text: 'status="A" /* x */',
      kind: '<UNKNOWN>',
      token: '/',
      at: [1, 12],
    });
  });

  it('rejects a non-string value from an untyped caller as a parse error', () => {
    assert.throws(() => parseWhere(['a=1', 'b=2'] as unknown as string), QueryParseError);
  });

  it('handles very large inputs without deep recursion', () => {
    const many = Array.from({ length: 50_000 }, (_, i) => `a${i}=${i}`).join(' and ');
    assert.equal(parseWhere(many).terms.length, 50_000);
    const list = `x in [${Array.from({ length: 100_000 }, (_, i) => `"${i}"`).join(',')}]`;
    const [term] = parseWhere(list).terms;
    assert.equal(term?.kind === 'in' ? term.values.length : 0, 100_000);
    const big = 'y'.repeat(1_000_000);
    assert.deepEqual(parseWhere(`a="${big}"`).terms[0], cmp(path(['a'], 1, 1), '=', str(big, 1, 3)));
    assertError(parseWhere, 'oslc.where', {
      text: `a="${big}`,
      kind: '<UNTERMINATED_STRING>',
      token: '"',
      at: [1, 3],
    });
  });
});

// ---- oslc.select: golden ----------------------------------------------------------------------------------

const all = (line: number, column: number): SelectItem => ({ kind: 'all', position: pos(line, column) });
const attr = (name: string, line: number, column: number, alias?: string): SelectItem => ({
  kind: 'attribute',
  name,
  ...(alias === undefined ? {} : { alias }),
  position: pos(line, column),
});
const related = (p: string[], name: string, line: number, column: number, alias?: string): SelectItem => ({
  kind: 'related',
  path: p,
  name,
  ...(alias === undefined ? {} : { alias }),
  position: pos(line, column),
});
const child = (name: string, items: SelectItem[], line: number, column: number): SelectItem => ({
  kind: 'child',
  name,
  items,
  position: pos(line, column),
});
const relation = (name: string, items: SelectItem[], line: number, column: number): SelectItem => ({
  kind: 'relation',
  name,
  items,
  position: pos(line, column),
});

describe('parseSelect', () => {
  const golden: [string, SelectItem[]][] = [
    ['*', [all(1, 1)]],
    ['assetnum', [attr('assetnum', 1, 1)]],
    ['AssetNum,Description', [attr('assetnum', 1, 1), attr('description', 1, 10)]],
    ['location--myLocation', [attr('location', 1, 1, 'mylocation')]],
    ['location.description', [related(['location'], 'description', 1, 1)]],
    ['a.b.c', [related(['a', 'b'], 'c', 1, 1)]],
    ['location.description--locdesc', [related(['location'], 'description', 1, 1, 'locdesc')]],
    ['child{*}', [child('child', [all(1, 7)], 1, 1)]],
    [
      'obj1{prop1,prop2,obj2{prop21}}',
      [
        child(
          'obj1',
          [attr('prop1', 1, 6), attr('prop2', 1, 12), child('obj2', [attr('prop21', 1, 23)], 1, 18)],
          1,
          1,
        ),
      ],
    ],
    ['rel.openwo{wonum}', [relation('openwo', [attr('wonum', 1, 12)], 1, 1)]],
    ['REL.OpenWO{WONUM,Status}', [relation('openwo', [attr('wonum', 1, 12), attr('status', 1, 18)], 1, 1)]],
    ['rel.x', [related(['rel'], 'x', 1, 1)]],
    ['rel{a}', [child('rel', [attr('a', 1, 5)], 1, 1)]],
    ['*,rel.openwo{*}', [all(1, 1), relation('openwo', [all(1, 14)], 1, 3)]],
    [
      'assetnum,location{*,description--d},rel.openwo{wonum,woactivity{taskid}}',
      [
        attr('assetnum', 1, 1),
        child('location', [all(1, 19), attr('description', 1, 21, 'd')], 1, 10),
        relation(
          'openwo',
          [attr('wonum', 1, 48), child('woactivity', [attr('taskid', 1, 65)], 1, 54)],
          1,
          37,
        ),
      ],
    ],
    [
      ' assetnum ,\n  location . description -- d ,\n\tchild { * } ,\r\n rel . x { y }',
      [
        attr('assetnum', 1, 2),
        related(['location'], 'description', 2, 3, 'd'),
        child('child', [all(3, 10)], 3, 2),
        relation('x', [attr('y', 4, 12)], 4, 2),
      ],
    ],
  ];
  for (const [text, items] of golden) {
    it(`parses ${JSON.stringify(text)}`, () => {
      assert.deepEqual(parseSelect(text), { items } satisfies SelectClause);
    });
  }

  const AFTER_NAME = ['"."', '"{"', '"--"', '","'];
  const errors: ErrorCase[] = [
    { text: '', kind: '<EOF>', token: '', at: [1, 1], expected: ['"*"', '<IDENTIFIER>'] },
    { text: '  ', kind: '<EOF>', token: '', at: [1, 3] },
    { text: 'a,,b', kind: '","', token: ',', at: [1, 3], expected: ['"*"', '<IDENTIFIER>'] },
    { text: ',a', kind: '","', token: ',', at: [1, 1] },
    { text: 'a,', kind: '<EOF>', token: '', at: [1, 3] },
    { text: 'a,\n,b', kind: '","', token: ',', at: [2, 1] },
    { text: 'a{', kind: '<EOF>', token: '', at: [1, 3], expected: ['"*"', '<IDENTIFIER>'] },
    { text: 'a}', kind: '"}"', token: '}', at: [1, 2], expected: AFTER_NAME },
    { text: 'a{}', kind: '"}"', token: '}', at: [1, 3], expected: ['"*"', '<IDENTIFIER>'] },
    { text: 'a{b', kind: '<EOF>', token: '', at: [1, 4], expected: [...AFTER_NAME, '"}"'] },
    { text: 'a{b}}', kind: '"}"', token: '}', at: [1, 5], expected: ['","'] },
    { text: '{a}', kind: '"{"', token: '{', at: [1, 1] },
    { text: 'a.b{c}', kind: '"{"', token: '{', at: [1, 4], expected: ['"."', '"--"', '","'] },
    { text: 'rel.a.b{c}', kind: '"{"', token: '{', at: [1, 8] },
    { text: 'rel.{a}', kind: '"{"', token: '{', at: [1, 5], expected: ['<IDENTIFIER>'] },
    { text: 'a.*', kind: '"*"', token: '*', at: [1, 3] },
    { text: '*--x', kind: '"--"', token: '--', at: [1, 2], expected: ['","'] },
    { text: 'a--', kind: '<EOF>', token: '', at: [1, 4], expected: ['<IDENTIFIER>'] },
    { text: 'a--b--c', kind: '"--"', token: '--', at: [1, 5], expected: ['","'] },
    { text: 'a--b.c', kind: '"."', token: '.', at: [1, 5] },
    { text: 'a-b', kind: '<UNKNOWN>', token: '-', at: [1, 2] },
    { text: 'a{b}--c', kind: '"--"', token: '--', at: [1, 5] },
    { text: 'a{b}c', kind: '<IDENTIFIER>', token: 'c', at: [1, 5] },
    { text: 'a b', kind: '<IDENTIFIER>', token: 'b', at: [1, 3], expected: AFTER_NAME },
    { text: '1a', kind: '<UNKNOWN>', token: '1a', at: [1, 1] },
    { text: 'a;b', kind: '<UNKNOWN>', token: ';', at: [1, 2] },
    { text: 'a,"b"', kind: '<UNKNOWN>', token: '"', at: [1, 3] },
    { text: 'foo:a', kind: '<UNKNOWN>', token: ':', at: [1, 4] },
  ];
  for (const c of errors) {
    it(`rejects ${JSON.stringify(c.text)}`, () => {
      assertError(parseSelect, 'oslc.select', c);
    });
  }

  it(`accepts ${MAX_SELECT_DEPTH} nested levels and rejects one more`, () => {
    assert.equal(MAX_SELECT_DEPTH, 16);
    let expected: SelectItem = attr('z', 1, 2 * MAX_SELECT_DEPTH + 1);
    for (let level = MAX_SELECT_DEPTH; level >= 1; level -= 1)
      expected = child('a', [expected], 1, 2 * level - 1);
    const deepest = `${'a{'.repeat(MAX_SELECT_DEPTH)}z${'}'.repeat(MAX_SELECT_DEPTH)}`;
    assert.deepEqual(parseSelect(deepest), { items: [expected] });

    const tooDeep = `${'a{'.repeat(MAX_SELECT_DEPTH + 1)}z${'}'.repeat(MAX_SELECT_DEPTH + 1)}`;
    assertError(parseSelect, 'oslc.select', {
      text: tooDeep,
      kind: '"{"',
      token: '{',
      at: [1, 2 * (MAX_SELECT_DEPTH + 1)],
      expected: ['at most 16 nested "{" levels'],
    });
    assertError(parseSelect, 'oslc.select', {
      text: `x,rel.r{${'a{'.repeat(200_000)}`,
      kind: '"{"',
      token: '{',
      at: [1, 8 + 2 * MAX_SELECT_DEPTH],
    });
  });

  it('handles very large inputs', () => {
    const wide = Array.from({ length: 100_000 }, (_, i) => `a${i}`).join(',');
    assert.equal(parseSelect(wide).items.length, 100_000);
    assertError(parseSelect, 'oslc.select', {
      text: '{'.repeat(1_000_000),
      kind: '"{"',
      token: '{',
      at: [1, 1],
    });
  });
});

// ---- oslc.orderBy: golden ---------------------------------------------------------------------------------

const asc = (name: string, line: number, column: number): OrderTerm => ({
  direction: 'asc',
  name,
  position: pos(line, column),
});
const desc = (name: string, line: number, column: number): OrderTerm => ({
  direction: 'desc',
  name,
  position: pos(line, column),
});

describe('parseOrderBy', () => {
  const golden: [string, OrderTerm[]][] = [
    ['+assetnum', [asc('assetnum', 1, 2)]],
    ['-assetnum', [desc('assetnum', 1, 2)]],
    ['+AssetNum,-Location.Status', [asc('assetnum', 1, 2), desc('location.status', 1, 12)]],
    ['-a.b.c', [desc('a.b.c', 1, 2)]],
    ['+ a , - b', [asc('a', 1, 3), desc('b', 1, 9)]],
    ['+a,\n  -b', [asc('a', 1, 2), desc('b', 2, 4)]],
    // An unencoded `+` decoded to a space.
    [' assetnum', [asc('assetnum', 1, 2)]],
    ['-priority, assetnum', [desc('priority', 1, 2), asc('assetnum', 1, 12)]],
    [' a, b,-c', [asc('a', 1, 2), asc('b', 1, 5), desc('c', 1, 8)]],
    ['   a', [asc('a', 1, 4)]],
    ['-a,\n b', [desc('a', 1, 2), asc('b', 2, 2)]],
    [' a . b', [asc('a.b', 1, 2)]],
  ];
  for (const [text, terms] of golden) {
    it(`parses ${JSON.stringify(text)}`, () => {
      assert.deepEqual(parseOrderBy(text), { terms } satisfies OrderByClause);
    });
  }

  const SIGNS = ['"+"', '"-"'];
  const errors: ErrorCase[] = [
    { text: '', kind: '<EOF>', token: '', at: [1, 1], expected: SIGNS },
    { text: '  ', kind: '<EOF>', token: '', at: [1, 3], expected: SIGNS },
    { text: 'assetnum', kind: '<IDENTIFIER>', token: 'assetnum', at: [1, 1], expected: SIGNS },
    { text: '+a,b', kind: '<IDENTIFIER>', token: 'b', at: [1, 4], expected: SIGNS },
    { text: '\ta', kind: '<IDENTIFIER>', token: 'a', at: [1, 2], expected: SIGNS },
    { text: '+a,\tb', kind: '<IDENTIFIER>', token: 'b', at: [1, 5] },
    { text: '+a,\nb', kind: '<IDENTIFIER>', token: 'b', at: [2, 1] },
    { text: '+', kind: '<EOF>', token: '', at: [1, 2], expected: ['<IDENTIFIER>'] },
    { text: '-', kind: '<EOF>', token: '', at: [1, 2], expected: ['<IDENTIFIER>'] },
    { text: '+a,', kind: '<EOF>', token: '', at: [1, 4], expected: SIGNS },
    { text: ',+a', kind: '","', token: ',', at: [1, 1] },
    { text: '+a,,+b', kind: '","', token: ',', at: [1, 4] },
    { text: '+a -b', kind: '"-"', token: '-', at: [1, 4], expected: ['"."', '","'] },
    { text: '+a ,b', kind: '<IDENTIFIER>', token: 'b', at: [1, 5] },
    { text: '++a', kind: '"+"', token: '+', at: [1, 2], expected: ['<IDENTIFIER>'] },
    { text: '--a', kind: '"-"', token: '-', at: [1, 2] },
    { text: '+1a', kind: '<UNKNOWN>', token: '1a', at: [1, 2] },
    { text: '+a.', kind: '<EOF>', token: '', at: [1, 4], expected: ['<IDENTIFIER>'] },
    { text: '+a..b', kind: '"."', token: '.', at: [1, 4] },
    { text: '*', kind: '<UNKNOWN>', token: '*', at: [1, 1] },
    { text: '%2Ba', kind: '<UNKNOWN>', token: '%', at: [1, 1] },
    { text: '+a;drop table asset', kind: '<UNKNOWN>', token: ';', at: [1, 3] },
    { text: '+a desc', kind: '<IDENTIFIER>', token: 'desc', at: [1, 4] },
  ];
  for (const c of errors) {
    it(`rejects ${JSON.stringify(c.text)}`, () => {
      assertError(parseOrderBy, 'oslc.orderBy', c);
    });
  }

  it('handles very large inputs', () => {
    const many = Array.from({ length: 50_000 }, (_, i) => `${i % 2 ? '-' : '+'}a${i}`).join(',');
    assert.equal(parseOrderBy(many).terms.length, 50_000);
  });
});

// ---- property: printed syntax trees parse back ------------------------------------------------------------

/**
 * Writes query text and tracks where each token starts, computing positions independently of the parser
 * (split on LF, count code points), so round trips check positions too.
 */
class Writer {
  text = '';
  private next = 0;

  constructor(private readonly spaces: readonly string[]) {}

  position(): Position {
    const lines = this.text.split('\n');
    return { line: lines.length, column: Array.from(lines[lines.length - 1] ?? '').length + 1 };
  }

  write(part: string): Position {
    const start = this.position();
    this.text += part;
    return start;
  }

  /** Optional whitespace between tokens. */
  space(): void {
    this.text += this.spaces.length === 0 ? '' : (this.spaces[this.next++ % this.spaces.length] ?? '');
  }

  /** Whitespace that must be there, to keep neighbouring words apart. */
  requiredSpace(): void {
    const before = this.text.length;
    this.space();
    if (this.text.length === before) this.text += ' ';
  }

  /** `a.b.c` with optional whitespace around the dots; returns the lower-cased segments. */
  dotted(segments: readonly string[]): string[] {
    segments.forEach((segment, index) => {
      if (index > 0) {
        this.space();
        this.write('.');
        this.space();
      }
      this.write(segment);
    });
    return segments.map((segment) => segment.toLowerCase());
  }
}

const spacesArb = fc.array(fc.constantFrom('', '', ' ', '  ', '\t', '\n', '\r\n', ' \n\t', '\f'), {
  maxLength: 12,
});
const RESERVED = new Set(['and', 'in', 'true', 'false']);
const identifierArb = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/);
const whereIdentifierArb = identifierArb.filter((name) => !RESERVED.has(name.toLowerCase()));
const casingArb = (word: string): fc.Arbitrary<string> =>
  fc
    .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) => [...word].map((char, i) => (upper[i] ? char.toUpperCase() : char)).join(''));

type WrittenLiteral =
  { kind: 'string'; value: string } | { kind: 'number'; text: string } | { kind: 'boolean'; text: string };

interface WrittenTerm {
  segments: string[];
  operator: ComparisonOperator | 'in';
  inWord: string;
  values: WrittenLiteral[];
  andWord: string;
}

const literalArb: fc.Arbitrary<WrittenLiteral> = fc.oneof(
  fc.record({
    kind: fc.constant('string' as const),
    value: fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc
        .array(fc.constantFrom('"', '\\', 'n', "'", ' ', '\n', '%', '*', '[', ',', ']'), { maxLength: 8 })
        .map((p) => p.join('')),
    ),
  }),
  fc.record({
    kind: fc.constant('number' as const),
    text: fc.stringMatching(/^-?[0-9]{1,15}(\.[0-9]{1,6})?$/),
  }),
  fc.record({ kind: fc.constant('boolean' as const), text: fc.oneof(casingArb('true'), casingArb('false')) }),
);

const whereArb = fc.record({
  spaces: spacesArb,
  terms: fc.array(
    fc.record({
      segments: fc.array(whereIdentifierArb, { minLength: 1, maxLength: 3 }),
      operator: fc.constantFrom<ComparisonOperator | 'in'>('=', '!=', '>', '>=', '<', '<=', 'in'),
      inWord: casingArb('in'),
      values: fc.array(literalArb, { minLength: 1, maxLength: 4 }),
      andWord: casingArb('and'),
    }),
    { minLength: 1, maxLength: 5 },
  ),
});

function writeLiteral(out: Writer, literal: WrittenLiteral): WhereLiteral {
  switch (literal.kind) {
    case 'string': {
      const position = out.write(`"${literal.value.replace(/[\\"]/g, (char) => `\\${char}`)}"`);
      return { kind: 'string', value: literal.value, position };
    }
    case 'number':
      return {
        kind: 'number',
        value: Number(literal.text),
        text: literal.text,
        position: out.write(literal.text),
      };
    case 'boolean':
      return {
        kind: 'boolean',
        value: literal.text.toLowerCase() === 'true',
        position: out.write(literal.text),
      };
  }
}

function printWhere(input: { spaces: string[]; terms: WrittenTerm[] }): { text: string; ast: WhereClause } {
  const out = new Writer(input.spaces);
  const terms: WhereTerm[] = [];
  out.space();
  input.terms.forEach((term, index) => {
    if (index > 0) {
      out.requiredSpace();
      out.write(term.andWord);
      out.requiredSpace();
    }
    const position = out.position();
    const p: AttributePath = { segments: out.dotted(term.segments), position };
    if (term.operator === 'in') {
      out.requiredSpace();
      out.write(term.inWord);
      out.space();
      out.write('[');
      const values = term.values.map((literal, i) => {
        out.space();
        if (i > 0) {
          out.write(',');
          out.space();
        }
        return writeLiteral(out, literal);
      });
      out.space();
      out.write(']');
      terms.push({ kind: 'in', path: p, values });
    } else {
      out.space();
      out.write(term.operator);
      out.space();
      terms.push({
        kind: 'comparison',
        path: p,
        operator: term.operator,
        value: writeLiteral(out, term.values[0]!),
      });
    }
  });
  out.space();
  return { text: out.text, ast: { terms } };
}

type WrittenItem =
  | { kind: 'all' }
  | { kind: 'attribute'; name: string; alias: string | null }
  | { kind: 'related'; path: string[]; name: string; alias: string | null }
  | { kind: 'child'; name: string; items: WrittenItem[] }
  | { kind: 'relation'; relWord: string; name: string; items: WrittenItem[] };

const { item: itemArb } = fc.letrec<{ item: WrittenItem; items: WrittenItem[] }>((tie) => ({
  item: fc.oneof(
    { maxDepth: 5, depthSize: 'small' },
    fc.record({
      kind: fc.constant('attribute' as const),
      name: identifierArb,
      alias: fc.option(identifierArb),
    }),
    fc.constant({ kind: 'all' as const }),
    fc.record({
      kind: fc.constant('related' as const),
      path: fc.array(identifierArb, { minLength: 1, maxLength: 3 }),
      name: identifierArb,
      alias: fc.option(identifierArb),
    }),
    fc.record({ kind: fc.constant('child' as const), name: identifierArb, items: tie('items') }),
    fc.record({
      kind: fc.constant('relation' as const),
      relWord: casingArb('rel'),
      name: identifierArb,
      items: tie('items'),
    }),
  ),
  items: fc.array(tie('item'), { minLength: 1, maxLength: 4 }),
}));
const selectArb = fc.record({ spaces: spacesArb, items: fc.array(itemArb, { minLength: 1, maxLength: 5 }) });

function writeItems(out: Writer, items: readonly WrittenItem[]): SelectItem[] {
  return items.map((item, index) => {
    if (index > 0) {
      out.space();
      out.write(',');
    }
    out.space();
    return writeItem(out, item);
  });
}

function writeAlias(out: Writer, alias: string | null): { alias?: string } {
  if (alias === null) return {};
  out.space();
  out.write('--');
  out.space();
  out.write(alias);
  return { alias: alias.toLowerCase() };
}

function writeBraces(out: Writer, items: readonly WrittenItem[]): SelectItem[] {
  out.space();
  out.write('{');
  const written = writeItems(out, items);
  out.space();
  out.write('}');
  return written;
}

function writeItem(out: Writer, item: WrittenItem): SelectItem {
  const position = out.position();
  switch (item.kind) {
    case 'all':
      out.write('*');
      return { kind: 'all', position };
    case 'attribute': {
      out.write(item.name);
      return { kind: 'attribute', name: item.name.toLowerCase(), ...writeAlias(out, item.alias), position };
    }
    case 'related': {
      const names = out.dotted([...item.path, item.name]);
      return {
        kind: 'related',
        path: names.slice(0, -1),
        name: names.at(-1)!,
        ...writeAlias(out, item.alias),
        position,
      };
    }
    case 'child':
      out.write(item.name);
      return { kind: 'child', name: item.name.toLowerCase(), items: writeBraces(out, item.items), position };
    case 'relation': {
      const [, name] = out.dotted([item.relWord, item.name]);
      return { kind: 'relation', name: name!, items: writeBraces(out, item.items), position };
    }
  }
}

function printSelect(input: { spaces: string[]; items: WrittenItem[] }): { text: string; ast: SelectClause } {
  const out = new Writer(input.spaces);
  const items = writeItems(out, input.items);
  out.space();
  return { text: out.text, ast: { items } };
}

interface WrittenOrderTerm {
  /** `' '` is an unencoded `+` that URL decoding turned into a space. */
  sign: '+' | '-' | ' ';
  segments: string[];
}

const orderByArb = fc.record({
  spaces: spacesArb,
  terms: fc.array(
    fc.record({
      sign: fc.constantFrom<WrittenOrderTerm['sign']>('+', '-', ' '),
      segments: fc.array(identifierArb, { minLength: 1, maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 5 },
  ),
});

function printOrderBy(input: { spaces: string[]; terms: WrittenOrderTerm[] }): {
  text: string;
  ast: OrderByClause;
} {
  const out = new Writer(input.spaces);
  const terms = input.terms.map((term, index): OrderTerm => {
    if (index > 0) {
      out.space();
      out.write(',');
    }
    out.space();
    out.write(term.sign);
    if (term.sign !== ' ') out.space();
    const position = out.position();
    const name = out.dotted(term.segments).join('.');
    return { direction: term.sign === '-' ? 'desc' : 'asc', name, position };
  });
  out.space();
  return { text: out.text, ast: { terms } };
}

describe('round trips: printed syntax trees parse back to themselves', () => {
  it('oslc.where', () => {
    fc.assert(
      fc.property(whereArb, (input) => {
        const { text, ast } = printWhere(input);
        assert.deepEqual(parseWhere(text), ast);
      }),
      { numRuns: 3000 },
    );
  });

  it('oslc.select', () => {
    fc.assert(
      fc.property(selectArb, (input) => {
        const { text, ast } = printSelect(input);
        assert.deepEqual(parseSelect(text), ast);
      }),
      { numRuns: 3000 },
    );
  });

  it('oslc.orderBy', () => {
    fc.assert(
      fc.property(orderByArb, (input) => {
        const { text, ast } = printOrderBy(input);
        assert.deepEqual(parseOrderBy(text), ast);
      }),
      { numRuns: 3000 },
    );
  });
});

// ---- property: any input either parses or fails with a QueryParseError -----------------------------------

const FRAGMENTS = [
  'status',
  'a',
  'B_1',
  'and',
  'AND',
  'or',
  'in',
  'IN',
  'rel',
  'true',
  'false',
  '=',
  '!=',
  '!',
  '>',
  '>=',
  '<',
  '<=',
  '"',
  '\\',
  '"x"',
  '[',
  ']',
  '{',
  '}',
  '(',
  ')',
  ',',
  '.',
  '-',
  '--',
  '+',
  '*',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '1',
  '-2',
  '3.5',
  '007',
  "'",
  ';',
  '%2B',
  'é',
  '😀',
  '\ud800',
  '\udc00',
  '\u0000',
  '\u00a0',
  '__proto__',
  'constructor',
];

const validTextArb = fc.oneof(
  whereArb.map((input) => printWhere(input).text),
  selectArb.map((input) => printSelect(input).text),
  orderByArb.map((input) => printOrderBy(input).text),
);

/** A valid text of some language with one random edit: the inputs most likely to reach deep parser states. */
const mutatedArb = fc
  .tuple(
    validTextArb,
    fc.nat(),
    fc.constantFrom(...FRAGMENTS),
    fc.constantFrom('insert', 'delete', 'replace'),
  )
  .map(([text, at, fragment, edit]) => {
    const index = text.length === 0 ? 0 : at % text.length;
    const tail = edit === 'insert' ? text.slice(index) : text.slice(index + 1);
    return text.slice(0, index) + (edit === 'delete' ? '' : fragment) + tail;
  });

const anyTextArb = fc.oneof(
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: fc.constantFrom(...FRAGMENTS), maxLength: 40 }), weight: 4 },
  { arbitrary: mutatedArb, weight: 4 },
  {
    // Deep nesting and long runs.
    arbitrary: fc
      .tuple(
        fc.constantFrom('{', 'a{', 'rel.x{', '[', '"', '(', 'a.', 'a=1 and ', '-', '+a,', '\\', '\n'),
        fc.integer({ min: 0, max: 3000 }),
        fc.string({ unit: fc.constantFrom(...FRAGMENTS), maxLength: 5 }),
      )
      .map(([unit, count, tail]) => unit.repeat(count) + tail),
    weight: 1,
  },
);

function assertTotal(parse: Parser, parameter: Parameter, text: string): void {
  try {
    parse(text);
  } catch (error) {
    assert.ok(
      error instanceof QueryParseError,
      `${parameter} threw ${String(error)} for ${JSON.stringify(text)}`,
    );
    assert.equal(error.parameter, parameter);
    const lines = text.split('\n');
    const { line, column } = error.position;
    assert.ok(Number.isInteger(line) && line >= 1 && line <= lines.length, `line ${line} out of range`);
    const width = Array.from(lines[line - 1] ?? '').length;
    assert.ok(
      Number.isInteger(column) && column >= 1 && column <= width + 1,
      `column ${column} out of range`,
    );
  }
}

describe('total: every input parses or fails with a QueryParseError', () => {
  const parsers: [Parameter, Parser][] = [
    ['oslc.where', parseWhere],
    ['oslc.select', parseSelect],
    ['oslc.orderBy', parseOrderBy],
  ];
  for (const [parameter, parse] of parsers) {
    it(parameter, () => {
      fc.assert(
        fc.property(anyTextArb, (text) => assertTotal(parse, parameter, text)),
        { numRuns: 20_000 },
      );
    });
  }
});

describe('namespace prefixes on names', () => {
  /** The tree without positions: a prefixed text must mean what the bare text means. */
  const shape = (value: unknown): string =>
    JSON.stringify(value, (key, inner: unknown) => (key === 'position' ? undefined : inner));

  it('oslc.where: spi:, oslc:, rdf:, dcterms: name the attribute after them', () => {
    assert.equal(
      shape(parseWhere('spi:status in ["APPR"] and SPI:location.spi:siteid="A" and dcterms:title="x"')),
      shape(parseWhere('status in ["APPR"] and location.siteid="A" and title="x"')),
    );
    assert.equal(shape(parseWhere('oslc:x=1 and rdf:y=2')), shape(parseWhere('x=1 and y=2')));
  });

  it('oslc.select and oslc.orderBy', () => {
    assert.equal(
      shape(parseSelect('spi:assetnum,spi:location{spi:description},rdf:about')),
      shape(parseSelect('assetnum,location{description},about')),
    );
    assert.equal(
      shape(parseOrderBy('-spi:priority,+spi:assetnum')),
      shape(parseOrderBy('-priority,+assetnum')),
    );
  });

  it('a prefixed keyword is a name; an unknown prefix is refused', () => {
    assert.match(shape(parseWhere('spi:in=1')), /"in"/);
    assert.throws(() => parseWhere('foo:status="A"'));
  });
});
