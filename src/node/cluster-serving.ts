import cluster, { type Worker } from 'node:cluster';

/**
 * Which workers take new connections. @socket.io/sticky's primary hands a
 * new connection to one of `Object.keys(cluster.workers)`; during a rolling
 * reload a retiring worker must get none, yet stay reachable by id for what
 * it still serves (a long-polling session bound to it, a request whose body
 * the primary forwards). So `cluster.workers` becomes a view of the same
 * object that leaves retiring workers out of its keys and nothing else.
 */
export function servingView(): {
  retire(worker: Worker): void;
  forget(worker: Worker): void;
  /** Every worker, retiring ones too. */
  all(): Worker[];
} {
  const retiring = new Set<string>();
  const workers = cluster.workers ?? {};
  // Typed read-only, but a plain property of the cluster module that Node itself assigns.
  (cluster as { workers: typeof workers }).workers = new Proxy(workers, {
    ownKeys: (target) => Reflect.ownKeys(target).filter((key) => !retiring.has(String(key))),
  });
  return {
    retire: (worker) => void retiring.add(String(worker.id)),
    forget: (worker) => void retiring.delete(String(worker.id)),
    all: () => Object.values(workers).filter((worker): worker is Worker => worker !== undefined),
  };
}
