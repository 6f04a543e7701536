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

/** A URL as logged: the query string redacted; a URL without one is returned as it is. */
export function redactUrl(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query + 1) + redactForm(url.slice(query + 1));
}

/** A request body as logged: form text redacted, parsed fields named as credentials replaced. */
export function redactBody(body: unknown): unknown {
  if (typeof body === 'string') return redactForm(body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) copy[name] = isCredentialName(name) ? REDACTED : value;
  return copy;
}
