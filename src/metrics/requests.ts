import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import type { Metrics } from './service.js';

/** Upper bounds of the latency buckets, in seconds: most answers take well under a millisecond. */
export const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
] as const;

/** The route label of requests no route matched: their URL is the client's, never a label. */
export const UNMATCHED = 'unmatched';

type Label = 'method' | 'route' | 'status';

/** The answers of one route to one method with one status: a count, a sum and a bucket per bound. */
class Series {
  count = 0;
  sum = 0;
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1);

  constructor(
    readonly method: string,
    readonly route: string,
    readonly status: number,
  ) {}

  observe(seconds: number): void {
    this.count += 1;
    this.sum += seconds;
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket += 1;
    this.buckets[bucket]! += 1;
  }
}

/** A small number per method, so that a series is found by one numeric key; anything else shares the last. */
const METHOD_NUMBERS: Readonly<Record<string, number>> = {
  GET: 0,
  POST: 1,
  PUT: 2,
  PATCH: 3,
  DELETE: 4,
  HEAD: 5,
  OPTIONS: 6,
};
const OTHER_METHOD = 7;

/**
 * Request counts and latencies per route pattern, method and status. Every request ends in one of these hooks, so
 * the recording is kept to what a request cannot avoid: each route gets its own `onResponse` hook as it registers
 * (no lookup of the route, no label object, no string built), which finds its series by a number and adds to plain
 * counters. prom-client reads them only when scraped (`RouteDurations`, `RouteRequests`).
 */
export class RequestStatistics {
  private readonly series: Series[] = [];
  private readonly unmatched = new Map<number, Series>();

  /** Records the requests of every route registered from now on (and `recordUnmatched` those of none). */
  install(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const hook = this.hookFor(route.url);
      const existing = route.onResponse;
      route.onResponse =
        existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
    });
  }

  /** For the not-found handler: a request no route matched. */
  recordUnmatched(request: FastifyRequest, reply: FastifyReply): void {
    this.record(this.unmatched, UNMATCHED, request.method, reply.statusCode, reply.elapsedTime);
  }

  private hookFor(route: string): onResponseHookHandler {
    const byKey = new Map<number, Series>();
    return (request, reply, done) => {
      this.record(byKey, route, request.method, reply.statusCode, reply.elapsedTime);
      done();
    };
  }

  private record(
    byKey: Map<number, Series>,
    route: string,
    method: string,
    status: number,
    milliseconds: number,
  ): void {
    const key = status * 8 + (METHOD_NUMBERS[method] ?? OTHER_METHOD);
    let series = byKey.get(key);
    if (series === undefined) {
      series = new Series(method, route, status);
      byKey.set(key, series);
      this.series.push(series);
    }
    series.observe(milliseconds / 1000);
  }

  /** Every series seen so far (one per route, method and status). */
  all(): readonly Series[] {
    return this.series;
  }
}

type LabelValues = Record<Label, string | number>;

function labelsOf(series: Series): LabelValues {
  return { method: series.method, route: series.route, status: series.status };
}

const DURATIONS = 'eas_http_request_duration_seconds';
const DURATIONS_HELP = 'Time from the request to its answer, per route pattern, method and status.';

/** `eas_http_request_duration_seconds`: the latency histogram, read from the statistics when scraped. */
class RouteDurations extends Histogram<Label | 'le'> {
  constructor(
    private readonly statistics: RequestStatistics,
    metrics: Metrics,
  ) {
    super({
      name: DURATIONS,
      help: DURATIONS_HELP,
      labelNames: ['method', 'route', 'status'],
      buckets: [...LATENCY_BUCKETS],
      registers: [metrics.registry],
    });
  }

  /**
   * What the registry reads (prom-client's histograms answer `get` from it, and the text format asks for it
   * directly): every series with its cumulative buckets, sum and count.
   */
  async getForPromString() {
    const values: Array<{
      labels: Partial<Record<Label | 'le', string | number>>;
      sharedLabels: Record<string, never>;
      value: number;
      metricName: string;
    }> = [];
    const sample = (labels: Partial<Record<Label | 'le', string | number>>, value: number, suffix: string) =>
      values.push({ labels, sharedLabels: {}, value, metricName: `${DURATIONS}${suffix}` });
    for (const series of this.statistics.all()) {
      const labels = labelsOf(series);
      let cumulative = 0;
      for (let bucket = 0; bucket <= LATENCY_BUCKETS.length; bucket += 1) {
        cumulative += series.buckets[bucket]!;
        sample(
          { ...labels, le: bucket < LATENCY_BUCKETS.length ? LATENCY_BUCKETS[bucket]! : '+Inf' },
          cumulative,
          '_bucket',
        );
      }
      sample(labels, series.sum, '_sum');
      sample(labels, series.count, '_count');
    }
    return { name: DURATIONS, help: DURATIONS_HELP, type: 'histogram', aggregator: 'sum', values };
  }
}

/** `eas_http_requests_total`: the answers per route pattern, method and status. */
class RouteRequests extends Counter<Label> {
  constructor(
    private readonly statistics: RequestStatistics,
    metrics: Metrics,
  ) {
    super({
      name: 'eas_http_requests_total',
      help: 'Requests answered, per route pattern, method and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [metrics.registry],
    });
  }

  override async get() {
    const base = await super.get();
    return {
      ...base,
      values: this.statistics.all().map((series) => ({ labels: labelsOf(series), value: series.count })),
    };
  }
}

/** The request statistics of an app, with their two metrics registered. */
export function requestStatistics(metrics: Metrics): RequestStatistics {
  const statistics = new RequestStatistics();
  new RouteDurations(statistics, metrics);
  new RouteRequests(statistics, metrics);
  return statistics;
}
