import type { Registry } from 'prom-client';

/** One value of a metric as prom-client's registry reads it (and sends it between workers). */
interface SeriesValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** What prom-client's registry asks of a metric: its description and, at scrape time, its values. */
interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{
    name: string;
    help: string;
    type: 'counter' | 'histogram';
    aggregator: 'sum';
    values: SeriesValue[];
  }>;
  reset(): void;
}

/** The requests of one route and method: how many by status, and their durations. */
interface RouteSeries {
  byStatus: Map<number, number>;
  /** Counts by bucket (not cumulative); the last one is above every bound. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * The request counter and duration histogram, counted with plain numbers:
 * this runs for every request, so it is a few map lookups and additions
 * (prom-client's own `inc` and `observe` check and hash their labels each
 * time). The registry reads them in the usual form when scraped, and the
 * cluster's aggregator sums them like any counter and histogram.
 */
export class RequestSeries {
  /** By route pattern, then method. */
  readonly #series = new Map<string, Map<string, RouteSeries>>();
  readonly #bounds: readonly number[];

  readonly #counter: { name: string; help: string };
  readonly #histogram: { name: string; help: string };

  constructor(
    bounds: readonly number[],
    counter: { name: string; help: string },
    histogram: { name: string; help: string },
  ) {
    this.#bounds = bounds;
    this.#counter = counter;
    this.#histogram = histogram;
  }

  /** Adds the counter and the histogram to a registry, which reads them when scraped. */
  register(registry: Registry): void {
    const { name } = this.#histogram;
    const metric = (
      description: { name: string; help: string },
      type: 'counter' | 'histogram',
      values: () => SeriesValue[],
    ): CollectedMetric => ({
      ...description,
      type,
      aggregator: 'sum',
      get: () => Promise.resolve({ ...description, type, aggregator: 'sum', values: values() }),
      reset: () => this.#series.clear(),
    });
    // The registry takes any object that answers get() as its own metrics do.
    const register = (collected: CollectedMetric): void =>
      registry.registerMetric(collected as unknown as Parameters<Registry['registerMetric']>[0]);
    register(metric(this.#counter, 'counter', () => this.#counts()));
    register(metric(this.#histogram, 'histogram', () => this.#durations(name)));
  }

  /** Counts one answered request. */
  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.#series.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.#series.set(route, byMethod);
    }
    let series = byMethod.get(method);
    if (series === undefined) {
      series = { byStatus: new Map(), buckets: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 };
      byMethod.set(method, series);
    }
    series.byStatus.set(status, (series.byStatus.get(status) ?? 0) + 1);
    const bounds = this.#bounds;
    let bucket = 0;
    while (bucket < bounds.length && seconds > bounds[bucket]!) bucket++;
    series.buckets[bucket]!++;
    series.sum += seconds;
    series.count++;
  }

  /** Totals over every route now: requests, those answered 5xx, and cumulative counts by bucket bound (+Inf last). */
  totals(): { requests: number; errors: number; buckets: Array<[number, number]> } {
    let requests = 0;
    let errors = 0;
    const counts = new Float64Array(this.#bounds.length + 1);
    for (const byMethod of this.#series.values()) {
      for (const series of byMethod.values()) {
        requests += series.count;
        for (const [status, value] of series.byStatus) if (status >= 500) errors += value;
        series.buckets.forEach((value, index) => (counts[index]! += value));
      }
    }
    let cumulative = 0;
    const buckets = [...this.#bounds, Infinity].map((bound, index): [number, number] => [
      bound,
      (cumulative += counts[index]!),
    ]);
    return { requests, errors, buckets };
  }

  #counts(): SeriesValue[] {
    const values: SeriesValue[] = [];
    for (const [route, byMethod] of this.#series) {
      for (const [method, series] of byMethod) {
        for (const [status, value] of series.byStatus) {
          values.push({ labels: { route, method, status: String(status) }, value });
        }
      }
    }
    return values;
  }

  #durations(name: string): SeriesValue[] {
    const values: SeriesValue[] = [];
    for (const [route, byMethod] of this.#series) {
      for (const [method, series] of byMethod) {
        let cumulative = 0;
        this.#bounds.forEach((le, index) => {
          cumulative += series.buckets[index]!;
          values.push({ labels: { route, method, le }, value: cumulative, metricName: `${name}_bucket` });
        });
        values.push(
          { labels: { route, method, le: '+Inf' }, value: series.count, metricName: `${name}_bucket` },
          { labels: { route, method }, value: series.sum, metricName: `${name}_sum` },
          { labels: { route, method }, value: series.count, metricName: `${name}_count` },
        );
      }
    }
    return values;
  }
}
