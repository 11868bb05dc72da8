import cluster from 'node:cluster';
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import type { CounterConfiguration, Registry } from 'prom-client';
import type { RequestLogEntry, Storage } from '../../core/internal.js';
import type { MetricsEndpoint } from '../../modules/metrics/index.js';
import type { RealtimeMonitor } from '../../realtime/monitor.js';
import { RequestSeries } from '../server/request-series.js';

/** Request durations, in seconds: from 0.25 ms to 10 s. */
const durationBuckets = [
  0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

let promClient: typeof PromClient | undefined;
/** prom-client, loaded when metrics are first scraped (a start does not need it; a `--workers` worker does). */
const loadPromClient = (): typeof PromClient =>
  (promClient ??= createRequire(import.meta.url)('prom-client') as typeof PromClient);

/** The route label of a request no route answered: raw paths would make a label per URL. */
export const unmatchedRoute = '(unmatched)';

export interface NodeMetrics {
  /** Counts one answered request (on every request's path: a map lookup and two increments). */
  observe(entry: RequestLogEntry): void;
  /** `GET /metrics` of this process, or of the whole cluster from a worker. */
  endpoint: MetricsEndpoint;
  /** This process's registry (made, and prom-client loaded, on first use). */
  registry(): Registry;
  /** The load of the last minutes, for the admin overview's charts. */
  load(): LoadReport;
  stop(): void;
}

/** One interval of the load history. */
export interface LoadPoint {
  /** The end of the interval (ISO 8601). */
  at: string;
  /** Requests answered per second over the interval. */
  perSecond: number;
  /** The share of them answered 5xx, 0 to 1. */
  errorRate: number;
  /** The 95th percentile of their durations in ms, estimated from the histogram's buckets; null without requests. */
  p95Ms: number | null;
}

export interface LoadReport {
  available: true;
  intervalSeconds: number;
  points: LoadPoint[];
}

/** The load history: a point every 5 s, the last 12 minutes. */
export const loadInterval = 5000;
const loadPoints = 144;

/** Totals read off the request counter and the duration histogram at one moment. */
interface LoadSnapshot {
  at: number;
  requests: number;
  errors: number;
  /** Cumulative counts by bucket bound, ascending, +Inf last. */
  buckets: Array<[number, number]>;
}

function snapshot(series: RequestSeries): LoadSnapshot {
  return { at: Date.now(), ...series.totals() };
}

/**
 * The 95th percentile between two snapshots, as Prometheus's
 * histogram_quantile estimates it: linear within the bucket it falls in.
 */
function p95Between(before: LoadSnapshot, after: LoadSnapshot): number | null {
  const counts = after.buckets.map(([bound, count]) => {
    const earlier = before.buckets.find(([b]) => b === bound)?.[1] ?? 0;
    return [bound, count - earlier] as const;
  });
  const total = counts.at(-1)?.[1] ?? 0;
  if (total <= 0) return null;
  const rank = total * 0.95;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [bound, count] of counts) {
    if (count >= rank) {
      // In the last (+Inf) bucket the best estimate is its lower bound.
      if (bound === Infinity) return lowerBound * 1000;
      return (lowerBound + ((bound - lowerBound) * (rank - lowerCount)) / (count - lowerCount || 1)) * 1000;
    }
    lowerBound = bound;
    lowerCount = count;
  }
  return lowerBound * 1000;
}

/**
 * A counter whose value is read from elsewhere at scrape time (it only ever
 * grows): by the value of its one label, or a single number without one.
 */
function countedFrom(
  registry: Registry,
  config: Omit<CounterConfiguration<string>, 'registers'>,
  read: () => Record<string, number> | number,
) {
  const seen: Record<string, number> = {};
  const label = config.labelNames?.[0];
  return new (loadPromClient().Counter)({
    ...config,
    registers: [registry],
    collect() {
      const now = read();
      for (const [value, count] of Object.entries(typeof now === 'number' ? { '': now } : now)) {
        const delta = count - (seen[value] ?? 0);
        if (delta > 0) {
          if (label) this.inc({ [label]: value }, delta);
          else this.inc(delta);
        }
        seen[value] = count;
      }
    },
  });
}

/**
 * The Prometheus metrics of a Node server (prom-client): requests by route
 * pattern, method and status, their duration, error codes, realtime
 * connections and messages, storage pool and unavailability, and the
 * default process metrics (CPU, memory, event-loop lag, handles, GC).
 */
export function createNodeMetrics(options: {
  storage: Storage;
  monitor?: RealtimeMonitor | undefined;
  token: () => string | undefined;
}): NodeMetrics {
  const series = new RequestSeries(
    durationBuckets,
    {
      name: 'berth_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status',
    },
    {
      name: 'berth_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by route pattern and method',
    },
  );
  /** Problem answers by code (BERTH_UNAVAILABLE: storage was busy or unreachable). */
  const problems: Record<string, number> = {};
  const { storage, monitor } = options;
  let registry: Registry | undefined;
  /**
   * The registry, made on the first scrape: the counting above needs no
   * prom-client, so a start does not load it. The default process metrics
   * (event-loop lag, GC) are measured from then on; CPU, memory and handles
   * are read from the process whenever scraped.
   */
  const registryNow = (): Registry => {
    if (registry) return registry;
    const { AggregatorRegistry, collectDefaultMetrics, Gauge, Registry } = loadPromClient();
    const made = new Registry();
    registry = made;
    collectDefaultMetrics({ register: made });
    series.register(made);
    countedFrom(
      made,
      {
        name: 'berth_http_problems_total',
        help: 'Problem answers, by code (BERTH_VALIDATION_FAILED, BERTH_UNAVAILABLE, ...)',
        labelNames: ['code'],
      },
      () => problems,
    );
    countedFrom(
      made,
      {
        name: 'berth_storage_errors_total',
        help: 'Requests that failed because storage was busy or unreachable',
      },
      () => problems.BERTH_UNAVAILABLE ?? 0,
    );
    new Gauge({
      name: 'berth_storage_pool_connections',
      help: 'Connections of the storage pool, by state (PostgreSQL); waiting is callers queued for one',
      labelNames: ['state'] as const,
      registers: [made],
      collect() {
        const pool = storage.stats?.().pool;
        if (!pool) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
    new Gauge({
      name: 'berth_storage_statements_cached',
      help: 'Prepared statements kept by the storage driver',
      registers: [made],
      collect() {
        this.set(storage.stats?.().statements ?? 0);
      },
    });
    if (monitor) {
      new Gauge({
        name: 'berth_realtime_connections',
        help: 'Realtime (socket.io) clients connected',
        registers: [made],
        collect() {
          this.set(monitor.clientCount);
        },
      });
      countedFrom(
        made,
        {
          name: 'berth_realtime_messages_total',
          help: 'Realtime messages, by direction (in: from clients, out: to clients)',
          labelNames: ['direction'],
        },
        () => monitor.messageCounts,
      );
    }
    if (cluster.isWorker) {
      // The primary asks each worker for this registry; making an aggregator is what starts answering it.
      AggregatorRegistry.setRegistries([made]);
      new AggregatorRegistry();
    }
    return made;
  };
  // A worker answers the primary's scrapes from the start.
  if (cluster.isWorker) registryNow();

  const observe = (entry: RequestLogEntry): void => {
    series.observe(entry.route ?? unmatchedRoute, entry.method, entry.status, entry.durationMs / 1000);
    if (entry.code) problems[entry.code] = (problems[entry.code] ?? 0) + 1;
  };

  const history: LoadPoint[] = [];
  let last: LoadSnapshot | undefined;
  const sampleLoad = (): void => {
    const now = snapshot(series);
    if (last) {
      const seconds = (now.at - last.at) / 1000;
      const answered = now.requests - last.requests;
      history.push({
        at: new Date(now.at).toISOString(),
        perSecond: Math.round((answered / seconds) * 10) / 10,
        errorRate: answered > 0 ? (now.errors - last.errors) / answered : 0,
        p95Ms: p95Between(last, now),
      });
      if (history.length > loadPoints) history.shift();
    }
    last = now;
  };
  sampleLoad();
  const sampler = setInterval(sampleLoad, loadInterval);
  sampler.unref();

  const scrape = cluster.isWorker
    ? askPrimary
    : async () => ({ contentType: registryNow().contentType, body: await registryNow().metrics() });
  return {
    observe,
    registry: registryNow,
    endpoint: { scrape, token: options.token },
    load: () => ({ available: true, intervalSeconds: loadInterval / 1000, points: [...history] }),
    stop: () => clearInterval(sampler),
  };
}

/** What a worker and its primary say to each other about metrics. */
export const metricsMessages = { request: 'berth:metrics', answer: 'berth:metrics-answer' } as const;

let asked = 0;
/** In a `--workers` worker: the primary aggregates every worker's metrics and answers. */
function askPrimary(): Promise<{ contentType: string; body: string }> {
  const id = ++asked;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error('the cluster primary did not answer for the metrics within 10 s'));
    }, 10_000);
    const onMessage = (message: {
      type?: string;
      id?: number;
      contentType?: string;
      body?: string;
      error?: string;
    }) => {
      if (message?.type !== metricsMessages.answer || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve({ contentType: message.contentType!, body: message.body! });
    };
    process.on('message', onMessage);
    process.send!({ type: metricsMessages.request, id });
  });
}

/**
 * On a `--workers` primary: answers a worker's request for the metrics with
 * every worker's, aggregated (counters and histograms summed).
 */
export function answerMetricsForWorkers(): void {
  const aggregator = new (loadPromClient().AggregatorRegistry)();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== metricsMessages.request) return;
    aggregator.clusterMetrics().then(
      (body) =>
        worker.send({
          type: metricsMessages.answer,
          id: message.id,
          contentType: aggregator.contentType,
          body,
        }),
      (error: Error) => worker.send({ type: metricsMessages.answer, id: message.id, error: error.message }),
    );
  });
}
