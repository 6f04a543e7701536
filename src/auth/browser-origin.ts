import type { FastifyRequest } from 'fastify';
import { errors } from '../errors.js';

/**
 * What a browser says of where a request comes from (docs/compatibility.md, "Requests browsers make for other
 * pages"). A page of any site can make the browser send a form, a text body or an image request to this service,
 * cookies included (SameSite=Lax keeps them off only cross-site, not from another port or subdomain of the same
 * site), but never with a header of its choosing. Browsers mark such requests: Fetch Metadata (`Sec-Fetch-Site`,
 * sent to https and loopback addresses) and `Origin` (sent with every `POST`). Clients that are not browsers send
 * neither, and are never refused here.
 *
 * Read only for requests authenticated by a session cookie that change something, and for the login and logout
 * routes: no other request pays for it.
 */

/**
 * Whether the browser says the page that made the request is not one of this service's. `Sec-Fetch-Site` decides
 * when present (the browser's own verdict, whatever proxies in front rewrite); else a foreign `Origin` (`null`
 * included) does.
 */
export function fromAnotherOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = request.headers.origin;
  return origin !== undefined && !isOwnOrigin(request, origin);
}

/**
 * This service's origin, as `returnToPolicy` (federated/sign-in.ts) knows it: the address the request was made to
 * (scheme and `Host`), or the configured public address (`EAS_PUBLIC_URL`, `mxe.oslc.webappurl`), which a proxy
 * that terminates TLS or rewrites `Host` needs (docs/deploy.md). Compared as URLs compare origins (case, default
 * ports). Reached only by browsers that send `Origin` without Fetch Metadata (plain http to a host that is not
 * loopback, older browsers), so the URLs it builds cost nothing elsewhere.
 */
function isOwnOrigin(request: FastifyRequest, origin: string): boolean {
  const sent = originOf(origin);
  if (sent === undefined) return false; // `null`, and anything that is no URL
  if (sent === originOf(`${request.protocol}://${request.host}`)) return true;
  const base = request.server.publicBase?.();
  return base !== undefined && sent === originOf(base);
}

function originOf(address: string): string | undefined {
  try {
    const origin = new URL(address).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** Whether the request carries any of the headers only browsers add by themselves. */
function fromBrowser(request: FastifyRequest): boolean {
  const headers = request.headers;
  return (
    headers['sec-fetch-site'] !== undefined ||
    headers['sec-fetch-mode'] !== undefined ||
    headers.origin !== undefined
  );
}

/**
 * Bodies any page can make a browser send without asking this service first (the Fetch standard's CORS-safelisted
 * request content types): a `<form>`, with or without `enctype=text/plain`.
 */
const FORM_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data'];

function formBody(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  if (type === undefined) return false;
  const media = type.trimStart().toLowerCase();
  for (const form of FORM_TYPES) if (media.startsWith(form)) return true;
  return false;
}

/**
 * A write authenticated by a session cookie that does not carry the session's `csrftoken`: refused when a browser
 * sent it from a page of another origin, or as a form or text body (the JSON routes read JSON from browsers; a
 * client that is no browser may still send its JSON with any content type).
 */
export function checkBrowserWrite(request: FastifyRequest): void {
  if (fromAnotherOrigin(request))
    throw errors.browserRequestRefused(
      "it comes from a page of another origin and does not carry the session's csrftoken",
    );
  if (formBody(request) && fromBrowser(request))
    throw errors.browserRequestRefused(
      "its body is a form or text, which this route does not read from browsers without the session's csrftoken",
    );
}

/**
 * The login and logout routes, whatever their method and however authenticated: a browser reaches them only by
 * navigating from this service's own pages or by a script of them (`fetch`), never from another origin, and never
 * as an image, a script, a style or a frame of any page, which would end or replace a session the user did not
 * mean to.
 */
export function checkSessionChange(request: FastifyRequest): void {
  if (fromAnotherOrigin(request))
    throw errors.browserRequestRefused('logins and logouts come only from the pages of this service');
  const mode = request.headers['sec-fetch-mode'];
  const destination = request.headers['sec-fetch-dest'];
  if (
    mode === 'no-cors' ||
    (destination !== undefined && destination !== 'document' && destination !== 'empty')
  )
    throw errors.browserRequestRefused('logins and logouts are not made for images, scripts or frames');
}
