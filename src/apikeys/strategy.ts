import type { FastifyRequest } from 'fastify';
import { readFlag } from '../http/query-string.js';
import { originOf } from '../audit/context.js';
import type { AuthStrategy } from '../auth/types.js';
import type { ApiKeyService } from './service.js';

/** How a request presents its key: header `apikey` (recommended), else query parameter `apikey`. */
export interface PresentedKey {
  value: string;
  /** Sent in the URL: logged by proxies and kept in browser histories, so the key is marked as exposed. */
  inUrl: boolean;
}

export function presentedKey(request: FastifyRequest): PresentedKey | undefined {
  const header = request.headers.apikey;
  if (typeof header === 'string' && header !== '') return { value: header, inUrl: false };
  const parameter = (request.query as Record<string, string | undefined> | undefined)?.apikey;
  if (typeof parameter === 'string' && parameter !== '') return { value: parameter, inUrl: true };
  return undefined;
}

/** `presentedKey(request) !== undefined`, without the object: the access hook asks it of every request. */
function carriesKey(request: FastifyRequest): boolean {
  const header = request.headers.apikey;
  if (typeof header === 'string' && header !== '') return true;
  const parameter = (request.query as Record<string, string | undefined> | undefined)?.apikey;
  return typeof parameter === 'string' && parameter !== '';
}

/**
 * API key (docs/apikeys.md, "Using a key"): a silent login as the key's owner, with the owner's rights. No session is
 * created unless the request asks for one with `enablesession=1`.
 */
export function apiKeyStrategy(keys: ApiKeyService): AuthStrategy {
  return {
    name: 'apikey',
    kind: 'token',
    applies: carriesKey,
    authenticate: (request) => {
      const key = presentedKey(request);
      // applies() was true, so the key is there; the check keeps the types honest.
      if (!key) return Promise.reject(new Error('no API key on the request'));
      return keys.verify(key.value, key.inUrl, originOf(request));
    },
    wantsSession: (request) =>
      readFlag((request.query as Record<string, string | undefined>).enablesession) === true,
  };
}
