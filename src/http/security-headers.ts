import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The browser-facing security headers of every answer, in one place (docs/security.md, "Security headers"):
 *
 * - `X-Content-Type-Options: nosniff` on every answer;
 * - `Strict-Transport-Security` on every answer when the public address (EAS_PUBLIC_URL) is https;
 * - `Cache-Control: no-store` on JSON answers to an authenticated request (and on their 304s), unless the route
 *   chose its own; an ETag and If-None-Match still answer 304, as `no-store` only keeps caches from storing;
 * - on every HTML page: `X-Frame-Options: DENY` and a Content-Security-Policy with `frame-ancestors 'none'` (the
 *   page's own policy when it sets one, with its framing rule replaced; else `DEFAULT_PAGE_CSP`).
 *
 * One onSend hook with constant strings: the benchmarked JSON path pays a few header writes and no allocation.
 * Not `@fastify/helmet`: it writes about a dozen headers on every answer (most meaningless for JSON) from an
 * onRequest hook, and would need per-route exceptions for the pages that set their own policy with a nonce.
 */
export interface SecurityHeadersOptions {
  /** The public address of the context root, when configured (EAS_PUBLIC_URL). */
  publicUrl: string | undefined;
}

/** One year, the value browsers' preload lists ask for; without includeSubDomains (other hosts are not ours). */
export const HSTS = 'max-age=31536000';
/** A page that brings no policy of its own: its own files only, no script, never framed. */
export const DEFAULT_PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; " +
  "frame-ancestors 'none'";
const FRAMING = "frame-ancestors 'none'";
const FRAME_ANCESTORS = /(^|;)\s*frame-ancestors[^;]*/i;

export function registerSecurityHeaders(app: FastifyInstance, options: SecurityHeadersOptions): void {
  const hsts = options.publicUrl?.toLowerCase().startsWith('https://') === true;
  app.addHook(
    'onSend',
    (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: null, payload: unknown) => void,
    ) => {
      reply.header('x-content-type-options', 'nosniff');
      if (hsts) reply.header('strict-transport-security', HSTS);
      const type = reply.getHeader('content-type');
      if (typeof type === 'string' && type.startsWith('text/html')) framedByNobody(reply);
      else if (
        request.user !== null &&
        (reply.statusCode === 304 || (typeof type === 'string' && type.includes('json'))) &&
        !reply.hasHeader('cache-control')
      )
        reply.header('cache-control', 'no-store');
      done(null, payload);
    },
  );
}

function framedByNobody(reply: FastifyReply): void {
  reply.header('x-frame-options', 'DENY');
  const policy = reply.getHeader('content-security-policy');
  if (typeof policy !== 'string') reply.header('content-security-policy', DEFAULT_PAGE_CSP);
  else if (!policy.includes(FRAMING)) reply.header('content-security-policy', withoutFraming(policy));
}

/**
 * A page's own policy with its framing rule replaced by none. Also given to Swagger UI (`transformStaticCSP`):
 * it writes its `frame-ancestors 'self'` in a hook of its own, after this one.
 */
export function withoutFraming(policy: string): string {
  if (policy.includes(FRAMING)) return policy;
  const rest = policy.replace(FRAME_ANCESTORS, '').replace(/^[;\s]+|[;\s]+$/g, '');
  return rest === '' ? FRAMING : `${rest}; ${FRAMING}`;
}
