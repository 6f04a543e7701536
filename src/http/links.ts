import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The configured public address of the context root (`https://host/maximo`), when there is one: then the
     * request's `Host` header is not trusted for hrefs and `Location` (see publicBaseOf).
     */
    publicBase?: () => string | undefined;
    /** The client addresses whose `x-public-uri` is used (`EAS_PUBLIC_URI_FROM`); undefined: every client's. */
    publicUriFrom?: ReadonlySet<string>;
  }
}

/** Which of the two API roots a request came in on; hrefs in the answer follow it (docs/compatibility.md). */
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

/**
 * An absolute http(s) address: a host, then path segments none of which is empty (trailing slashes aside), no
 * query, fragment, backslash or space. `http://a//evil.com/oslc` is not one: its path would make hrefs and
 * `Location` headers of the form `//evil.com/...`, another site's address to a browser.
 */
const PUBLIC_URI = /^https?:\/\/[^\s/\\?#]+(?:\/[^\s/\\?#]+)*\/*$/i;

/**
 * The `x-public-uri` header (docs/compatibility.md, "Public address") when it is a valid address sent from an
 * address allowed to send it (`EAS_PUBLIC_URI_FROM`, the proxies in front), else none.
 */
export function publicUriOf(request: FastifyRequest): string | undefined {
  const publicUri = request.headers['x-public-uri'];
  if (typeof publicUri !== 'string' || !PUBLIC_URI.test(publicUri)) return undefined;
  const allowed = request.server.publicUriFrom;
  return allowed === undefined || allowed.has(request.ip) ? publicUri : undefined;
}

export function linksFor(
  request: FastifyRequest,
  contextRoot: string,
  root: ApiRoot,
  relative: boolean,
): Links {
  if (relative) return { api: root };
  const publicUri = publicUriOf(request);
  if (publicUri !== undefined) return { api: publicUri.replace(/\/+$/, '') };
  const base = request.server.publicBase?.();
  if (base !== undefined) return { api: `${base}/${root}` };
  return { api: `${request.protocol}://${request.host}${contextRoot}/${root}` };
}

export const collectionHref = (links: Links, osName: string): string => `${links.api}/os/${osName}`;
export const resourceHref = (links: Links, osName: string, restId: string): string =>
  `${links.api}/os/${osName}/${restId}`;
export const errorMessagesHref = (links: Links): string => `${links.api}/error/messages`;

const HTTP_URL = /^https?:\/\/[^\s]+$/;

/**
 * The public address of the context root (docs/compatibility.md, "Public address"): `mxe.oslc.webappurl` when it
 * is set (the address of the API, `http://host/maximo/oslc/`, as the deployed systems write it; live, read on
 * every call), else `EAS_PUBLIC_URL` (the address in front of the context root), else none. Derived once per value.
 */
export function publicBaseOf(
  contextRoot: string,
  publicUrl: string | undefined,
  webAppUrl: () => string | undefined,
): () => string | undefined {
  const fromEnvironment =
    publicUrl === undefined
      ? undefined
      : publicUrl.replace(/\/+$/, '').endsWith(contextRoot)
        ? publicUrl.replace(/\/+$/, '')
        : `${publicUrl.replace(/\/+$/, '')}${contextRoot}`;
  let lastValue: string | undefined;
  let lastBase: string | undefined;
  return () => {
    const value = webAppUrl();
    if (value === undefined || value === '' || !HTTP_URL.test(value)) return fromEnvironment;
    if (value !== lastValue) {
      lastValue = value;
      lastBase = value.replace(/\/+$/, '').replace(/\/(oslc|api)$/, '');
    }
    return lastBase;
  };
}
