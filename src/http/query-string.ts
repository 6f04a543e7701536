import { BoundedCache } from '../util/bounded-cache.js';

type QueryParameters = Record<string, string>;

/**
 * Parameter objects inherit nothing (a parameter named `constructor` or `__proto__` is just a parameter), yet stay
 * in V8's fast mode, which `Object.create(null)` objects do not.
 */
const Parameters = function Parameters() {} as unknown as new () => QueryParameters;
Parameters.prototype = Object.create(null) as object;

/**
 * Query strings as clients send them (docs/compatibility.md): a leading `?&`, empty parameters and repeated ones
 * (the first wins). Values stay strings; parameter names keep their case (`savedQuery` is case-sensitive).
 */
export function parseQueryString(text: string): QueryParameters {
  const result = new Parameters();
  for (const part of text.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const rawName = equals === -1 ? part : part.slice(0, equals);
    const rawValue = equals === -1 ? '' : part.slice(equals + 1);
    const name = decode(rawName);
    if (name === undefined || name === '' || Object.hasOwn(result, name)) continue;
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
 * given. One parser per application, so that the cache lives and goes with the application that made it.
 */
export function createQueryStringParser(): (text: string) => QueryParameters {
  const parsedQueries = new BoundedCache<string, Readonly<QueryParameters>>(512);
  return (text) =>
    Object.assign(
      new Parameters(),
      parsedQueries.getOrCompute(text, () => parseQueryString(text)),
    );
}
