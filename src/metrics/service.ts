import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';

/** A metric's configuration without its registries: the service registers it in its own. */
type Own<Configuration> = Omit<Configuration, 'registers'>;

/**
 * The metrics of one server process, in Prometheus text format (docs/operations.md, "Metrics"). One registry per
 * service graph, never prom-client's global one: several apps run in one test process.
 *
 * A module adds its own metric when the service graph is built (src/services.ts), through `counter`, `gauge` or
 * `histogram`; a value the module already holds is best read when scraped, with `collect`, so that the request path
 * pays nothing for it:
 *
 * ```ts
 * metrics.gauge({
 *   name: 'eas_admin_mode',
 *   help: 'Whether admin mode is on (1) or off (0).',
 *   collect() {
 *     this.set(adminMode.isOn() ? 1 : 0);
 *   },
 * });
 * ```
 *
 * Names start with `eas_` and follow the Prometheus conventions (`_total` for counters, base units).
 */
export class Metrics {
  readonly registry = new Registry();

  constructor(options: { processMetrics: boolean } = { processMetrics: true }) {
    // CPU, memory, event-loop delay, garbage collection: the usual names, which dashboards expect.
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  counter<Label extends string>(configuration: Own<CounterConfiguration<Label>>): Counter<Label> {
    return new Counter({ ...configuration, registers: [this.registry] });
  }

  gauge<Label extends string>(configuration: Own<GaugeConfiguration<Label>>): Gauge<Label> {
    return new Gauge({ ...configuration, registers: [this.registry] });
  }

  histogram<Label extends string>(configuration: Own<HistogramConfiguration<Label>>): Histogram<Label> {
    return new Histogram({ ...configuration, registers: [this.registry] });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric, its scrape-time values collected. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
