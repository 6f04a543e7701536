import type { FastifyRequest } from 'fastify';

/** Which of the two API roots a request came in on; hrefs in the answer follow it (maximo-notes §10.1). */
export type ApiRoot = 'oslc' | 'api';

/**
 * Where hrefs in a response point: `x-public-uri` when the client sends it (the public address of the API root,
 * for example `https://host/maximo/api`), else the address the request was made to; `relativeuri=1` makes them
 * relative to the context root (`oslc/os/mxasset/_...`).
 */
export interface Links {
  /** Base of every href: `http://host/maximo/oslc`, or `oslc` when relative. */
  readonly api: string;
}

export function linksFor(
  request: FastifyRequest,
  contextRoot: string,
  root: ApiRoot,
  relative: boolean,
): Links {
  if (relative) return { api: root };
  const publicUri = request.headers['x-public-uri'];
  if (typeof publicUri === 'string' && /^https?:\/\/[^\s]+$/.test(publicUri)) {
    return { api: publicUri.replace(/\/+$/, '') };
  }
  return { api: `${request.protocol}://${request.host}${contextRoot}/${root}` };
}

export const collectionHref = (links: Links, osName: string): string => `${links.api}/os/${osName}`;
export const resourceHref = (links: Links, osName: string, restId: string): string =>
  `${links.api}/os/${osName}/${restId}`;
export const errorMessagesHref = (links: Links): string => `${links.api}/error/messages`;
