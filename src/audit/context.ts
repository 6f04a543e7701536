import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * The request an audited change happens in, found without passing it through every service: the hooks below run
 * the rest of the request inside an AsyncLocalStorage scope holding it. Run again before validation, because a body
 * is read in the socket's context, not the request's (src/audit/README.md, "Request context").
 */
const current = new AsyncLocalStorage<FastifyRequest>();

export function installRequestContext(app: FastifyInstance): void {
  const enter = (request: FastifyRequest, _reply: unknown, done: () => void): void => {
    current.run(request, done);
  };
  app.addHook('onRequest', enter);
  app.addHook('preValidation', enter);
}

/** What a record says of the request it was written in; all null outside a request (the shell, a timer). */
export interface RequestFacts {
  userid: string | null;
  authscheme: string | null;
  keyid: string | null;
  sessiondigest: string | null;
  clientaddr: string | null;
  requestid: string | null;
}

const NO_REQUEST: RequestFacts = {
  userid: null,
  authscheme: null,
  keyid: null,
  sessiondigest: null,
  clientaddr: null,
  requestid: null,
};

/**
 * The acting user and how they came (the strategy the access hook tried first, docs/security.md): a key's
 * fingerprint (never its value), a session's id digest (never the cookie), never a password.
 */
export function requestFacts(keyFingerprint: (apikey: string) => string): RequestFacts {
  const request = current.getStore();
  if (!request) return NO_REQUEST;
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

/** A fingerprint of a secret that names it without revealing it (used when no key service is at hand). */
export function fingerprint(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 16);
}
