import { errors } from '../../errors.js';
import { NAME_PREFIXES } from './parse.js';

/**
 * Parse stage of `oslc.searchTerms` and `searchAttributes` (docs/compatibility.md, "Queries"): the terms a client typed into
 * a search box, and the attributes they are looked for in. The plan stage turns every (term, attribute) pair
 * into a case-insensitive "contains" test and ORs them all.
 */
export interface SearchRequest {
  /** Words, and phrases written `""oil level""`; each is looked for as it is, wildcards included literally. */
  terms: readonly string[];
  /** Attribute names, lower case; absent: the structure's key attributes and description. */
  attributes?: readonly string[];
}

/** Every term costs one comparison per attribute; a search box never needs more than this. */
export const MAX_SEARCH_TERMS = 32;

/** Two pairs of double quotes around a phrase, as the deployed systems write an exact phrase. */
const PHRASE_QUOTE = '""';

/**
 * Splits the search text into terms: whitespace separates words, `""...""` keeps a phrase whole. Single
 * double quotes around a word are dropped, since a word in quotes means the word. Empty text gives no terms.
 */
export function parseSearchTerms(text: string): string[] {
  const terms: string[] = [];
  let rest = text;
  while (rest.length > 0) {
    const start = rest.indexOf(PHRASE_QUOTE);
    const before = start === -1 ? rest : rest.slice(0, start);
    terms.push(...words(before));
    if (start === -1) break;
    const end = rest.indexOf(PHRASE_QUOTE, start + PHRASE_QUOTE.length);
    // An unclosed phrase runs to the end of the text: the closing quotes are the likeliest thing missing.
    const phrase = rest.slice(start + PHRASE_QUOTE.length, end === -1 ? undefined : end).trim();
    if (phrase !== '') terms.push(phrase);
    rest = end === -1 ? '' : rest.slice(end + PHRASE_QUOTE.length);
  }
  const unique = [...new Set(terms)];
  if (unique.length > MAX_SEARCH_TERMS) {
    throw errors.badRequest(`At most ${MAX_SEARCH_TERMS} search terms can be given.`, {
      attrName: 'oslc.searchTerms',
      attrValue: unique.length,
    });
  }
  return unique;
}

function words(text: string): string[] {
  return text
    .split(/\s+/)
    .map((word) => word.replace(/^"+|"+$/g, ''))
    .filter((word) => word !== '');
}

/**
 * `searchAttributes=assetnum, Description` → `['assetnum', 'description']`; empty gives none. Names may be quoted
 * and the list may end with a comma, as IBM's Python client sends it (`"description",`; docs/compatibility.md).
 */
export function parseSearchAttributes(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((name) => withoutPrefix(unquoted(name.trim()).toLowerCase()))
        .filter((name) => name !== ''),
    ),
  ];
}

const QUOTED = /^(["'])(.*)\1$/;

/** `"description"` or `'description'` → `description`. */
function unquoted(name: string): string {
  const match = QUOTED.exec(name);
  return match ? match[2]!.trim() : name;
}

/** `spi:description` → `description` (docs/compatibility.md, "Queries"). */
function withoutPrefix(name: string): string {
  const colon = name.indexOf(':');
  return colon > 0 && NAME_PREFIXES.has(name.slice(0, colon)) ? name.slice(colon + 1) : name;
}

/** A LIKE pattern that finds the term anywhere, with the term's own `%`, `_` and `\` taken literally. */
export function containsPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}
