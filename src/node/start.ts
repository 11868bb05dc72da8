import { createApp, EventBus, type App, type AppInstance, type RuntimeInfo } from '../core/index.js';
import { createNodeRealtime } from '../realtime/node-realtime.js';
import type { Storage } from '../storage/repository.js';
import { announceToken, ensureAdminToken } from './admin-token-store.js';
import { createAppInstance } from './app-instance.js';
import { clusterAdapter, isClusterWorker, serveAsWorker } from './cluster-worker.js';
import { HttpListener, listenerUrl } from './http-listener.js';
import { createLogger, type NodeLogger } from './logger.js';
import { openStorage } from './open-storage.js';
import { logRoutes } from './route-log.js';
import { createReload, type Serving } from './reload.js';
import { removeServerState, writeServerState, type ReloadOutcome } from './server-state.js';
import { serviceReport } from './service-report.js';
import { realtimeSettingsOf } from './setting-table.js';
import { resolveSettings, type Settings, type StartFlags } from './settings.js';
import { clearStartFailure } from './start-failure.js';

export interface StartOptions {
  flags?: StartFlags;
  /** The working directory: where `.env`, `berth.config.json` and `./data` are looked for. */
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Where logs go; stdout unless set. */
  logDestination?: NodeJS.WritableStream;
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
  /** Graceful shutdown: finish requests in flight (bounded), close storage. */
  close(): Promise<void>;
}

/** The app with what the settings change in its definition (the realtime path). */
function withSettings(app: App, settings: Settings): App {
  const path = settings.realtimePath.value;
  if (path === undefined || path === app.realtimePath || app.realtimePath === undefined) return app;
  return createApp({ ...app.options, realtime: { path } });
}

/**
 * Starts an app on Node: resolves settings, opens and migrates storage, makes
 * sure an admin credential exists, logs every route and listens.
 *
 * @example
 * const server = await startServer(app, { flags: { port: '0' } })
 * await fetch(`${server.url}/books`)
 * await server.close()
 */
export async function startServer(configured: App, options: StartOptions = {}): Promise<RunningServer> {
  const resolve = (): Settings =>
    resolveSettings({
      cwd: options.cwd ?? process.cwd(),
      flags: options.flags ?? {},
      processEnv: options.env ?? process.env,
      ...(configured.options.mode ? { modeInCode: configured.options.mode } : {}),
    });
  const settings = resolve();
  const app = withSettings(configured, settings);
  const worker = isClusterWorker();
  const mode = settings.mode.value;
  const { logger, logRequest } = createLogger(mode, app.name, options.logDestination);
  if (mode === 'debug') {
    logger.info(
      { mode, source: settings.mode.source },
      'debug mode is on: readable logs and stack traces; set BERTH_MODE=release (or NODE_ENV=production) for production',
    );
  } else {
    logger.info({ mode, source: settings.mode.source }, 'release mode');
  }

  const dataDir = settings.dataDir.value;
  const storage = openStorage(settings, logger);
  try {
    logger.info(
      { driver: storage.driver, location: storage.location },
      `storage: ${storage.driver} at ${storage.location}`,
    );
    await storage.migrate([...app.collections], (step) =>
      logger.info({ migration: step }, `migrating ${step.collection}: ${step.action} ${step.detail}`),
    );
    const token = await ensureAdminToken(dataDir, settings.adminToken.value, {
      create: !worker && (options.showNewToken ?? process.stdout.isTTY === true),
    });
    announceToken(logger, token, app.name, settings.cwd);

    const runtime: RuntimeInfo = {
      runtime: 'node',
      mode,
      modeSource: settings.mode.source,
      startedAt: Date.now(),
      details: {
        node: process.version,
        pid: process.pid,
        dataDir,
        storage: `${storage.driver} at ${storage.location}`,
      },
    };
    const events = new EventBus();
    const realtime = createNodeRealtime(app, {
      events,
      logger,
      mode,
      settings: realtimeSettingsOf(settings),
      adminTokenHash: () => serving.token.hash,
      ...(settings.redisUrl.value
        ? { redisUrl: settings.redisUrl.value }
        : worker
          ? { adapter: clusterAdapter() }
          : {}),
    });
    const instanceFor = (current: Settings, adminTokenHash: string | undefined): AppInstance =>
      createAppInstance(
        app,
        {
          runtime,
          ...(realtime
            ? {
                realtime: realtime.bridge,
                adminReports: {
                  service: serviceReport(runtime),
                  realtime: () => ({
                    ...realtime.monitor.report(),
                    redis: realtime.redis?.() ?? 'not configured',
                  }),
                },
              }
            : { adminReports: { service: serviceReport(runtime) } }),
          storage,
          logger,
          events,
          mode,
          bodyLimit: current.bodyLimit.value,
          batchLimits: {
            maxRequests: current.batchMaxRequests.value,
            maxResponseBytes: current.batchMaxResponseBytes.value,
          },
          ...(adminTokenHash ? { adminTokenHash } : {}),
          ...(logRequest ? { logRequest } : {}),
        },
        { cwd: current.cwd, dataDir },
      );
    const instance = instanceFor(settings, token.hash);
    if (!worker) logRoutes(logger, app.routes);
    const listener = new HttpListener(instance);
    realtime?.attach(listener.server);
    const draining = new Set<Promise<unknown>>();
    // A reload replaces what is in here; everything below reads it from here.
    const serving: Serving = { settings, token, instance, listener, port: 0, url: '' };

    const shutdown = async (): Promise<void> => {
      const { listener, settings } = serving;
      logger.info(
        { inFlight: listener.inFlight },
        `shutting down: finishing ${listener.inFlight} request(s) in flight`,
      );
      await realtime?.close();
      const cut = await listener.close(settings.shutdownTimeout.value);
      await Promise.all(draining);
      if (cut > 0) {
        logger.warn(
          { cut },
          `${cut} request(s) did not finish within ${settings.shutdownTimeout.value} ms and were cut off`,
        );
      }
      await storage.close();
      removeServerState(dataDir, process.pid);
      logger.info({}, 'stopped');
      await new Promise<void>((done) => logger.flush(() => done()));
    };
    // Idempotent: a worker under systemd gets both SIGTERM and its primary's shutdown message.
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => (closing ??= shutdown());
    if (worker) {
      serveAsWorker(
        listener.server,
        realtime && app.realtimePath ? { instance: realtime, path: app.realtimePath } : undefined,
        close,
      );
      logger.info({ pid: process.pid }, `worker ${process.pid} ready`);
      return {
        port: 0,
        url: '',
        settings,
        logger,
        instance,
        storage,
        reload: async () => undefined,
        close,
      };
    }

    const address = await listener.listen(settings.port.value, settings.host.value, settings.port.source);
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
      runtime.port = port;
      runtime.url = url;
      runtime.portSource = source;
      recordState();
      logger.info({ port, portSource: source, url }, `${prefix}listening on ${url} (port from ${source})`);
    };
    announce(settings.port.source, '');
    clearStartFailure(dataDir);

    const reload = createReload({
      serving,
      resolve,
      instanceFor,
      attach: (server) => realtime?.attach(server),
      logger,
      dataDir,
      draining,
      announce,
      record: (outcome) => {
        lastReload = outcome;
        recordState();
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
  } catch (error) {
    await storage.close();
    logger.flush();
    throw error;
  }
}
