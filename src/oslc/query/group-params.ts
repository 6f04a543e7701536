import { errors } from '../../errors.js';

/**
 * Parsing of `gbfilter` and `gbrange` (docs/compatibility.md, "Group-by"): plain syntax trees, every name still
 * unresolved (the plan stage resolves them against the metadata and the `gbcols` columns).
 */

export type GroupFilterOp = '=' | '!=' | '>' | '>=' | '<' | '<=';

export type GroupFilter =
  | { kind: 'and' | 'or'; terms: readonly GroupFilter[] }
  /** `count>2`, `sum.estdur>=10`, `status="APPR"`: `key` lower case as sent. */
  | { kind: 'compare'; key: string; op: GroupFilterOp; value: string | number };

/** One range of `gbrange`: values that form one group (`[APPR:WAPPR]`) or an interval (`[1..3)`). */
export type GroupRangeText =
  | { kind: 'values'; values: readonly string[] }
  | { kind: 'interval'; low: number; high: number; lowInclusive: boolean; highInclusive: boolean };

/** `gbrange` by attribute name (lower case): its ranges in the order sent. */
export type GroupRangeClause = ReadonlyMap<string, readonly GroupRangeText[]>;

const TOKEN =
  /\s*(?:(?<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?<number>-?\d+(?:\.\d+)?)|(?<op>!=|<>|>=|<=|=|>|<)|(?<paren>[()])|(?<name>[A-Za-z_][\w]*(?:\.(?:\*|[A-Za-z_]\w*))?))/y;

type Token = { kind: 'string' | 'number' | 'op' | 'paren' | 'name'; text: string };

function tokens(text: string): Token[] {
  const list: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    if (/^\s*$/.test(text.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(text);
    if (!match?.groups) throw refused('gbfilter', text, `cannot be read at position ${at + 1}`);
    const [kind, value] = Object.entries(match.groups).find(([, part]) => part !== undefined)!;
    list.push({ kind: kind as Token['kind'], text: value! });
  }
  return list;
}

function refused(parameter: 'gbfilter' | 'gbrange', text: string, why: string) {
  return errors.badRequest(`The ${parameter} value ${text} ${why}.`, {
    attrName: parameter,
    attrValue: text,
  });
}

/**
 * `gbfilter`: the groups' HAVING clause, `term ((and|or) term)*` with parentheses, `and` binding tighter; a term is
 * `<key> <op> <value>` where the key is an aggregate (`count`, `count.*`, `sum.estdur` or `sum_estdur`) or a group
 * attribute, and the value a number or a quoted string.
 */
export function parseGroupFilter(text: string): GroupFilter {
  const list = tokens(text);
  let index = 0;
  const peek = (): Token | undefined => list[index];
  const isWord = (word: string): boolean => peek()?.kind === 'name' && peek()!.text.toLowerCase() === word;
  const disjunction = (): GroupFilter => {
    const terms = [conjunction()];
    while (isWord('or')) {
      index++;
      terms.push(conjunction());
    }
    return terms.length === 1 ? terms[0]! : { kind: 'or', terms };
  };
  const conjunction = (): GroupFilter => {
    const terms = [term()];
    while (isWord('and')) {
      index++;
      terms.push(term());
    }
    return terms.length === 1 ? terms[0]! : { kind: 'and', terms };
  };
  const term = (): GroupFilter => {
    const first = list[index++];
    if (first?.kind === 'paren' && first.text === '(') {
      const inner = disjunction();
      if (list[index++]?.text !== ')') throw refused('gbfilter', text, 'misses a closing parenthesis');
      return inner;
    }
    const op = list[index++];
    const value = list[index++];
    if (
      first?.kind !== 'name' ||
      op?.kind !== 'op' ||
      (value?.kind !== 'number' && value?.kind !== 'string')
    ) {
      throw refused('gbfilter', text, 'is not a list of terms like count>2 or sum.estdur>=10');
    }
    return {
      kind: 'compare',
      key: first.text.toLowerCase(),
      op: op.text === '<>' ? '!=' : (op.text as GroupFilterOp),
      value: value.kind === 'number' ? Number(value.text) : value.text.slice(1, -1).replace(/\\(.)/g, '$1'),
    };
  };
  const filter = disjunction();
  if (index !== list.length) throw refused('gbfilter', text, 'has text after its last term');
  return filter;
}

const RANGE_ENTRY = /\s*([A-Za-z_]\w*)\s*=\s*\{([^{}]*)\}\s*(?:[,;]|$)/y;
const INTERVAL = /^([[(])\s*(-?\d+(?:\.\d+)?)\s*\.\.\s*(-?\d+(?:\.\d+)?)\s*([\])])$/;
const VALUES = /^\[([^[\]]*)\]$/;

/**
 * `gbrange`: `attr={range,range,...}` for one or more group attributes (separated by `,` or `;`); a range is a
 * list of values forming one group (`[APPR:WAPPR]`) or a numeric interval (`[1..3]`, `(3..7)`, `[4..7)`).
 */
export function parseGroupRange(text: string): GroupRangeClause {
  const clause = new Map<string, GroupRangeText[]>();
  RANGE_ENTRY.lastIndex = 0;
  while (RANGE_ENTRY.lastIndex < text.length) {
    const match = RANGE_ENTRY.exec(text);
    if (!match)
      throw refused(
        'gbrange',
        text,
        'is not a list like status={[APPR:WAPPR]} or wopriority={[1..3],[4..7)}',
      );
    const ranges = (match[2]!.match(/[[(][^\])]*[\])]/g) ?? []).map((range) =>
      parseRange(text, range.trim()),
    );
    if (ranges.length === 0) throw refused('gbrange', text, `gives no range for ${match[1]}`);
    clause.set(match[1]!.toLowerCase(), ranges);
  }
  return clause;
}

function parseRange(text: string, range: string): GroupRangeText {
  const interval = INTERVAL.exec(range);
  if (interval) {
    return {
      kind: 'interval',
      low: Number(interval[2]),
      high: Number(interval[3]),
      lowInclusive: interval[1] === '[',
      highInclusive: interval[4] === ']',
    };
  }
  const values = VALUES.exec(range);
  if (!values || values[1]!.trim() === '')
    throw refused('gbrange', text, `has a range ${range} that is not understood`);
  return { kind: 'values', values: values[1]!.split(':').map((value) => value.trim()) };
}
