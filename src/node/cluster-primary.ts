import cluster, { type Worker } from 'node:cluster';
import { createServer, type Server } from 'node:http';
import { setupPrimary as setupClusterAdapter } from '@socket.io/cluster-adapter';
import { setupMaster as setupSticky } from '@socket.io/sticky';
import type { App } from '../core/index.js';
import { boot } from './boot.js';
import { servingView } from './cluster-serving.js';
import { listenerUrl } from './http-listener.js';
import type { NodeLogger } from './logger.js';
import { answerMetricsForWorkers } from './metrics.js';
import { resolveAppModuleSettings } from './module-settings.js';
import { retireGrace, summarize } from './reload.js';
import { removeServerState, writeServerState, type ReloadOutcome } from './server-state.js';
import { SettingError } from './setting-error.js';
import { settingChanges } from './settings-changes.js';
import type { Settings, StartFlags } from './settings.js';

/** Messages between the primary and its workers. */
export const clusterMessages = {
  ready: 'berth:ready',
  shutdown: 'berth:shutdown',
  /** Stop taking work: finish what is in flight, close each connection after its response, then exit. */
  retire: 'berth:retire',
} as const;

/** Set in a worker's environment: it serves connections handed over by the primary. */
export const workerVariable = 'BERTH_CLUSTER_WORKER';

/** How long a new worker may take to boot before a reload gives up on it. */
const workerReadyTimeout = 30_000;

function listen(server: Server, port: number, host: string | undefined, source: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new SettingError(
              `port ${port} (from ${source}) is already in use: stop the program using it or choose another port`,
            )
          : error,
      ),
    );
    server.listen(port, host, () => resolve((server.address() as { port: number }).port));
  });
}

/** Resolves when the worker says it serves; rejects when it exits first or takes too long. */
function readyOf(worker: Worker, timeout: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`it was not ready within ${timeout / 1000} s`)), timeout);
    const onMessage = (message: { type?: string }) => {
      if (message?.type === clusterMessages.ready) finish();
    };
    const onExit = (code: number | null, signal: string | null) =>
      finish(new Error(`it exited (${signal ?? code}) before it was ready`));
    const finish = (error?: Error) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    };
    worker.on('message', onMessage);
    worker.on('exit', onExit);
  });
}

/** A port that accepts connections and hands each to a serving worker. */
function balancer(): Server {
  const server = createServer();
  setupSticky(server, { loadBalancingMethod: 'round-robin' });
  return server;
}

/**
 * `start --workers N`: this process owns the port and hands each connection
 * to one of N worker processes (sticky for socket.io long-polling sessions),
 * which serve the app. Migrations and the admin token are done here once,
 * before any worker starts. A worker that dies is replaced. A reload
 * (SIGHUP) replaces the workers one at a time: each new one must be ready
 * before the old one stops taking connections and drains.
 */
export async function startCluster(
  app: App,
  options: { flags: StartFlags; argv: string[]; cwd?: string; env?: Record<string, string | undefined> },
): Promise<{
  port: number;
  logger: NodeLogger;
  reload(): Promise<ReloadOutcome>;
  close(): Promise<void>;
}> {
  // Migrations, the admin token and the route table, once, before any worker starts.
  const booted = await boot(app, {
    flags: options.flags,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    showNewToken: process.stdout.isTTY === true,
    logRoutes: true,
  });
  await booted.storage.close();
  const { logger } = booted;
  let settings: Settings = booted.settings;
  const count = settings.workers.value;
  const dataDir = settings.dataDir.value;
  logger.info({ workers: count }, `cluster: ${count} workers (from ${settings.workers.source})`);

  let server = balancer();
  if (!settings.redisUrl.value) setupClusterAdapter();
  if (settings.metrics.value) answerMetricsForWorkers();
  // Sticky hands over the first bytes of each connection as a Buffer: that needs advanced serialization.
  cluster.setupPrimary({ exec: options.argv[1]!, args: options.argv.slice(2), serialization: 'advanced' });
  const serving = servingView();

  let stopping = false;
  /** Workers told to retire (or given up on): their exit is expected. */
  const leaving = new Set<number>();
  const crashes: number[] = [];
  const fork = (): Worker => cluster.fork({ [workerVariable]: '1' });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping || leaving.delete(worker.id)) return serving.forget(worker);
    crashes.push(Date.now());
    while (crashes.length && crashes[0]! < Date.now() - 10_000) crashes.shift();
    logger.error(
      { worker: worker.process.pid, code, signal },
      `worker ${worker.process.pid} exited (${signal ?? code}); starting another`,
    );
    if (crashes.length > count * 3) {
      logger.error({}, 'workers keep crashing: giving up');
      process.exit(1);
    }
    fork();
  });
  const first = Array.from({ length: count }, fork);
  await Promise.all(first.map((worker) => readyOf(worker, workerReadyTimeout)));
  let port = await listen(server, settings.port.value, settings.host.value, settings.port.source);
  let url = listenerUrl(settings.host.value, port);
  logger.info(
    { port, portSource: settings.port.source, workers: count },
    `listening on ${url} (port from ${settings.port.source}) with ${count} workers`,
  );
  const startedAt = new Date().toISOString();
  let lastReload: ReloadOutcome | undefined;
  const recordState = () =>
    writeServerState(dataDir, {
      pid: process.pid,
      port,
      url,
      startedAt,
      ...(lastReload ? { reload: lastReload } : {}),
    });
  recordState();

  /** Replaces one worker: the new one serves before the old one stops taking connections and drains. */
  const replace = async (old: Worker): Promise<void> => {
    const fresh = fork();
    try {
      await readyOf(fresh, workerReadyTimeout);
    } catch (error) {
      leaving.add(fresh.id);
      fresh.process.kill('SIGKILL');
      throw new Error(`a new worker did not start: ${(error as Error).message}`, { cause: error });
    }
    serving.retire(old);
    leaving.add(old.id);
    const exited = new Promise<void>((done) => old.once('exit', () => done()));
    old.send({ type: clusterMessages.retire });
    const bound = retireGrace + settings.shutdownTimeout.value + 5000;
    const killer = setTimeout(() => old.process.kill('SIGKILL'), bound);
    await exited;
    clearTimeout(killer);
    logger.info(
      { retired: old.process.pid, serving: fresh.process.pid },
      `reload: worker ${fresh.process.pid} serves; worker ${old.process.pid} drained and stopped`,
    );
  };

  let reloads = 0;
  const outcome = (ok: boolean, message: string): ReloadOutcome => {
    lastReload = { count: ++reloads, at: new Date().toISOString(), ok, message };
    recordState();
    if (ok) logger.info({}, `reload: ${message}`);
    else logger.error({}, message);
    return lastReload;
  };

  const apply = async (): Promise<ReloadOutcome> => {
    let next: Settings;
    try {
      // The workers read the same files: what does not parse here would not start there.
      next = booted.resolve();
      resolveAppModuleSettings(booted.app, next);
    } catch (error) {
      return outcome(false, `reload failed, keeping the running workers: ${(error as Error).message}`);
    }
    const changes = settingChanges(settings, next);
    for (const change of changes.filter((each) => !each.live)) {
      logger.warn(
        { setting: change.setting },
        `${change.setting} ${change.detail}: restart the server to apply it; the reload keeps the running value`,
      );
    }
    const portChanged =
      next.host.value !== settings.host.value ||
      (next.port.value !== port && next.port.value !== settings.port.value);
    let retiringServer: Server | undefined;
    if (portChanged) {
      const fresh = balancer();
      try {
        port = await listen(fresh, next.port.value, next.host.value, next.port.source);
      } catch (error) {
        return outcome(
          false,
          `reload failed, still listening on ${url} with the running workers: ${(error as Error).message}`,
        );
      }
      retiringServer = server;
      server = fresh;
      url = listenerUrl(next.host.value, port);
    }
    const old = Object.values(cluster.workers ?? {}).filter(
      (worker): worker is Worker => worker !== undefined,
    );
    let replaced = 0;
    try {
      for (const worker of old) {
        await replace(worker);
        replaced++;
      }
    } catch (error) {
      return outcome(
        false,
        `reload failed after replacing ${replaced} of ${old.length} workers, keeping the others serving: ${(error as Error).message}`,
      );
    }
    if (retiringServer) {
      const closing = retiringServer;
      setTimeout(() => closing.close(), retireGrace).unref();
    }
    settings = { ...next, workers: settings.workers, dataDir: settings.dataDir };
    return outcome(
      true,
      `listening on ${url}; ${old.length} workers replaced one at a time; ${summarize(changes)}`,
    );
  };

  // A SIGHUP during a reload waits for it: two reloads never replace workers at once.
  let reloading: Promise<ReloadOutcome | undefined> = Promise.resolve(undefined);
  const reload = (): Promise<ReloadOutcome> => {
    const attempt = () =>
      apply().catch((error: unknown) =>
        outcome(false, `reload failed, keeping the running workers: ${(error as Error).message}`),
      );
    const next = reloading.then(attempt, attempt);
    reloading = next;
    return next;
  };

  return {
    get port() {
      return port;
    },
    logger,
    reload,
    async close() {
      stopping = true;
      logger.info({}, 'shutting down the workers');
      const exits = serving.all().map(
        (worker) =>
          new Promise<void>((done) => {
            if (worker.isDead()) return done();
            worker.once('exit', () => done());
            worker.send({ type: clusterMessages.shutdown });
            setTimeout(() => worker.kill('SIGKILL'), settings.shutdownTimeout.value + 2000).unref();
          }),
      );
      server.close();
      await Promise.all(exits);
      removeServerState(dataDir, process.pid);
      logger.info({}, 'stopped');
      await new Promise<void>((done) => logger.flush(() => done()));
    },
  };
}
