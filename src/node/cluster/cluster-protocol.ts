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
  /** From a new worker, first: it asks for its settings. */
  settingsWanted: 'berth:settings-wanted',
  /** To a new worker that asked: what `.env` and the config file held when the primary applied them (`inputs`). */
  settings: 'berth:settings',
  /** From a worker that could not start, before it exits: why (`reason`). */
  startFailed: 'berth:start-failed',
} as const;

/** Set in a worker's environment: it serves connections handed over by the primary. */
export const workerVariable = 'BERTH_CLUSTER_WORKER';
