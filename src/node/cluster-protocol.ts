/** Messages between a `--workers` primary and its workers. */
export const clusterMessages = {
  ready: 'berth:ready',
  shutdown: 'berth:shutdown',
  /** Stop taking work: finish what is in flight, close each connection after its response, then exit. */
  retire: 'berth:retire',
  /**
   * From a worker, before it answers a socket.io handshake: it will hold the
   * session with this id (`data`). The primary records it and answers with
   * `sessionClaimed`, so the client's next request, which may come at once,
   * already reaches this worker.
   */
  sessionClaim: 'berth:session-claim',
  /** To a worker: the session id it claimed is recorded. */
  sessionClaimed: 'berth:session-claimed',
} as const;

/** Set in a worker's environment: it serves connections handed over by the primary. */
export const workerVariable = 'BERTH_CLUSTER_WORKER';
