import autocannon from 'autocannon';
import type { LoadSettings, Measurement, Scenario } from './types.js';

/** Latencies of 2xx responses in milliseconds, at full (sub-millisecond) resolution, over several runs. */
class Latencies {
  private values = new Float64Array(1 << 16);
  count = 0;

  add(value: number): void {
    if (this.count === this.values.length) {
      const larger = new Float64Array(this.values.length * 2);
      larger.set(this.values);
      this.values = larger;
    }
    this.values[this.count++] = value;
  }

  percentiles(): Measurement['latencyMs'] {
    const sorted = this.values.slice(0, this.count).sort();
    const at = (fraction: number) => {
      if (sorted.length === 0) return Number.NaN;
      const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
      return round(sorted[index]!, 2);
    };
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
  }
}

const round = (value: number, digits: number): number => Number(value.toFixed(digits));

/** User and system CPU time of this process (the load generator's), in microseconds. */
const cpuTime = (usage: NodeJS.ResourceUsage): number => usage.userCPUTime + usage.systemCPUTime;

/**
 * Drives one scenario with autocannon, possibly in several slices whose results add up, so that a pair can
 * alternate between its two scenarios and background load on a shared machine falls on both alike.
 */
export class ScenarioLoad {
  private readonly latencies = new Latencies();
  private milliseconds = 0;
  private errors = 0;
  private non2xx = 0;
  private serverCpuMicroseconds = 0;
  private clientWakeups = 0;
  private readonly slices: Measurement['slices'] = [];

  /**
   * `baseUrls`: one per process of the scenario's server, the connections split evenly over them; `serverCpu`
   * reads the CPU time those processes have used so far, in microseconds.
   */
  constructor(
    private readonly baseUrls: readonly string[],
    private readonly scenario: ResolvedScenario,
    private readonly settings: LoadSettings,
    private readonly serverCpu: () => Promise<number>,
  ) {}

  /** A discarded run: JIT, connection pools and caches settle before anything is counted. */
  async warmUp(seconds: number): Promise<void> {
    if (seconds > 0) await this.run(seconds, false);
  }

  /** A measured run, added to the totals. */
  async slice(seconds: number): Promise<void> {
    const cpuBefore = await this.serverCpu();
    const requestsBefore = this.latencies.count;
    const clientBefore = process.resourceUsage();
    const result = await this.run(seconds, true);
    const clientAfter = process.resourceUsage();
    const wakeups = clientAfter.voluntaryContextSwitches - clientBefore.voluntaryContextSwitches;
    const clientCpu = cpuTime(clientAfter) - cpuTime(clientBefore);
    this.clientWakeups += wakeups;
    const cpu = (await this.serverCpu()) - cpuBefore;
    const milliseconds = result.finish.getTime() - result.start.getTime();
    const requests = this.latencies.count - requestsBefore;
    this.slices.push({
      requestsPerSecond: round((requests * 1000) / Math.max(milliseconds, 1e-6), 1),
      serverCpuMicrosecondsPerRequest: round(cpu / Math.max(requests, 1), 1),
      clientWakeupsPerRequest: round(wakeups / Math.max(requests, 1), 2),
      clientCpuMicrosecondsPerRequest: round(clientCpu / Math.max(requests, 1), 1),
    });
    this.serverCpuMicroseconds += cpu;
    this.milliseconds += milliseconds;
    this.errors += result.errors;
    this.non2xx += result.non2xx;
  }

  measurement(): Measurement {
    const seconds = this.milliseconds / 1000;
    return {
      label: this.scenario.label,
      requests: this.latencies.count,
      seconds: round(seconds, 2),
      requestsPerSecond: round(this.latencies.count / Math.max(seconds, 1e-9), 1),
      latencyMs: this.latencies.percentiles(),
      serverCpuMicrosecondsPerRequest: round(
        this.serverCpuMicroseconds / Math.max(this.latencies.count, 1),
        0,
      ),
      serverCpuLoad: round(this.serverCpuMicroseconds / 1e6 / Math.max(seconds, 1e-9), 2),
      clientWakeupsPerRequest: round(this.clientWakeups / Math.max(this.latencies.count, 1), 2),
      slices: this.slices,
      errors: this.errors,
      non2xx: this.non2xx,
    };
  }

  /**
   * autocannon's own latency histogram has whole-millisecond buckets, too coarse for requests that take one or two;
   * its per-response event carries the time as measured, so the percentiles are computed from that.
   */
  private async run(seconds: number, record: boolean): Promise<RunResult> {
    const share = Math.max(1, Math.round(this.settings.connections / this.baseUrls.length));
    const results = await Promise.all(
      this.baseUrls.map((baseUrl) => this.runOne(baseUrl, share, seconds, record)),
    );
    return {
      start: new Date(Math.min(...results.map((result) => result.start.getTime()))),
      finish: new Date(Math.max(...results.map((result) => result.finish.getTime()))),
      errors: results.reduce((sum, result) => sum + result.errors + result.timeouts, 0),
      non2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
    };
  }

  private runOne(
    baseUrl: string,
    connections: number,
    seconds: number,
    record: boolean,
  ): Promise<autocannon.Result> {
    const { scenario } = this;
    const makeBody = scenario.body;
    const request: autocannon.Request = {
      method: scenario.method ?? 'GET',
      path: scenario.path,
      headers: scenario.headers ?? {},
      ...(makeBody && {
        setupRequest: (each: autocannon.Request) => ({ ...each, body: makeBody() }),
      }),
    };
    return new Promise((resolve, reject) => {
      const instance = autocannon(
        {
          url: baseUrl,
          connections,
          pipelining: 1,
          duration: seconds,
          requests: [request],
          // A stuck server must fail the scenario, not stall the run.
          timeout: 10,
        },
        (error, result) => (error ? reject(error) : resolve(result)),
      );
      if (record) {
        instance.on('response', (_client, statusCode: number, _bytes: number, responseTime: number) => {
          if (statusCode >= 200 && statusCode <= 299) this.latencies.add(responseTime);
        });
      }
    });
  }
}

interface RunResult {
  start: Date;
  finish: Date;
  errors: number;
  non2xx: number;
}

/** A scenario whose headers are known (see `resolveHeaders`). */
export type ResolvedScenario = Scenario & { headers?: Record<string, string> };

/** The scenario with its headers fetched from the running server when they are a function. */
export async function resolveHeaders(baseUrl: string, scenario: Scenario): Promise<ResolvedScenario> {
  const headers = typeof scenario.headers === 'function' ? await scenario.headers(baseUrl) : scenario.headers;
  return { ...scenario, headers: headers ?? {} };
}

/** One request before the load, so a scenario that answers the wrong thing fails loudly instead of being timed. */
export async function probe(baseUrl: string, scenario: ResolvedScenario): Promise<unknown> {
  const response = await fetch(`${baseUrl}${scenario.path}`, {
    method: scenario.method ?? 'GET',
    headers: scenario.headers ?? {},
    ...(scenario.body && { body: scenario.body() }),
  });
  const body = await response.text();
  try {
    return scenario.check(response.status, body);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${scenario.label}: ${reason} (HTTP ${response.status}: ${body.slice(0, 300)})`, {
      cause: error,
    });
  }
}
