import { parseWhere } from '../../src/oslc/query/parse.js';

/**
 * What is wrong with a content row's where clause as typed, by the parser the server runs when the definition is
 * written (docs/migration.md, "Where clauses"): the same `BMXAA8744E` text, so the page and the API never disagree
 * on syntax. Names are checked by the server only (it knows the object structure's attributes). Blank: all records.
 */
export function whereProblem(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  try {
    parseWhere(text);
    return undefined;
  } catch (failure) {
    return `BMXAA8744E - ${failure instanceof Error ? failure.message : String(failure)}`;
  }
}
