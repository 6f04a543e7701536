import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { json, maxauth, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { startMetricsListener } from './routes.js';

/** The value of one sample of a Prometheus text exposition, or undefined when it is not there. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (.+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return undefined;
}

describe('metrics', () => {
  let t: TestApp;
  const admin = maxauth('MAXADMIN');
  /** The administrator's session: scrapes open no session of their own (maxauth alone would, each time). */
  let adminSession: Record<string, string>;
  const scrape = async () => {
    const response = await t.app.inject({ url: '/maximo/metrics', headers: adminSession });
    assert.equal(response.statusCode, 200);
    return response.body;
  };

  before(async () => {
    t = await startTestApp();
    const login = await t.app.inject({ method: 'POST', url: '/maximo/oslc/login', headers: admin });
    adminSession = { cookie: String(login.headers['set-cookie']).split(';')[0]! };
  });
  after(() => t.close());

  test('answer administrators only, in Prometheus text format', async () => {
    const response = await t.app.inject({ url: '/maximo/metrics', headers: admin });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(response.body, /^# HELP /m);
    assert.equal((await t.app.inject({ url: '/maximo/metrics' })).statusCode, 401);
    const user = await t.app.inject({ url: '/maximo/metrics', headers: maxauth('WILSON') });
    assert.equal(user.statusCode, 400);
    assert.equal(json(user).Error?.reasonCode, 'BMXAA0024E');
  });

  test('count requests and time them per route pattern, method and status, never per URL', async () => {
    const route = { method: 'GET', route: '/maximo/oslc/os/:os', status: '200' };
    const before = await scrape();
    const countBefore = sample(before, 'eas_http_requests_total', route) ?? 0;
    for (const os of ['mxapiasset', 'mxapiitem', 'mxapiasset'])
      assert.equal(
        (await t.app.inject({ url: `/maximo/oslc/os/${os}?lean=1`, headers: admin })).statusCode,
        200,
      );
    assert.equal((await t.app.inject({ url: '/maximo/no/such/place-x7q' })).statusCode, 404);
    const refused = await t.app.inject({ url: '/maximo/oslc/os/mxapiasset' });
    assert.equal(refused.statusCode, 401);

    const text = await scrape();
    assert.equal(sample(text, 'eas_http_requests_total', route), countBefore + 3);
    assert.equal(sample(text, 'eas_http_request_duration_seconds_count', route), countBefore + 3);
    assert.equal(
      sample(text, 'eas_http_request_duration_seconds_bucket', { ...route, le: '+Inf' }),
      countBefore + 3,
    );
    assert.ok(sample(text, 'eas_http_request_duration_seconds_sum', route)! > 0);
    // Buckets are cumulative.
    const small = sample(text, 'eas_http_request_duration_seconds_bucket', { ...route, le: '0.0005' })!;
    const large = sample(text, 'eas_http_request_duration_seconds_bucket', { ...route, le: '30' })!;
    assert.ok(small <= large);
    assert.equal(sample(text, 'eas_http_requests_total', { ...route, status: '401' }), 1);
    assert.equal(sample(text, 'eas_http_requests_total', { route: 'unmatched', status: '404' }), 1);
    assert.doesNotMatch(text, /place-x7q|mxapiitem/, 'no URL and no parameter value in a label');
  });

  test('report cache hits and misses, live sessions and the connection pool', async () => {
    // A login opens a session; the cookie then resolves from memory, the profile from its cache.
    const login = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/login',
      headers: maxauth('WILSON'),
    });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    for (let request = 0; request < 3; request += 1)
      assert.equal((await t.app.inject({ url: '/maximo/oslc/whoami', headers: { cookie } })).statusCode, 200);
    const text = await scrape();
    assert.ok(sample(text, 'eas_cache_hits_total', { cache: 'sessions' })! >= 3);
    assert.ok(sample(text, 'eas_cache_hits_total', { cache: 'profiles' })! >= 3);
    for (const cache of ['sessions', 'apikeys', 'profiles', 'plans']) {
      assert.notEqual(sample(text, 'eas_cache_misses_total', { cache }), undefined, cache);
      const ratio = sample(text, 'eas_cache_hit_ratio', { cache })!;
      assert.ok(ratio >= 0 && ratio <= 1, cache);
    }
    assert.ok(sample(text, 'eas_sessions_live')! >= 1);
    await t.app.inject({ method: 'POST', url: '/maximo/oslc/logout', headers: { cookie } });
    const afterLogout = await scrape();
    assert.equal(sample(afterLogout, 'eas_sessions_live'), sample(text, 'eas_sessions_live')! - 1);
    if (t.storage.kind === 'postgres') {
      assert.ok(sample(text, 'eas_db_pool_connections', { state: 'max' })! >= 1);
      assert.notEqual(sample(text, 'eas_db_pool_connections', { state: 'idle' }), undefined);
    } else {
      assert.equal(
        sample(text, 'eas_db_pool_connections', { state: 'max' }),
        undefined,
        'PGlite has no pool',
      );
    }
    assert.notEqual(sample(text, 'process_cpu_user_seconds_total'), undefined, 'process metrics');
  });

  test('report admin mode as every process knows it, and package deploys', async () => {
    assert.equal(sample(await scrape(), 'eas_admin_mode_state'), 0);
    const on = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/adminmode/on',
      headers: { ...adminSession, 'content-type': 'application/json' },
      payload: { numsessions: 5, logoutmin: 5 },
    });
    assert.equal(on.statusCode, 200, on.body);
    // Pending while an ordinary session remains, on at once when none does.
    assert.ok([1, 2].includes(sample(await scrape(), 'eas_admin_mode_state')!));
    const off = await t.app.inject({
      method: 'POST',
      url: '/maximo/oslc/adminmode/off',
      headers: adminSession,
    });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(sample(await scrape(), 'eas_admin_mode_state'), 0);
    assert.match(await scrape(), /# TYPE eas_package_deploys_total counter/);
  });

  test('take the gauges and counters a module registers', async () => {
    let deploys = 0;
    t.services.metrics.gauge({
      name: 'eas_test_admin_mode',
      help: 'Admin mode, as a module would report it.',
      collect() {
        this.set(1);
      },
    });
    const counter = t.services.metrics.counter({ name: 'eas_test_deploys_total', help: 'Deploys.' });
    deploys += 2;
    counter.inc(deploys);
    const text = await scrape();
    assert.equal(sample(text, 'eas_test_admin_mode'), 1);
    assert.equal(sample(text, 'eas_test_deploys_total'), 2);
  });

  test('move to a port of their own, without login, when EAS_METRICS_PORT is set', async () => {
    const separate = await startTestApp({ EAS_METRICS_PORT: '0' });
    try {
      assert.equal((await separate.app.inject({ url: '/maximo/metrics', headers: admin })).statusCode, 404);
      const listener = await startMetricsListener(separate.services.metrics, {
        host: '127.0.0.1',
        port: separate.config.metrics.port!,
        contextRoot: '/maximo',
      });
      try {
        const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
        await separate.app.inject({ url: '/maximo/oslc/os/mxapiasset', headers: admin });
        for (const path of ['/metrics', '/maximo/metrics']) {
          const response = await fetch(`${base}${path}`);
          assert.equal(response.status, 200, path);
          const text = await response.text();
          assert.equal(
            sample(text, 'eas_http_requests_total', { route: '/maximo/oslc/os/:os', status: '200' }),
            1,
          );
        }
        assert.equal((await fetch(`${base}/maximo/oslc/os/mxapiasset`)).status, 404);
      } finally {
        await new Promise((resolve) => listener.close(resolve));
      }
    } finally {
      await separate.close();
    }
  });
});
