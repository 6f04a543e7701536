import { ServerResponse, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { preParsingHookHandler } from 'fastify';

/**
 * Header names as the deployed systems' application server writes them (docs/compatibility.md, "Header names"):
 * Fastify keeps every response header under its lower-case name, and some clients look headers up with a
 * case-sensitive `"Set-Cookie"`. Names not listed here are written in the usual `Word-Word` form.
 */
const SPELLED: Readonly<Record<string, string>> = {
  etag: 'ETag',
  'www-authenticate': 'WWW-Authenticate',
  'content-md5': 'Content-MD5',
  'x-xss-protection': 'X-XSS-Protection',
  // The deployed systems' own headers are lower case.
  csrftoken: 'csrftoken',
};

/** Names seen so far and their spelling; response header names are a small, fixed set. */
const spellings = new Map<string, string>(Object.entries(SPELLED));
const MAX_SPELLINGS = 1024;

export function canonicalHeaderName(name: string): string {
  const known = spellings.get(name);
  if (known !== undefined) return known;
  const lower = name.toLowerCase();
  const spelled =
    SPELLED[lower] ??
    lower
      .split('-')
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join('-');
  if (spellings.size < MAX_SPELLINGS) spellings.set(name, spelled);
  return spelled;
}

/**
 * The headers as Node's flat `[name, value, ...]` list, names spelled: Node writes a list without the own-property
 * check it makes on each key of an object, and no object is built per response.
 */
function canonicalHeaders(headers: OutgoingHttpHeaders): Array<OutgoingHttpHeaders[string]> {
  const spelled: Array<OutgoingHttpHeaders[string]> = [];
  for (const name in headers) spelled.push(canonicalHeaderName(name), headers[name]);
  return spelled;
}

type WriteHead = (this: ServerResponse, statusCode: number, ...rest: unknown[]) => ServerResponse;
const nodeWriteHead = ServerResponse.prototype.writeHead as WriteHead;
const nodeSetHeader = ServerResponse.prototype.setHeader;

/**
 * The response class of the HTTP server (Fastify's `http.ServerResponse` option): it spells header names
 * canonically where they are written, once per response, whatever code set them. Made the way Node makes its own
 * response classes (a constructor function over `ServerResponse.prototype`): every request constructs one, and a
 * class deriving from `ServerResponse` measurably slowed the request path (bench/README.md, `session`).
 */
export const CanonicalHeadersResponse = function CanonicalHeadersResponse(
  this: ServerResponse,
  request: IncomingMessage,
): void {
  ServerResponse.call(this, request);
} as unknown as typeof ServerResponse;
Object.setPrototypeOf(CanonicalHeadersResponse.prototype, ServerResponse.prototype);
Object.setPrototypeOf(CanonicalHeadersResponse, ServerResponse);
CanonicalHeadersResponse.prototype.setHeader = function setHeader(
  this: ServerResponse,
  name: string,
  value: number | string | readonly string[],
) {
  return nodeSetHeader.call(this, canonicalHeaderName(name), value);
};
CanonicalHeadersResponse.prototype.writeHead = function writeHead(
  this: ServerResponse,
  statusCode: number,
  reasonOrHeaders?: unknown,
  headers?: unknown,
) {
  // Fastify calls writeHead(status, headers); Node's own callers may pass a reason phrase first.
  if (headers === undefined && typeof reasonOrHeaders === 'object' && reasonOrHeaders !== null) {
    return Array.isArray(reasonOrHeaders)
      ? nodeWriteHead.call(this, statusCode, reasonOrHeaders)
      : nodeWriteHead.call(this, statusCode, canonicalHeaders(reasonOrHeaders as OutgoingHttpHeaders));
  }
  if (typeof headers === 'object' && headers !== null && !Array.isArray(headers)) {
    return nodeWriteHead.call(
      this,
      statusCode,
      reasonOrHeaders,
      canonicalHeaders(headers as OutgoingHttpHeaders),
    );
  }
  return nodeWriteHead.call(this, statusCode, reasonOrHeaders, headers);
} as typeof ServerResponse.prototype.writeHead;

/** Node's parser codes of requests too large or too slow: their own status, not 400. */
/** `type/subtype`, the start of any content type a parser can be chosen by. */
const MEDIA_TYPE = /^\s*[\w.+*-]+\/[\w.+*-]+/;

/**
 * A `preParsing` hook of routes that read bodies forgivingly: a `Content-Type` that names no media type at all
 * (`null`, `undefined`, empty: what Node clients send for a header they did not set) counts as none, instead of 415.
 */
export const forgiveContentType: preParsingHookHandler = (request, _reply, payload, done) => {
  const type = request.headers['content-type'];
  if (type !== undefined && !MEDIA_TYPE.test(type)) delete request.headers['content-type'];
  done(null, payload);
};
