import { keepChangeLog, stopApp, type App, type AppInstance, type Storage } from '../../core/internal.js';
import { createNodeRealtime } from '../../realtime/node-realtime.js';
import { servingInstances } from './instances.js';
import { boot } from './boot.js';
import { clientAddressOf } from './client-address.js';
import { clusterAdapter, isClusterWorker, serveAsWorker } from '../cluster/cluster-worker.js';
import { HttpListener, listenerUrl } from './http-listener.js';
import type { NodeLogger } from '../runtime/logger.js';
import { createReload, retireGrace, type Serving } from './reload.js';
import { removeServerState, writeServerState, type ReloadOutcome } from './server-state.js';
import { realtimeSettingsOf } from '../settings/setting-table.js';
import type { SettingInputs, Settings, StartFlags } from '../settings/settings.js';
import { clearStartFailure } from './start-failure.js';

export interface StartOptions {
  flags?: StartFlags;
  /** The working directory: where `.env`, `berth.config.json` and `./data` are looked for. */
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Where logs go; stdout unless set. */
  logDestination?: NodeJS.WritableStream;
  /** What `.env` and the config file held, instead of reading them (a `--workers` worker: its primary's). */
  inputs?: SettingInputs;
  /**
   * Whether a new admin token may be shown in the log: true when stdout is a
   * terminal. Otherwise (a service, a pipe, a log file) none is made at start:
   * the `token` command makes one and prints it.
   */
  showNewToken?: boolean;
}

/** A server that is listening. */
export interface RunningServer {
  readonly port: number;
  readonly url: string;
  readonly settings: Settings;
  readonly logger: NodeLogger;
  readonly instance: AppInstance;
  readonly storage: Storage;
  /**
   * Re-reads `.env` and the config file and applies them without dropping a
   * request: a new port gets a new listener before the old one drains.
   * Reloads run one after the other; a failed one keeps the running settings.
   */
  reload(): Promise<ReloadOutcome | undefined>;
  /** Graceful shutdown: finish requests in flight (bounded), run onClose hooks, close storage. */
  close(): Promise<void>;
}

/**
 * Starts an app on Node: the boot sequence (settings, storage and its
 * migrations, the admin credential, the route table), the modules' onStart
 * hooks, then the listener (or, in a `--workers` worker, the connections its
 * primary hands over).
 *
 * @example
 * const server = await startServer(app, { flags: { port: '0' } })
 * await fetch(`${server.url}/books`)
 * await server.close()
 */
export async function startServer(configured: App, options: StartOptions = {}): Promise<RunningServer> {
  const worker = isClusterWorker();
  const booted = await boot(configured, {
    ...options,
    showNewToken: !worker && (options.showNewToken ?? process.stdout.isTTY === true),
    logTables: !worker,
    hooks: true,
    // A worker serves under its primary's lock; the primary warned about its files.
    primary: !worker,
  });
  const { app, settings, logger, storage, events, realtimePath } = booted;
  const dataDir = settings.dataDir.value;
  const realtime = realtimePath
    ? await createNodeRealtime(app, {
        path: realtimePath,
        events,
        storage,
        logger,
        mode: settings.mode.value,
        settings: realtimeSettingsOf(settings),
        authenticate: (credential) => serving.instance.authenticate(credential),
        // The running settings' trustProxy, at each connection: a reload that changes it applies to the next.
        clientAddress: (request) => clientAddressOf(request, serving.settings.trustProxy.value),
        ...(settings.redisUrl.value
          ? { redis: { url: settings.redisUrl.value, key: booted.redisKey! } }
          : worker
            ? { adapter: clusterAdapter() }
            : {}),
      })
    : undefined;
  const { runtime, instanceFor, lifecycle, close: closeInstances } = servingInstances(booted, realtime);
  const listener = new HttpListener(instanceFor(settings, booted.token.hash), logger);
  realtime?.attach(listener.server);
  const draining = new Set<Promise<unknown>>();
  // A reload replaces what is in here; everything below reads it from here.
  const serving: Serving = {
    settings,
    token: booted.token,
    instance: listener.instance,
    listener,
    port: 0,
    url: '',
  };
  // The running settings' retention, at each trim: a reload applies at the next.
  const keeping = storage.changes
    ? keepChangeLog(
        storage.changes,
        () => ({
          retentionMs: serving.settings.changeLogRetention.value,
          maxChanges: serving.settings.changeLogMaxChanges.value,
        }),
        logger,
        // Where this process's subscribers stand: the size cut keeps what they have not read.
        { held: (withinMs) => realtime?.held(withinMs) },
      )
    : undefined;

  const shutdown = async (): Promise<void> => {
    const { listener, settings } = serving;
    // From here /readyz answers 503, so a load balancer stops sending work.
    lifecycle.draining = true;
    logger.info(
      { inFlight: listener.inFlight },
      `shutting down: finishing ${listener.inFlight} request(s) in flight`,
    );
    await realtime?.close();
    // Its subscribers have left: where they stood is kept for the retention, so they may resume elsewhere.
    await keeping?.holdNow();
    const cut = await listener.close(settings.shutdownTimeout.value);
    await Promise.all(draining);
    if (cut > 0) {
      logger.warn(
        { cut },
        `${cut} request(s) did not finish within ${settings.shutdownTimeout.value} ms and were cut off`,
      );
    }
    await closeInstances();
    await keeping?.stop();
    // The modules' onClose, then storage closed.
    await stopApp(booted.started);
    removeServerState(dataDir, process.pid);
    booted.dataDirLock?.release();
    logger.info({}, 'stopped');
    await new Promise<void>((done) => logger.flush(() => done()));
  };
  // Idempotent: a worker under systemd gets both SIGTERM and its primary's shutdown message.
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= shutdown());
  if (worker) {
    serveAsWorker(
      listener.server,
      realtime && realtimePath ? { instance: realtime, path: realtimePath } : undefined,
      close,
      // Its replacement serves already: answer what comes on open connections for a moment, closing each, then stop.
      async () => {
        lifecycle.draining = true;
        logger.info({ pid: process.pid }, `worker ${process.pid} retiring: its replacement serves`);
        await listener.retire(retireGrace, settings.shutdownTimeout.value);
        await close();
      },
    );
    logger.info({ pid: process.pid }, `worker ${process.pid} ready`);
    return {
      port: 0,
      url: '',
      settings,
      logger,
      instance: serving.instance,
      storage,
      reload: async () => undefined,
      close,
    };
  }

  let address: Awaited<ReturnType<HttpListener['listen']>>;
  try {
    address = await listener.listen(settings.port.value, settings.host.value, settings.port.source);
  } catch (error) {
    booted.dataDirLock?.release();
    throw error;
  }
  serving.port = address.port;
  serving.url = listenerUrl(settings.host.value, address.port);
  let lastReload: ReloadOutcome | undefined;
  /** Records where the server listens and how the last reload went (for `service status|reload`). */
  const recordState = (): void =>
    writeServerState(dataDir, {
      pid: process.pid,
      port: serving.port,
      url: serving.url,
      startedAt: new Date(runtime.startedAt).toISOString(),
      ...(lastReload ? { reload: lastReload } : {}),
    });
  /** Says where the server listens, in the log and in the state file. */
  const announce = (source: string, prefix: string): void => {
    const { port, url } = serving;
    Object.assign(runtime, { port, url, portSource: source });
    recordState();
    logger.info({ port, portSource: source, url }, `${prefix}listening on ${url} (port from ${source})`);
  };
  announce(settings.port.source, '');
  clearStartFailure(dataDir);

  const reload = createReload({
    serving,
    // A module's setting that does not parse fails the reload, as Berth's own do.
    resolve: () => booted.resolve(),
    instanceFor,
    attach: (server) => realtime?.attach(server),
    logger,
    dataDir,
    draining,
    announce,
    record: (outcome) => {
      lastReload = outcome;
      recordState();
      // The admin token or an authenticator's settings may have changed: subscribers are checked again.
      if (outcome.ok) realtime?.recheckCallers();
    },
  });

  return {
    get port() {
      return serving.port;
    },
    get url() {
      return serving.url;
    },
    get settings() {
      return serving.settings;
    },
    logger,
    get instance() {
      return serving.instance;
    },
    storage,
    reload,
    close,
  };
}
