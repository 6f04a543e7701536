import type { FastifyRequest } from 'fastify';

/**
 * The path a request is decided on, the same one the router matched: the route's own pattern when a route matched
 * (the router has decoded and matched the path already), else the path decoded and normalised. Security decisions
 * that depend on where a request goes read this, never the raw URL: `/maximo/ap%69/os` is routed as `/maximo/api/os`
 * and must be judged as that (docs/security.md).
 */
export function routePath(request: FastifyRequest): string {
  if (!request.is404) {
    const pattern = request.routeOptions.url;
    if (pattern !== undefined) return pattern;
  }
  return normalisedPath(request.url);
}

/** Whether a path is the prefix itself or below it (`/maximo/api`, `/maximo/api/...`, not `/maximo/apix`). */
export function isUnder(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false;
  const next = path.charAt(prefix.length);
  return next === '' || next === '/';
}

/**
 * The path of a URL with its %-escapes decoded, repeated slashes collapsed and `.`/`..` segments resolved; an
 * escape that does not decode leaves the path as sent (the router refuses it anyway). Plain paths, nearly every
 * request, are returned without a copy.
 */
export function normalisedPath(url: string): string {
  const query = url.indexOf('?');
  let path = query === -1 ? url : url.slice(0, query);
  if (path.includes('%')) {
    try {
      path = decodeURIComponent(path);
    } catch {
      return path;
    }
  }
  if (!path.includes('//') && !path.includes('/.') && !path.includes('\\')) return path;
  const segments: string[] = [];
  for (const segment of path.replaceAll('\\', '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}
