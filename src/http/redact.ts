/**
 * Credentials never reach the log in clear. Names are compared after decoding, as the query-string parser and
 * the form parser decode them: `api%6Bey` is the `apikey` parameter to them, so it is to the log (docs/security.md).
 */
const CREDENTIAL_NAMES: ReadonlySet<string> = new Set([
  'apikey',
  'maxauth',
  'j_password',
  'password',
  '_lpwd',
]);

export const REDACTED = '[redacted]';

/** Whether a parameter or field name, as sent (%-escapes, `+`), names a credential in any spelling. */
export function isCredentialName(rawName: string): boolean {
  let name = rawName.includes('+') ? rawName.replaceAll('+', ' ') : rawName;
  if (name.includes('%')) {
    try {
      name = decodeURIComponent(name);
    } catch {
      // An undecodable name is dropped by the parsers; its value is no credential to them.
      return false;
    }
  }
  return CREDENTIAL_NAMES.has(name.toLowerCase());
}

/** `application/x-www-form-urlencoded` text (a query string or a form body) with credential values replaced. */
export function redactForm(text: string): string {
  let changed = false;
  const parts = text.split('&');
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i]!;
    const equals = part.indexOf('=');
    if (equals === -1 || !isCredentialName(part.slice(0, equals))) continue;
    parts[i] = `${part.slice(0, equals + 1)}${REDACTED}`;
    changed = true;
  }
  return changed ? parts.join('&') : text;
}

/**
 * Query parameters whose values are logged as sent: those of the API that never carry a secret (docs/security.md,
 * "Credentials are not logged"). Every other value is redacted, whatever its name: a key sent under a name the
 * service does not accept (`apikey[]`, `apikey%00`, `x`) is refused, and must not be logged in clear either.
 */
const HARMLESS_PARAMETERS: ReadonlySet<string> = new Set([
  'lean',
  '_dropnulls',
  'action',
  'collectioncount',
  'count',
  'distinct',
  'dmpackagedef',
  'dmpackageid',
  'filename',
  'gbcols',
  'gbsortby',
  'ignorecollectionref',
  'ignorekeyref',
  'ignorers',
  'interactive',
  'internalvalues',
  'opmodeor',
  'oslc.orderby',
  'oslc.pagesize',
  'oslc.searchterms',
  'oslc.select',
  'oslc.where',
  'pageno',
  'propname',
  'propnames',
  'relativeuri',
  'responseos',
  'savedquery',
  'searchattributes',
  'stableid',
  'stablepaging',
  'tlattribute',
  'tlrange',
]);

/** A run of hexadecimal digits as long as a generated API key's (48): redacted even in a harmless parameter. */
const KEY_SHAPED = /[0-9a-f]{40,}/gi;

function decodedName(rawName: string): string | undefined {
  const name = rawName.includes('+') ? rawName.replaceAll('+', ' ') : rawName;
  if (!name.includes('%')) return name.toLowerCase();
  try {
    return decodeURIComponent(name).toLowerCase();
  } catch {
    return undefined;
  }
}

/** One `name=value` of a query string as logged. */
function redactParameter(part: string): string {
  const equals = part.indexOf('=');
  const name = decodedName(equals === -1 ? part : part.slice(0, equals));
  const harmless = name !== undefined && HARMLESS_PARAMETERS.has(name);
  // A bare word (`?<key>`) may be the secret itself: kept only when it is a harmless flag's name.
  if (equals === -1) return harmless ? part : REDACTED;
  const value = part.slice(equals + 1);
  // A key sent as a name (`<key>=1`) is no harmless name: only its shape gives it away.
  if (!harmless)
    return `${part.slice(0, equals + 1).replace(KEY_SHAPED, REDACTED)}${value === '' ? '' : REDACTED}`;
  return `${part.slice(0, equals + 1)}${value.replace(KEY_SHAPED, REDACTED)}`;
}

/**
 * A URL as logged: every query value redacted except those of harmless parameters, and in those any key-shaped run;
 * a URL without a query string is returned as it is.
 */
export function redactUrl(url: string): string {
  const query = url.indexOf('?');
  if (query === -1) return url;
  return `${url.slice(0, query + 1)}${url
    .slice(query + 1)
    .split('&')
    .map((part) => (part === '' ? part : redactParameter(part)))
    .join('&')}`;
}

/** A request body as logged: form text redacted, parsed fields named as credentials replaced. */
export function redactBody(body: unknown): unknown {
  if (typeof body === 'string') return redactForm(body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) copy[name] = isCredentialName(name) ? REDACTED : value;
  return copy;
}
