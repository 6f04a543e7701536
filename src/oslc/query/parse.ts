/**
 * Parse stage of the OSLC query engine: turns the text of `oslc.where`, `oslc.select` and `oslc.orderBy` into the
 * syntax trees of `ast.ts`. Pure and metadata-free: names are only lower-cased here, `plan.ts` decides what they
 * mean.
 *
 * Each language has a small token table (`Lexicon`) fed to one shared lexer, and a recursive-descent parser
 * on top. Errors copy the shape of Maximo's JavaCC-generated parser (`Encountered " <IDENTIFIER> "or "" at line
 * 1, column 14. Was expecting: <BOOLEAN_OP> ...`), because clients match on that text; every rejection is a
 * `QueryParseError`, never anything else.
 *
 * Grammar decisions where the Maximo documentation is silent:
 * - Identifiers are ASCII only (`[A-Za-z_][A-Za-z0-9_]*`): Maximo attribute names are database column names.
 * - In `oslc.where`, `and`, `in`, `true` and `false` are reserved words (any case), so they cannot name attributes;
 *   `or` is not a word of the language and lexes as an ordinary identifier, which is what produces the familiar
 *   `Encountered " <IDENTIFIER> "or ""` message.
 * - Numbers are `-?digits(.digits)?`: no exponent, no leading `+` or `.`. A number running straight into letters
 *   (`1and`, `3abc`) is one invalid token rather than two, so words are always separated.
 * - Inside strings only `\"` and `\\` are escapes; any other backslash is kept as written, so Windows paths and
 *   regex-like patterns survive. Strings may span lines.
 * - Whitespace (space, tab, CR, LF, form feed) is allowed between any two tokens, including around `.` and `--`.
 * - Columns count Unicode code points, a tab counts as one column, and only LF starts a new line.
 * - Positions point at the first character of what they describe: the first segment of a path, the opening
 *   quote or minus sign of a literal, `rel` of a relation, and the name (not the sign) of an order-by term.
 */
import {
  QueryParseError,
  type AggregateFunction,
  type AttributePath,
  type GroupByClause,
  type GroupColumn,
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

type Parameter = QueryParseError['parameter'];

/**
 * Deepest `{` nesting accepted in `oslc.select`. Real object structures are a few levels deep; the cap keeps
 * the recursive descent far away from the call-stack limit whatever a client sends.
 */
export const MAX_SELECT_DEPTH = 16;

/** Longest token text quoted in an error message, so a megabyte-long identifier does not become the message. */
const MAX_ERROR_TOKEN_LENGTH = 64;

// ---- tokens -----------------------------------------------------------------------------------------------

/**
 * Token classes, named as the JavaCC parser names them in its messages: `<CLASS>` for open classes, the quoted
 * image (`"="`) for fixed tokens.
 */
const IDENTIFIER = '<IDENTIFIER>';
const STRING = '<STRING>';
const NUMBER = '<NUMBER>';
const BOOLEAN = '<BOOLEAN>';
const BOOLEAN_OP = '<BOOLEAN_OP>';
const IN = '<IN>';
const EOF = '<EOF>';
/** A character (or digit-led word) no token of the language starts with. */
const UNKNOWN = '<UNKNOWN>';
/** A `"` with no closing quote before the end of the text. */
const UNTERMINATED_STRING = '<UNTERMINATED_STRING>';

function fixed(image: string): string {
  return `"${image}"`;
}

interface Token {
  /** Token class, also the `tokenKind` of a `QueryParseError` raised at this token. */
  readonly kind: string;
  /** Source text as written (a string token keeps its quotes and escapes). */
  readonly text: string;
  /** For `<STRING>`: the text between the quotes with escapes resolved; otherwise equal to `text`. */
  readonly value: string;
  readonly position: Position;
  /** UTF-16 index of the first character, for the order-by rule that looks at the character before a name. */
  readonly offset: number;
}

interface Lexicon {
  /** Fixed tokens of the language; matched longest first, so `!=` wins over `!` and `>=` over `>`. */
  readonly punctuation: readonly string[];
  /** Reserved words, lower case, with their token class; matched case-insensitively. */
  readonly keywords: ReadonlyMap<string, string>;
  /** Whether `"..."` string literals and `-?digits(.digits)?` number literals exist in the language. */
  readonly literals: boolean;
}

const WHERE_LEXICON: Lexicon = {
  punctuation: ['!=', '>=', '<=', '=', '>', '<', '[', ']', ',', '.'],
  keywords: new Map([
    ['and', BOOLEAN_OP],
    ['in', IN],
    ['true', BOOLEAN],
    ['false', BOOLEAN],
  ]),
  literals: true,
};

const SELECT_LEXICON: Lexicon = {
  punctuation: ['--', '*', ',', '.', '{', '}'],
  keywords: new Map(),
  literals: false,
};

const ORDER_BY_LEXICON: Lexicon = {
  punctuation: ['+', '-', ',', '.'],
  keywords: new Map(),
  literals: false,
};

const GROUP_BY_LEXICON: Lexicon = {
  punctuation: ['*', ',', '.'],
  keywords: new Map(),
  literals: false,
};

const COMPARISON_OPERATORS: ReadonlyMap<string, ComparisonOperator> = new Map(
  (['=', '!=', '>', '>=', '<', '<='] as const).map((operator) => [fixed(operator), operator]),
);

const WHITESPACE = new Set([' ', '\t', '\n', '\r', '\f']);

function isWhitespace(char: string | undefined): boolean {
  return char !== undefined && WHITESPACE.has(char);
}

/** Namespace prefixes namespaced (lean=0) clients put before attribute names; the name after them counts. */
export const NAME_PREFIXES: ReadonlySet<string> = new Set(['spi', 'oslc', 'rdf', 'rdfs', 'dcterms']);

function isDigit(char: string | undefined): boolean {
  return char !== undefined && char >= '0' && char <= '9';
}

function isIdentifierStart(char: string | undefined): boolean {
  return char !== undefined && ((char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z') || char === '_');
}

function isIdentifierPart(char: string | undefined): boolean {
  return isIdentifierStart(char) || isDigit(char);
}

/** Length in UTF-16 units of the code point at `index` (a lone surrogate counts as one code point). */
function codePointLength(text: string, index: number): number {
  const high = text.charCodeAt(index);
  if (high >= 0xd800 && high <= 0xdbff) {
    const low = text.charCodeAt(index + 1);
    if (low >= 0xdc00 && low <= 0xdfff) return 2;
  }
  return 1;
}

/**
 * Hands out tokens one at a time (the parsers need one token of lookahead), so text after the first error is
 * never scanned. Never fails: what no token starts with becomes an `<UNKNOWN>` token, which the parser rejects
 * with what it expected there.
 */
class Lexer {
  private readonly punctuation: readonly string[];
  private index = 0;
  private line = 1;
  private column = 1;

  constructor(
    private readonly text: string,
    private readonly lexicon: Lexicon,
  ) {
    this.punctuation = [...lexicon.punctuation].sort((a, b) => b.length - a.length);
  }

  next(): Token {
    const text = this.text;
    this.advanceTo(this.scanWhile(this.index, isWhitespace));
    const position = { line: this.line, column: this.column };
    const start = this.index;
    if (start >= text.length) return { kind: EOF, text: '', value: '', position, offset: start };

    const char = text[start];
    let kind: string;
    let end: number;
    let value: string | undefined;
    let nameStart = start;
    if (isIdentifierStart(char)) {
      end = this.scanWhile(start, isIdentifierPart);
      // `spi:status`: the namespaced form names the attribute (docs/compatibility.md, "Queries").
      if (
        text[end] === ':' &&
        isIdentifierStart(text[end + 1]) &&
        NAME_PREFIXES.has(text.slice(start, end).toLowerCase())
      ) {
        nameStart = end + 1;
        end = this.scanWhile(nameStart, isIdentifierPart);
        kind = IDENTIFIER;
      } else {
        kind = this.lexicon.keywords.get(text.slice(start, end).toLowerCase()) ?? IDENTIFIER;
      }
    } else if (this.lexicon.literals && (isDigit(char) || (char === '-' && isDigit(text[start + 1])))) {
      end = this.scanWhile(start + 1, isDigit);
      if (text[end] === '.' && isDigit(text[end + 1])) end = this.scanWhile(end + 1, isDigit);
      kind = NUMBER;
      if (isIdentifierPart(text[end])) {
        end = this.scanWhile(end, isIdentifierPart);
        kind = UNKNOWN;
      }
    } else if (isDigit(char)) {
      // Identifiers may not start with a digit; keep the whole word together so the error names all of it.
      end = this.scanWhile(start, isIdentifierPart);
      kind = UNKNOWN;
    } else if (this.lexicon.literals && char === '"') {
      const scanned = scanString(text, start);
      end = scanned.end;
      kind = scanned.value === undefined ? UNTERMINATED_STRING : STRING;
      value = scanned.value;
    } else {
      const image = this.punctuation.find((candidate) => text.startsWith(candidate, start));
      if (image !== undefined) {
        end = start + image.length;
        kind = fixed(image);
      } else {
        end = start + codePointLength(text, start);
        kind = UNKNOWN;
      }
    }

    const tokenText = kind === UNTERMINATED_STRING ? '"' : text.slice(nameStart, end);
    this.advanceTo(end);
    return { kind, text: tokenText, value: value ?? tokenText, position, offset: start };
  }

  private scanWhile(from: number, predicate: (char: string | undefined) => boolean): number {
    let end = from;
    while (end < this.text.length && predicate(this.text[end])) end += 1;
    return end;
  }

  /** Moves to `end`, keeping line and column (in code points) up to date. */
  private advanceTo(end: number): void {
    while (this.index < end) {
      if (this.text.charCodeAt(this.index) === 10) {
        this.line += 1;
        this.column = 1;
        this.index += 1;
      } else {
        this.column += 1;
        this.index += codePointLength(this.text, this.index);
      }
    }
  }
}

/**
 * Reads the string literal whose opening quote is at `start`. Returns its resolved value and the index after
 * the closing quote, or no value (and the end of the text) when the closing quote is missing.
 */
function scanString(text: string, start: number): { value: string | undefined; end: number } {
  const chunks: string[] = [];
  let chunkStart = start + 1;
  let index = chunkStart;
  while (index < text.length) {
    const char = text[index];
    if (char === '"') {
      chunks.push(text.slice(chunkStart, index));
      return { value: chunks.join(''), end: index + 1 };
    }
    if (char === '\\') {
      const next = text[index + 1];
      if (next === '"' || next === '\\') {
        chunks.push(text.slice(chunkStart, index), next);
        index += 2;
        chunkStart = index;
        continue;
      }
    }
    index += 1;
  }
  return { value: undefined, end: text.length };
}

// ---- parser core ------------------------------------------------------------------------------------------

/**
 * Token cursor with JavaCC-style error reporting: every optional token that was looked for and not found at
 * the current position is remembered, so an error lists everything that could have come next.
 */
class TokenStream {
  private readonly lexer: Lexer;
  private current: Token;
  private missed: string[] = [];

  constructor(
    private readonly parameter: Parameter,
    readonly text: string,
    lexicon: Lexicon,
  ) {
    this.lexer = new Lexer(text, lexicon);
    this.current = this.lexer.next();
  }

  peek(): Token {
    return this.current;
  }

  /** Consumes and returns the next token if its class is one of `kinds`; otherwise notes them as expected. */
  accept(...kinds: readonly string[]): Token | undefined {
    const token = this.peek();
    if (kinds.includes(token.kind)) {
      if (token.kind !== EOF) this.current = this.lexer.next();
      this.missed = [];
      return token;
    }
    this.missed.push(...kinds.filter((kind) => !this.missed.includes(kind)));
    return undefined;
  }

  /** Consumes the next token, which must be of one of `kinds`. */
  expect(...kinds: readonly string[]): Token {
    return this.accept(...kinds) ?? this.fail();
  }

  /** Requires the end of the text; `<EOF>` itself is not listed as expected, as in Maximo's messages. */
  expectEnd(): void {
    if (this.peek().kind !== EOF) this.fail();
  }

  /** Rejects the next token, listing what was looked for at this position. */
  fail(): never {
    this.failAt(this.peek(), this.missed);
  }

  failAt(token: Token, expected: readonly string[]): never {
    // Counting code points of the first 2n+1 UTF-16 units is enough: any longer text has more than n of them.
    const head = Array.from(token.text.slice(0, 2 * MAX_ERROR_TOKEN_LENGTH + 1));
    const shown =
      head.length > MAX_ERROR_TOKEN_LENGTH
        ? `${head.slice(0, MAX_ERROR_TOKEN_LENGTH).join('')}...`
        : token.text;
    throw new QueryParseError(this.parameter, token.kind, shown, { ...token.position }, expected);
  }
}

/**
 * Runs a parser on a value that should be a string. Typed callers always pass one, but a repeated query
 * parameter arrives as an array from an untyped one, and that must fail as a parse error too.
 */
function guarded<T>(parameter: Parameter, text: unknown, parse: (text: string) => T): T {
  if (typeof text !== 'string') throw new QueryParseError(parameter, UNKNOWN, '', { line: 1, column: 1 }, []);
  return parse(text);
}

function identifierName(token: Token): string {
  return token.text.toLowerCase();
}

/** `name(.name)*`, lower-cased; the first identifier has already been read. */
function parseDottedName(stream: TokenStream, first: Token): string[] {
  const segments = [identifierName(first)];
  while (stream.accept(fixed('.'))) segments.push(identifierName(stream.expect(IDENTIFIER)));
  return segments;
}

// ---- oslc.where -------------------------------------------------------------------------------------------

/**
 * Parses an `oslc.where` value: `term (and term)*`, where a term is `path op literal` or `path in [literal, ...]`.
 * An empty value is an error; callers skip the parameter when it is absent.
 */
export function parseWhere(text: string): WhereClause {
  return guarded('oslc.where', text, (source) => {
    const stream = new TokenStream('oslc.where', source, WHERE_LEXICON);
    const terms: WhereTerm[] = [];
    do terms.push(parseWhereTerm(stream));
    while (stream.accept(BOOLEAN_OP));
    stream.expectEnd();
    return { terms };
  });
}

function parseWhereTerm(stream: TokenStream): WhereTerm {
  const first = stream.expect(IDENTIFIER);
  const path: AttributePath = { segments: parseDottedName(stream, first), position: first.position };

  const operator = COMPARISON_OPERATORS.get(stream.accept(...COMPARISON_OPERATORS.keys())?.kind ?? '');
  if (operator) return { kind: 'comparison', path, operator, value: parseLiteral(stream) };
  stream.expect(IN);
  stream.expect(fixed('['));
  const values: WhereLiteral[] = [];
  do values.push(parseLiteral(stream));
  while (stream.accept(fixed(',')));
  stream.expect(fixed(']'));
  return { kind: 'in', path, values };
}

function parseLiteral(stream: TokenStream): WhereLiteral {
  const token = stream.expect(STRING, NUMBER, BOOLEAN);
  const position = token.position;
  switch (token.kind) {
    case STRING:
      return { kind: 'string', value: token.value, position };
    case NUMBER: {
      const value = Number(token.text);
      // `text` is what numeric comparisons use, but a `value` of Infinity would mislead every other reader.
      if (!Number.isFinite(value)) stream.failAt(token, ['a finite <NUMBER>']);
      return { kind: 'number', value, text: token.text, position };
    }
    default:
      return { kind: 'boolean', value: token.text.toLowerCase() === 'true', position };
  }
}

// ---- oslc.select ------------------------------------------------------------------------------------------

/**
 * Parses an `oslc.select` value: comma-separated `*`, `attr`, `attr--alias`, `rel1.attr[--alias]`,
 * `child{items}` and `rel.relation{items}`, nested at most `MAX_SELECT_DEPTH` braces deep.
 */
export function parseSelect(text: string): SelectClause {
  return guarded('oslc.select', text, (source) => {
    const stream = new TokenStream('oslc.select', source, SELECT_LEXICON);
    const items = parseSelectItems(stream, 0);
    stream.expectEnd();
    return { items };
  });
}

function parseSelectItems(stream: TokenStream, depth: number): SelectItem[] {
  const items: SelectItem[] = [];
  do items.push(parseSelectItem(stream, depth));
  while (stream.accept(fixed(',')));
  return items;
}

function parseSelectItem(stream: TokenStream, depth: number): SelectItem {
  const first = stream.expect(fixed('*'), IDENTIFIER);
  const position = first.position;
  if (first.kind === fixed('*')) return { kind: 'all', position };

  const names = parseDottedName(stream, first);
  // Braces follow a plain name (child object) or `rel.name` (relation); anywhere else `{` is simply not expected.
  const isChild = names.length === 1;
  const isRelation = names.length === 2 && names[0] === 'rel';
  if (isChild || isRelation) {
    const open = stream.peek();
    if (stream.accept(fixed('{'))) {
      if (depth >= MAX_SELECT_DEPTH) stream.failAt(open, [`at most ${MAX_SELECT_DEPTH} nested "{" levels`]);
      const items = parseSelectItems(stream, depth + 1);
      stream.expect(fixed('}'));
      const name = names[names.length - 1]!;
      return isChild ? { kind: 'child', name, items, position } : { kind: 'relation', name, items, position };
    }
  }

  const alias = stream.accept(fixed('--')) ? identifierName(stream.expect(IDENTIFIER)) : undefined;
  const name = names[names.length - 1]!;
  const aliased = alias === undefined ? {} : { alias };
  return names.length === 1
    ? { kind: 'attribute', name, ...aliased, position }
    : { kind: 'related', path: names.slice(0, -1), name, ...aliased, position };
}

// ---- oslc.orderBy -----------------------------------------------------------------------------------------

/**
 * Parses an `oslc.orderBy` value: comma-separated `+name` / `-name`, names being attributes or dot paths.
 *
 * Every term needs a direction, but `+` is special in a query string: a client that does not encode it as `%2B`
 * sends a `+`, which URL decoding turns into a space. So a name with no sign that directly follows a space (at
 * the start of the value, or after `, `) is read as ascending. Only a space qualifies, since that is all a
 * decoded `+` can become; `attr` alone, or a tab before it, still fails.
 */
export function parseOrderBy(text: string): OrderByClause {
  return guarded('oslc.orderBy', text, (source) => {
    const stream = new TokenStream('oslc.orderBy', source, ORDER_BY_LEXICON);
    const terms: OrderTerm[] = [];
    do terms.push(parseOrderTerm(stream));
    while (stream.accept(fixed(',')));
    stream.expectEnd();
    return { terms };
  });
}

function parseOrderTerm(stream: TokenStream): OrderTerm {
  const sign = stream.accept(fixed('+'), fixed('-'));
  const next = stream.peek();
  if (!sign && !(next.kind === IDENTIFIER && stream.text[next.offset - 1] === ' ')) stream.fail();
  const first = stream.expect(IDENTIFIER);
  return {
    direction: sign?.text === '-' ? 'desc' : 'asc',
    name: parseDottedName(stream, first).join('.'),
    position: first.position,
  };
}

// ---- gbcols -----------------------------------------------------------------------------------------------

const AGGREGATES: ReadonlySet<string> = new Set<AggregateFunction>(['count', 'sum', 'avg', 'min', 'max']);

/**
 * Parses a `gbcols` value: `column (, column)*`, where a column is a group attribute (`status`) or an aggregate
 * `fn.attr` with `fn` one of `count`, `sum`, `avg`, `min`, `max` (`count.*` counts rows). An attribute named
 * like a function is a group attribute when no `.` follows it.
 */
export function parseGroupBy(text: string): GroupByClause {
  return guarded('gbcols', text, (source) => {
    const stream = new TokenStream('gbcols', source, GROUP_BY_LEXICON);
    const columns: GroupColumn[] = [];
    do columns.push(parseGroupColumn(stream));
    while (stream.accept(fixed(',')));
    stream.expectEnd();
    return { columns };
  });
}

function parseGroupColumn(stream: TokenStream): GroupColumn {
  const first = stream.expect(IDENTIFIER);
  const name = identifierName(first);
  if (!AGGREGATES.has(name) || !stream.accept(fixed('.'))) {
    return { kind: 'attribute', name, position: first.position };
  }
  const fn = name as AggregateFunction;
  const target = fn === 'count' ? stream.expect(fixed('*'), IDENTIFIER) : stream.expect(IDENTIFIER);
  return {
    kind: 'aggregate',
    fn,
    name: target.kind === IDENTIFIER ? identifierName(target) : '*',
    position: first.position,
  };
}
