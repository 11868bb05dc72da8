/** Messages between a `--workers` primary and its workers. */
export const clusterMessages = {
  ready: 'berth:ready',
  shutdown: 'berth:shutdown',
  /** Stop taking work: finish what is in flight, close each connection after its response, then exit. */
  retire: 'berth:retire',
} as const;

/** Set in a worker's environment: it serves connections handed over by the primary. */
export const workerVariable = 'BERTH_CLUSTER_WORKER';
