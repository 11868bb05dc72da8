import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:net';
import { setupPrimary as setupClusterAdapter } from '@socket.io/cluster-adapter';
import { stopApp, type App } from '../../core/internal.js';
import { boot } from '../server/boot.js';
import { clusterMessages, workerVariable } from './cluster-protocol.js';
import { createBalancer } from './cluster-balancer.js';
import { listenerUrl } from '../server/http-listener.js';
import type { NodeLogger } from '../runtime/logger.js';
import { answerMetricsForWorkers } from '../runtime/metrics.js';
import { retireGrace, summarize } from '../server/reload.js';
import { removeServerState, writeServerState, type ReloadOutcome } from '../server/server-state.js';
import { SettingError } from '../settings/setting-error.js';
import { reloadedSettings, settingChanges } from '../settings/settings-changes.js';
import type { SettingInputs, Settings, StartFlags } from '../settings/settings.js';

/** How long a new worker may take to boot before a reload gives up on it. */
const workerReadyTimeout = 30_000;
/** The longest a replacement for a dead worker waits before it starts. */
const maxRespawnDelay = 30_000;
/** With no worker serving, how many replacements in a row may fail to start before the primary exits. */
const giveUpAfter = 5;

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

/** The workers alive now. */
const workers = (): Worker[] =>
  Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);

/** Tells a worker to stop (shut down, or retire after draining); resolves once it exited, killing it after `bound` ms. */
function stopWorker(worker: Worker, type: string, bound: number): Promise<void> {
  return new Promise((done) => {
    if (worker.isDead()) return done();
    const killer = setTimeout(() => worker.process.kill('SIGKILL'), bound);
    worker.once('exit', () => {
      clearTimeout(killer);
      done();
    });
    worker.send({ type });
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

/**
 * After a reload moved the cluster to a new port: the old port accepts for
 * `retireGrace` ms more (clients move over), then stops accepting. What it
 * accepted went to the workers being replaced, which close each connection
 * after its response while they drain.
 */
function retirePort(server: Server, logger: NodeLogger): Promise<void> {
  logger.info(
    { retiring: server.address() },
    `the previous port keeps accepting for ${retireGrace} ms, then closes; its connections close as their workers drain`,
  );
  return new Promise((done) =>
    setTimeout(() => {
      server.close();
      done();
    }, retireGrace),
  );
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
    logTables: true,
    // The data directory's lock is held here for the whole cluster: workers come and go.
    primary: true,
    // The modules' onStart and onClose run in each worker; the primary only migrates.
    hooks: false,
  });
  await stopApp(booted.started);
  const { logger } = booted;
  let settings: Settings = booted.settings;
  const count = settings.workers.value;
  const dataDir = settings.dataDir.value;
  logger.info({ workers: count }, `cluster: ${count} workers (from ${settings.workers.source})`);

  const balancer = createBalancer();
  let server = balancer.open();
  if (!settings.redisUrl.value) setupClusterAdapter();
  if (settings.metrics.value) answerMetricsForWorkers();
  // The balancer hands over the first bytes of each connection as a Buffer: that needs advanced serialization.
  cluster.setupPrimary({ exec: options.argv[1]!, args: options.argv.slice(2), serialization: 'advanced' });

  let stopping = false;
  /** Workers told to retire (or given up on): their exit is expected. */
  const leaving = new Set<number>();
  /** Workers that said they serve. */
  const ready = new Set<number>();
  /** Why a worker could not start, as it said before exiting. */
  const startFailures = new Map<number, string>();
  /** A worker starts with what this primary applied (`inputs`), never with files it has not. */
  const fork = (inputs: SettingInputs): Worker => {
    const worker = cluster.fork({ [workerVariable]: '1' });
    worker.on('message', (message: { type?: string; reason?: unknown }) => {
      if (message?.type === clusterMessages.settingsWanted)
        worker.send({ type: clusterMessages.settings, inputs });
      else if (message?.type === clusterMessages.startFailed)
        startFailures.set(worker.id, String(message.reason));
    });
    return worker;
  };
  const readyWorker = (worker: Worker, timeout: number): Promise<void> =>
    readyOf(worker, timeout).then(() => void ready.add(worker.id));
  /** Replacements that could not start, one after another: each next one waits twice as long. */
  let failedStarts = 0;
  const crashes: number[] = [];
  /** How long the next replacement waits: none at first; longer after each that could not start, or while workers keep crashing. */
  const respawnDelay = (): number => {
    const crashing = crashes.length > count * 3 ? 1000 : 0;
    return Math.max(crashing, failedStarts ? Math.min(maxRespawnDelay, 250 * 2 ** (failedStarts - 1)) : 0);
  };
  /** A worker that replaces a dead one takes connections once it is ready; one that never is, is killed (and replaced). */
  const forkReplacement = (): void => {
    if (stopping) return;
    const worker = fork(settings.inputs);
    readyWorker(worker, workerReadyTimeout).then(
      () => {
        failedStarts = 0;
        balancer.serve(worker);
      },
      () => worker.process.kill('SIGKILL'),
    );
  };
  let givingUp = false;
  cluster.on('exit', (worker, code, signal) => {
    const served = ready.delete(worker.id);
    const reason = startFailures.get(worker.id);
    startFailures.delete(worker.id);
    if (stopping || leaving.delete(worker.id) || givingUp) return;
    crashes.push(Date.now());
    while (crashes.length && crashes[0]! < Date.now() - 10_000) crashes.shift();
    if (!served) failedStarts++;
    const why = reason ? `: it could not start: ${reason}` : served ? '' : ': it exited before it was ready';
    // While one worker serves, the cluster serves: replacements go on, more slowly, for as long as it takes.
    if (balancer.serving === 0 && failedStarts >= giveUpAfter) {
      givingUp = true;
      logger.error(
        { worker: worker.process.pid, code, signal, reason },
        `worker ${worker.process.pid} exited (${signal ?? code})${why}; no worker serves and ${failedStarts} replacements in a row could not start: giving up`,
      );
      void close().finally(() => process.exit(1));
      return;
    }
    const delay = respawnDelay();
    logger.error(
      { worker: worker.process.pid, code, signal, reason, delay },
      `worker ${worker.process.pid} exited (${signal ?? code})${why}; starting another${delay ? ` in ${delay / 1000} s` : ''}`,
    );
    setTimeout(forkReplacement, delay).unref();
  });
  const first = Array.from({ length: count }, () => fork(settings.inputs));
  try {
    await Promise.all(first.map((worker) => readyWorker(worker, workerReadyTimeout)));
  } catch (error) {
    // The start fails as a whole (its log says why): no replacement, no worker left behind.
    stopping = true;
    for (const worker of first) worker.process.kill('SIGKILL');
    throw error;
  }
  for (const worker of first) balancer.serve(worker);
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
  const replace = async (old: Worker, inputs: SettingInputs): Promise<void> => {
    if (stopping) throw new Error('the server is stopping');
    const fresh = fork(inputs);
    // On trial until ready: if it exits first, the reload fails; it is not a crash to restart (with the same config).
    leaving.add(fresh.id);
    try {
      await readyWorker(fresh, workerReadyTimeout);
      leaving.delete(fresh.id);
    } catch (error) {
      fresh.process.kill('SIGKILL');
      throw new Error(`a new worker did not start: ${(error as Error).message}`, { cause: error });
    }
    balancer.serve(fresh);
    // From here new connections go to the others; the sessions it holds still reach it while it drains.
    balancer.retire(old);
    leaving.add(old.id);
    await stopWorker(old, clusterMessages.retire, retireGrace + settings.shutdownTimeout.value + 5000);
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
    } catch (error) {
      return outcome(false, `reload failed, keeping the running workers: ${(error as Error).message}`);
    }
    const changes = settingChanges(settings, next);
    // New workers read the files as they are: they could not keep a restart-only setting's running value.
    const waiting = changes.filter((each) => !each.live);
    if (waiting.length) {
      return outcome(
        false,
        `reload refused, keeping the running workers: ${waiting.map((change) => `${change.setting} ${change.detail}`).join(', ')}; only a restart applies ${waiting.length > 1 ? 'these' : 'it'} with --workers: restart the server, or undo ${waiting.length > 1 ? 'those changes' : 'that change'} to reload the rest`,
      );
    }
    const portChanged =
      next.host.value !== settings.host.value ||
      (next.port.value !== port && next.port.value !== settings.port.value);
    if (portChanged) {
      const fresh = balancer.open();
      try {
        port = await listen(fresh, next.port.value, next.host.value, next.port.source);
      } catch (error) {
        return outcome(
          false,
          `reload failed, still listening on ${url} with the running workers: ${(error as Error).message}`,
        );
      }
      const retiring = server;
      server = fresh;
      url = listenerUrl(next.host.value, port);
      recordState();
      // Before any worker is replaced, so that every connection the old port took drains with its worker.
      await retirePort(retiring, logger);
    }
    const old = workers();
    let replaced = 0;
    try {
      for (const worker of old) {
        await replace(worker, next.inputs);
        replaced++;
      }
    } catch (error) {
      return outcome(
        false,
        `reload failed after replacing ${replaced} of ${old.length} workers, keeping the others serving: ${(error as Error).message}`,
      );
    }
    settings = reloadedSettings(settings, next);
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

  /** Stops every worker (each drains), then the port; the state file goes. */
  async function close(): Promise<void> {
    stopping = true;
    logger.info({}, 'shutting down the workers');
    const exits = workers().map((worker) =>
      stopWorker(worker, clusterMessages.shutdown, settings.shutdownTimeout.value + 2000),
    );
    server.close();
    await Promise.all(exits);
    removeServerState(dataDir, process.pid);
    booted.dataDirLock?.release();
    logger.info({}, 'stopped');
    await new Promise<void>((done) => logger.flush(() => done()));
  }

  return {
    get port() {
      return port;
    },
    logger,
    reload,
    close,
  };
}
