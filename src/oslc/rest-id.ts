/**
 * Rest ids (docs/compatibility.md, "Resource ids and hrefs"): `_` + base64 of the primary-key values joined by
 * `/`, with `+` written `_` and `=` written `-`; a null key part is `~NULL~`. Base64's `/` would split the URL path,
 * so it is written `.` (the deployed behaviour is not known here).
 */
const NULL_PART = '~NULL~';
/** A `/` inside a key value would read as a separator; it is written `~sp~` (and read back). */
const SLASH = '~sp~';

/** Key values joined by `/`; written without intermediate arrays, since every member of every page needs one. */
function keyText(parts: readonly KeyValue[]): string {
  let text = '';
  for (let index = 0; index < parts.length; index++) {
    if (index > 0) text += '/';
    const value = parts[index];
    const part = value === null || value === undefined ? NULL_PART : String(value);
    text += part.includes('/') ? part.replaceAll('/', SLASH) : part;
  }
  return text;
}

export type KeyValue = string | number | boolean | null;

function restBase64(text: string): string {
  let base64 = Buffer.from(text, 'utf8').toString('base64');
  if (base64.includes('+')) base64 = base64.replaceAll('+', '_');
  if (base64.includes('/')) base64 = base64.replaceAll('/', '.');
  return base64.endsWith('=') ? base64.replaceAll('=', '-') : base64;
}

export function encodeRestId(keyValues: readonly KeyValue[]): string {
  return `_${restBase64(keyText(keyValues))}`;
}

/** The key parts of a rest id, or undefined when it is not one (wrong alphabet, wrong number of parts). */
export function decodeRestId(restId: string, keyCount: number): Array<string | null> | undefined {
  if (!/^_[A-Za-z0-9_.-]+$/.test(restId)) return undefined;
  const base64 = restId.slice(1).replace(/_/g, '+').replace(/\./g, '/').replace(/-/g, '=');
  const text = Buffer.from(base64, 'base64').toString('utf8');
  if (Buffer.from(text, 'utf8').toString('base64') !== base64) return undefined;
  const parts = text.split('/');
  if (parts.length !== keyCount) return undefined;
  return parts.map((part) => (part === NULL_PART ? null : part.replaceAll(SLASH, '/')));
}

/** Anchor href of a child object (not dereferenceable, as in the deployed systems). */
export function childAnchor(parts: readonly KeyValue[]): string {
  return `http://childkey#${restBase64(keyText(parts))}`;
}

/**
 * The parts of a child anchor (`http://childkey#...`: parent object, child object, key values), or undefined when
 * the text is not one with that many parts.
 */
export function decodeChildAnchor(href: string, partCount: number): Array<string | null> | undefined {
  const prefix = 'http://childkey#';
  if (!href.startsWith(prefix)) return undefined;
  return decodeRestId(`_${href.slice(prefix.length)}`, partCount);
}
