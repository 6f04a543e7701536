/** Where the benchmarks find PostgreSQL, and the credentials of the benchmark database (never a real system's). */
export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

/**
 * One schema for every section that needs a big database: loading a million rows once is the expensive part.
 * `BENCH_SCHEMA` chooses another, so that two people's runs on one PostgreSQL server stay apart.
 */
export const BENCH_SCHEMA = process.env.BENCH_SCHEMA ?? 'eas_bench';

/**
 * Master key of every service process on the benchmark schema: the schema stores a check value of the key that
 * sealed its API keys, and a process with another key refuses to start (docs/security.md).
 */
export const BENCH_MASTER_KEY = process.env.EAS_MASTER_KEY ?? 'eas-bench-master-key-0123456789abcdef';

/** Password of MAXADMIN in the benchmark schema (scrypt-hashed there like any other). */
export const BENCH_ADMIN_PASSWORD = 'maxadmin-bench-pw';

/** Password of the demo users WILSON and SMITH in the benchmark schema. */
export const BENCH_DEMO_PASSWORD = 'demo-bench-pw';

/** The `maxauth` header value of a benchmark user. */
export function maxauthHeader(userid: string, password: string): string {
  return Buffer.from(`${userid}:${password}`).toString('base64');
}

/** Context root of the service under test (its default). */
export const CONTEXT_ROOT = '/maximo';

/**
 * Logs in once with `maxauth` (`POST /oslc/login`, with the query string of `path`, so that the session's JSON form
 * is the one the load asks for) and returns the `Cookie` header of the session the service opened: what a client
 * with a cookie jar sends on its following calls. Only the login routes open sessions (docs/compatibility.md).
 */
export async function sessionCookieHeader(
  baseUrl: string,
  path: string,
  userid: string,
  password: string,
): Promise<Record<string, string>> {
  const query = path.includes('?') ? path.slice(path.indexOf('?')) : '';
  const response = await fetch(`${baseUrl}${CONTEXT_ROOT}/oslc/login${query}`, {
    method: 'POST',
    headers: { maxauth: maxauthHeader(userid, password) },
  });
  await response.arrayBuffer();
  const cookies = response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0]!.trim())
    .filter((cookie) => cookie !== '');
  if (response.status !== 200 || cookies.length === 0) {
    throw new Error(`login on ${path} gave HTTP ${response.status} and no session cookie`);
  }
  return { cookie: cookies.join('; ') };
}
