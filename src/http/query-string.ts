import { BoundedCache } from '../util/bounded-cache.js';
import { ParameterNames } from './parameter-names.js';

type QueryParameters = Record<string, string>;

/**
 * Parameter objects inherit nothing (a parameter named `constructor` or `__proto__` is just a parameter), yet stay
 * in V8's fast mode, which `Object.create(null)` objects do not.
 */
const Parameters = function Parameters() {} as unknown as new () => QueryParameters;
Parameters.prototype = Object.create(null) as object;

/** The names the service reads, without those of route schemas (an application adds them to its own). */
const FREE_FORM_NAMES = new ParameterNames();

/**
 * Query strings as clients send them (docs/compatibility.md): a leading `?&`, empty parameters and repeated ones
 * (the first wins). Values stay strings; a known parameter name in any case is spelled as the service reads it
 * (`addSchema` is `addschema`), except `savedQuery`, which is case-sensitive ("Query parameter names").
 */
export function parseQueryString(text: string, names: ParameterNames = FREE_FORM_NAMES): QueryParameters {
  const result = new Parameters();
  for (const part of text.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const rawName = equals === -1 ? part : part.slice(0, equals);
    const rawValue = equals === -1 ? '' : part.slice(equals + 1);
    const decoded = decode(rawName);
    if (decoded === undefined || decoded === '') continue;
    const name = names.spelled(decoded);
    if (Object.hasOwn(result, name)) continue;
    const value = decode(rawValue);
    if (value !== undefined) result[name] = value;
  }
  return result;
}

function decode(text: string): string | undefined {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return undefined;
  }
}

/** `lean=1|true` or `lean=0|false`; undefined when absent or unreadable. */
export function readFlag(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  if (lower === '1' || lower === 'true') return true;
  if (lower === '0' || lower === 'false') return false;
  return undefined;
}

/**
 * `parseQueryString` for the router, kept by text: clients repeat their queries, and decoding costs more than a
 * copy (src/http/README.md, "Caches"). Each request gets its own copy, since validation may change the object it is
 * given. One parser per application, so that the cache lives and goes with the application that made it; `names`
 * are the application's (its routes' schemas add theirs as they register, before any request is parsed).
 */
export function createQueryStringParser(
  names: ParameterNames = new ParameterNames(),
): (text: string) => QueryParameters {
  const parsedQueries = new BoundedCache<string, Readonly<QueryParameters>>(512);
  const parse = (text: string) => parseQueryString(text, names);
  return (text) => Object.assign(new Parameters(), parsedQueries.getOrCompute(text, parse));
}
