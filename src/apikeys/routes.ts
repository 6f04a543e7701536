import type { FastifyInstance } from 'fastify';
import { originOf } from '../audit/context.js';
import { errors } from '../errors.js';
import { sendJson } from '../http/reply.js';
import type { ApiKeyService, KeyRequest } from './service.js';

export interface ApiKeyRoutesOptions {
  apiKeys: ApiKeyService;
}

/**
 * Self-service keys (docs/apikeys.md): `POST <root>/apitoken/create` creates or regenerates the caller's
 * key, `POST <root>/apitoken/revoke` deletes it. The caller is whoever is authenticated, by any scheme (an API key
 * included); no user name is sent. Administrators manage every user's key through MXAPIAPIKEY instead.
 */
export async function apiKeyRoutes(app: FastifyInstance, options: ApiKeyRoutesOptions): Promise<void> {
  const { apiKeys } = options;
  // Clients send the create body as a JSON object, as a JSON string holding the object, or with a content type
  // that is not JSON; revoke takes any body or none. These routes read the raw text themselves.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.post('/apitoken/create', { config: { access: { kind: 'user' } } }, async (request, reply) => {
    const apikey = await apiKeys.createOwn(request.user!, readKeyRequest(request.body), originOf(request));
    return sendJson(reply, 200, { apikey });
  });

  app.post('/apitoken/revoke', { config: { access: { kind: 'user' } } }, async (request, reply) => {
    const revoked = await apiKeys.revokeOwn(request.user!, originOf(request));
    return sendJson(reply, 200, { revoked });
  });
}

/** The create body: `{"expiration": n}`, possibly wrapped in a JSON string; no body or no expiration: never expires. */
export function readKeyRequest(raw: unknown): KeyRequest {
  let value: unknown = typeof raw === 'string' && raw.trim() === '' ? {} : raw;
  for (let depth = 0; typeof value === 'string' && depth < 2; depth += 1) {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      throw errors.malformedJson();
    }
  }
  if (value === undefined || value === null) value = {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw errors.badRequest('The request body must be a JSON object such as {"expiration": -1}.');
  }
  const body = value as Record<string, unknown>;
  const expiration = body.expiration ?? -1;
  const apikey = body.apikey;
  if (apikey !== undefined && typeof apikey !== 'string') {
    throw errors.badRequest('The apikey of the request body must be a string.', { attrName: 'apikey' });
  }
  // A string of digits is a number to clients that build bodies from form fields.
  const minutes =
    typeof expiration === 'string' && /^-?\d+$/.test(expiration) ? Number(expiration) : expiration;
  if (typeof minutes !== 'number') throw errors.apiKeyExpirationNotValid(JSON.stringify(minutes));
  return { expiration: minutes, apikey: apikey === '' ? undefined : apikey };
}
