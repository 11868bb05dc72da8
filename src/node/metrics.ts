import cluster from 'node:cluster';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
} from 'prom-client';
import type { MetricsEndpoint, RequestLogEntry, Storage } from '../core/index.js';
import type { RealtimeMonitor } from '../realtime/monitor.js';

/** Request durations, in seconds: from 1 ms to 10 s. */
const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The route label of a request no route answered: raw paths would make a label per URL. */
export const unmatchedRoute = '(unmatched)';

export interface NodeMetrics {
  /** Counts one answered request (on every request's path: a map lookup and two increments). */
  observe(entry: RequestLogEntry): void;
  /** `GET /metrics` of this process, or of the whole cluster from a worker. */
  endpoint: MetricsEndpoint;
  registry: Registry;
}

/** A counter whose value is read from elsewhere at scrape time (it only ever grows). */
function countedFrom(
  registry: Registry,
  config: Omit<CounterConfiguration<string>, 'registers'>,
  read: () => Record<string, number>,
) {
  const seen: Record<string, number> = {};
  return new Counter({
    ...config,
    registers: [registry],
    collect() {
      for (const [label, value] of Object.entries(read())) {
        const delta = value - (seen[label] ?? 0);
        if (delta > 0) this.inc({ [config.labelNames![0]!]: label }, delta);
        seen[label] = value;
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
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'berth_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'berth_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern and method',
    labelNames: ['route', 'method'] as const,
    buckets: durationBuckets,
    registers: [registry],
  });
  const problems = new Counter({
    name: 'berth_http_problems_total',
    help: 'Problem answers, by code (BERTH_VALIDATION_FAILED, BERTH_UNAVAILABLE, ...)',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  const storageErrors = new Counter({
    name: 'berth_storage_errors_total',
    help: 'Requests that failed because storage was busy or unreachable',
    registers: [registry],
  });
  const { storage, monitor } = options;
  new Gauge({
    name: 'berth_storage_pool_connections',
    help: 'Connections of the storage pool, by state (PostgreSQL); waiting is callers queued for one',
    labelNames: ['state'] as const,
    registers: [registry],
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
    registers: [registry],
    collect() {
      this.set(storage.stats?.().statements ?? 0);
    },
  });
  if (monitor) {
    new Gauge({
      name: 'berth_realtime_connections',
      help: 'Realtime (socket.io) clients connected',
      registers: [registry],
      collect() {
        this.set(monitor.clientCount);
      },
    });
    countedFrom(
      registry,
      {
        name: 'berth_realtime_messages_total',
        help: 'Realtime messages, by direction (in: from clients, out: to clients)',
        labelNames: ['direction'],
      },
      () => monitor.messageCounts,
    );
  }

  // One child per (route, method, status): labels are looked up once, not on every request.
  const requestChildren = new Map<
    string,
    { count: ReturnType<typeof requests.labels>; time: ReturnType<typeof durations.labels> }
  >();
  const observe = (entry: RequestLogEntry): void => {
    const route = entry.route ?? unmatchedRoute;
    const key = `${entry.method} ${entry.status} ${route}`;
    let child = requestChildren.get(key);
    if (!child) {
      child = {
        count: requests.labels(route, entry.method, String(entry.status)),
        time: durations.labels(route, entry.method),
      };
      requestChildren.set(key, child);
    }
    child.count.inc();
    child.time.observe(entry.durationMs / 1000);
    if (entry.code) {
      problems.inc({ code: entry.code });
      if (entry.code === 'BERTH_UNAVAILABLE') storageErrors.inc();
    }
  };

  const scrape = cluster.isWorker
    ? askPrimary
    : async () => ({ contentType: registry.contentType, body: await registry.metrics() });
  if (cluster.isWorker) AggregatorRegistry.setRegistries([registry]);
  return { observe, registry, endpoint: { scrape, token: options.token } };
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
  const aggregator = new AggregatorRegistry();
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
