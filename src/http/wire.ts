import {
  ServerResponse,
  STATUS_CODES,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
} from 'node:http';
import type { Socket } from 'node:net';
import type { preParsingHookHandler } from 'fastify';
import { errorBody, errors, MaximoError } from '../errors.js';

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

function canonicalHeaders(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const spelled: OutgoingHttpHeaders = {};
  for (const name in headers) spelled[canonicalHeaderName(name)] = headers[name];
  return spelled;
}

/**
 * The response class of the HTTP server (Fastify's `http.ServerResponse` option): it spells header names
 * canonically where they are written, once per response, whatever code set them.
 */
export class CanonicalHeadersResponse<
  Request extends IncomingMessage = IncomingMessage,
> extends ServerResponse<Request> {
  override setHeader(name: string, value: number | string | readonly string[]): this {
    return super.setHeader(canonicalHeaderName(name), value);
  }

  override writeHead(
    statusCode: number,
    statusMessage?: string,
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this;
  override writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  override writeHead(statusCode: number, ...rest: unknown[]): this {
    const last = rest.length - 1;
    const headers = rest[last];
    if (typeof headers === 'object' && headers !== null && !Array.isArray(headers)) {
      rest[last] = canonicalHeaders(headers as OutgoingHttpHeaders);
    }
    return (super.writeHead as (code: number, ...more: unknown[]) => this)(statusCode, ...rest);
  }
}

/** Node's parser codes of requests too large or too slow: their own status, not 400. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * Requests the HTTP parser refuses before any route runs (stray bytes after a body, a malformed request line):
 * answered with the error object, as every other failure, then the connection is closed (the parser cannot find
 * the next request in what follows).
 */
export function clientErrorHandler(
  contextRoot: string,
): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = CLIENT_ERROR_STATUS[error.code ?? ''] ?? 400;
    const refused = errors.badRequest('The request could not be read.');
    const maximo = status === 400 ? refused : new MaximoError(status, refused.reasonCode, refused.text);
    const body = JSON.stringify(
      errorBody(maximo, { messagesBase: `${contextRoot}/oslc/error/messages`, lean: true }),
    );
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n` +
        'Content-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  };
}

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
