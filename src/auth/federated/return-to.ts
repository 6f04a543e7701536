/**
 * Where a browser goes after signing in: only a path of this service's own origin, so that the sign-in cannot be
 * used to send users to another site with a trusted-looking link (an open redirect). Anything else falls back to
 * the default page rather than failing: the user has just signed in and lands somewhere harmless.
 *
 * What is checked is the address that will be sent, after normalisation, not the text asked for: `/.//evil.example`
 * and `/%2e%2e//evil.example` normalise to `//evil.example`, which a browser reads as another host
 * (docs/federated-login.md, "Return address").
 */
export interface ReturnToPolicy {
  /** Origins this service answers on: the public address's, and the request's own. */
  origins: readonly string[];
  /** Where to go when nothing acceptable was asked for. */
  fallback: string;
}

/** Placeholder origin against which relative targets are resolved; it can never be a real host. */
const PROBE_ORIGIN = 'http://return-to.invalid';

/**
 * A path a browser cannot read as another host: one `/`, then anything but a second slash or backslash, spelled or
 * percent-encoded (a proxy in front may decode `%2f` and `%5c`).
 */
const LOCAL_PATH = /^\/(?![/\\]|%2f|%5c)/i;

/** The path (with query and fragment) to redirect to: `target` when it is same-origin, else the fallback. */
export function sameOriginTarget(target: unknown, policy: ReturnToPolicy): string {
  if (typeof target !== 'string' || target === '' || target.length > 2048) return policy.fallback;
  // Backslashes and control characters are read as slashes or dropped by browsers: `/\evil.example` is
  // protocol-relative to them, so such targets are refused outright.
  if (target.includes('\\') || [...target].some((character) => character <= ' ' || character === '\u007f')) {
    return policy.fallback;
  }
  let url: URL;
  try {
    url = new URL(target, PROBE_ORIGIN);
  } catch {
    return policy.fallback;
  }
  if (url.username !== '' || url.password !== '') return policy.fallback;
  const sameOrigin =
    url.origin === PROBE_ORIGIN ? !target.startsWith('//') : policy.origins.includes(url.origin);
  if (!sameOrigin) return policy.fallback;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return LOCAL_PATH.test(path) ? path : policy.fallback;
}
