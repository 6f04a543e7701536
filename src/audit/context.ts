import type { FastifyRequest } from 'fastify';
import type { RequestFacts, RequestOrigin } from './types.js';

/**
 * The request an audited change happens in, passed explicitly: a route that calls a recording service gives it
 * `originOf(request)`, which the service puts in its event. Not found through an AsyncLocalStorage: on Node.js 20
 * that turns on async hooks for every promise of the process, which cost reads that record nothing about a tenth of
 * their throughput (src/audit/README.md, "Request context"; bench/README.md, `audit`).
 */
export function originOf(request: FastifyRequest): RequestOrigin {
  return new RequestOf(request);
}

/**
 * Holds the request only: the facts are read when a record is made (then the request's user is the one
 * authenticated, and a key's fingerprint, an HMAC, is computed for records only).
 */
class RequestOf implements RequestOrigin {
  constructor(private readonly request: FastifyRequest) {}

  facts(keyFingerprint: (apikey: string) => string): RequestFacts {
    return requestFacts(this.request, keyFingerprint);
  }
}

/**
 * The acting user and how they came (the strategy the access hook tried first, docs/security.md): a key's
 * fingerprint (never its value), a session's id digest (never the cookie), never a password.
 */
function requestFacts(request: FastifyRequest, keyFingerprint: (apikey: string) => string): RequestFacts {
  const headers = request.headers;
  const query = (request.query ?? {}) as Record<string, unknown>;
  const headerKey = typeof headers.apikey === 'string' && headers.apikey !== '' ? headers.apikey : undefined;
  const queryKey = typeof query.apikey === 'string' && query.apikey !== '' ? query.apikey : undefined;
  const apikey = headerKey ?? queryKey;
  let authscheme: string | null = null;
  if (apikey !== undefined) authscheme = 'APIKEY';
  else if (typeof headers.maxauth === 'string') authscheme = 'MAXAUTH';
  else if (typeof headers.authorization === 'string' && /^basic /i.test(headers.authorization))
    authscheme = 'BASIC';
  else if (request.session) authscheme = 'SESSION';
  return {
    userid: request.user?.userid ?? null,
    authscheme,
    keyid: apikey === undefined ? null : keyFingerprint(apikey),
    // The session's id is already the SHA-256 of its cookie; a record keeps a prefix, enough to tell sessions apart.
    sessiondigest: request.session ? request.session.id.slice(0, 16) : null,
    clientaddr: request.ip.slice(0, 64),
    requestid: String(request.id).slice(0, 100),
  };
}
