import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import { forgiveContentType } from '../http/wire.js';
import { parsed } from './collection-params.js';
import { parseSelect, type SelectClause } from './query/index.js';

/**
 * How write bodies and write headers are read, as forgivingly as the deployed systems read them
 * (docs/compatibility.md, "Content types"): a body without `Content-Type` is JSON (some clients send their JSON
 * as a plain string), an empty JSON body is no body, and a delete ignores its body.
 */

/** The `x-method-override` of a request, upper case; empty and `null` (a Node client's unset header) are none. */
export function methodOverride(request: FastifyRequest): string | undefined {
  const header = request.headers['x-method-override'];
  if (typeof header !== 'string') return undefined;
  const value = header.trim().toUpperCase();
  return value === '' || value === 'NULL' ? undefined : value;
}

function isDelete(request: FastifyRequest): boolean {
  return request.method === 'DELETE' || methodOverride(request) === 'DELETE';
}

/** Registers the body parsers of the object-structure routes in their plugin (encapsulated: other routes keep theirs). */
export function registerWriteBodyParsers(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'ignore');
  const read = (
    request: FastifyRequest,
    body: string,
    done: (error: Error | null, body?: unknown) => void,
  ) => {
    if (isDelete(request) || body.trim() === '') {
      done(null, undefined);
      return;
    }
    json(request, body, done);
  };
  app.addHook('preParsing', forgiveContentType);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, read);
  // Clients that are not browsers (curl, Postman's "Text", scripts) send their JSON as text/plain: it is read as
  // JSON (docs/compatibility.md, "Content types"). A browser's text/plain write is refused before it is parsed
  // (src/auth/browser-origin.ts).
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, read);
  // Reached by bodies without a content type, and by content types nothing else reads.
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if (request.headers['content-type'] === undefined || isDelete(request)) {
      read(request, String(body), done);
      return;
    }
    done(errors.unsupportedMediaType(String(request.headers['content-type'])));
  });
}

/**
 * The `properties` header of a write (which attributes the answer carries), parsed before anything is written: a
 * header that does not parse must refuse the write, not follow it.
 */
export function propertiesOfWrite(request: FastifyRequest): SelectClause | undefined {
  const header = request.headers.properties;
  const text = typeof header === 'string' ? header.trim() : '';
  return text === '' ? undefined : parsed(parseSelect, text);
}

/** `patchtype`: `MERGE` or nothing (empty and `null` are nothing); anything else is refused before writing. */
export function isMergePatch(request: FastifyRequest): boolean {
  const header = request.headers.patchtype;
  const value = typeof header === 'string' ? header.trim().toUpperCase() : '';
  if (value === '' || value === 'NULL') return false;
  if (value === 'MERGE') return true;
  throw errors.badRequest(`The patchtype ${header} is not supported; send MERGE or nothing.`, {
    attrName: 'patchtype',
    attrValue: String(header),
  });
}
