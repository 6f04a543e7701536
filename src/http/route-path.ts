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
