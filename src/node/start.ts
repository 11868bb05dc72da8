import { createApp, EventBus, type App, type AppInstance, type RuntimeInfo } from '../core/index.js';
import { createNodeRealtime } from '../realtime/node-realtime.js';
import type { Storage } from '../storage/repository.js';
import { ensureAdminToken } from './admin-token-store.js';
import { createAppInstance } from './app-instance.js';
import { clusterAdapter, isClusterWorker, serveAsWorker } from './cluster-worker.js';
import { HttpListener } from './http-listener.js';
import { createLogger, type NodeLogger } from './logger.js';
import { openStorage } from './open-storage.js';
import { logRoutes } from './route-log.js';
import { removeServerState, writeServerState } from './server-state.js';
import { serviceReport } from './service-report.js';
import { resolveSettings, type Settings, type StartFlags } from './settings.js';

export interface StartOptions {
  flags?: StartFlags;
  /** The working directory: where `.env`, `berth.config.json` and `./data` are looked for. */
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Where logs go; stdout unless set. */
  logDestination?: NodeJS.WritableStream;
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
   */
  reload(): Promise<void>;
  /** Graceful shutdown: finish requests in flight (bounded), close storage. */
  close(): Promise<void>;
}

/** The app with what the settings change in its definition (the realtime path). */
function withSettings(app: App, settings: Settings): App {
  const path = settings.realtimePath.value;
  if (path === undefined || path === app.realtimePath || app.realtimePath === undefined) return app;
  return createApp({ ...app.options, realtime: { path } });
}

/** How long the old port keeps answering after a reload moved the server to a new one. */
const retireGrace = 2000;

const urlOf = (host: string | undefined, port: number): string =>
  `http://${host && !['0.0.0.0', '::'].includes(host) ? host : 'localhost'}:${port}`;

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
  let settings = resolve();
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
    const token = await ensureAdminToken(dataDir, settings.env.get('BERTH_ADMIN_TOKEN')?.value);
    if (token.created) {
      logger.warn(
        { adminToken: token.created, hashFile: token.source },
        `admin token created, shown only this once, keep it safe: ${token.created} (only its hash is kept in ${token.source})`,
      );
    }

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
      settings: settings.realtime,
      ...(settings.redisUrl.value
        ? { redisUrl: settings.redisUrl.value }
        : worker
          ? { adapter: clusterAdapter() }
          : {}),
    });
    const instanceFor = (current: Settings): AppInstance =>
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
          adminTokenHash: token.hash,
          ...(logRequest ? { logRequest } : {}),
        },
        { cwd: current.cwd },
      );
    let instance = instanceFor(settings);
    if (!worker) logRoutes(logger, app.routes);
    let listener = new HttpListener(instance);
    realtime?.attach(listener.server);
    const draining = new Set<Promise<unknown>>();

    const shutdown = async (): Promise<void> => {
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
    if (worker) {
      serveAsWorker(
        listener.server,
        realtime && app.realtimePath ? { instance: realtime, path: app.realtimePath } : undefined,
        shutdown,
      );
      logger.info({ pid: process.pid }, `worker ${process.pid} ready`);
      return {
        port: 0,
        url: '',
        settings,
        logger,
        instance,
        storage,
        reload: async () => {},
        close: shutdown,
      };
    }

    const address = await listener.listen(settings.port.value, settings.host.value, settings.port.source);
    let port = address.port;
    let url = urlOf(settings.host.value, port);
    /** Records where the server listens (overview, `service status`) and says so in the log. */
    const announce = (source: string, prefix: string): void => {
      runtime.port = port;
      runtime.portSource = source;
      writeServerState(dataDir, {
        pid: process.pid,
        port,
        url,
        startedAt: new Date(runtime.startedAt).toISOString(),
      });
      logger.info({ port, portSource: source, url }, `${prefix}listening on ${url} (port from ${source})`);
    };
    announce(settings.port.source, '');

    const reload = async (): Promise<void> => {
      let next: Settings;
      try {
        next = resolve();
      } catch (error) {
        logger.error(
          { err: error },
          `reload failed, keeping the running settings: ${(error as Error).message}`,
        );
        return;
      }
      for (const [name, before, after] of [
        ['dataDir', settings.dataDir.value, next.dataDir.value],
        ['mode', settings.mode.value, next.mode.value],
        ['DATABASE_URL', settings.databaseUrl.value, next.databaseUrl.value],
        ['REDIS_URL', settings.redisUrl.value, next.redisUrl.value],
      ] as const) {
        if (before !== after)
          logger.warn({ setting: name }, `${name} changed: restart the server to apply it`);
      }
      const nextInstance = instanceFor(next);
      if (next.port.value === port && next.host.value === settings.host.value) {
        listener.use(nextInstance);
      } else {
        const nextListener = new HttpListener(nextInstance);
        realtime?.attach(nextListener.server);
        let nextAddress;
        try {
          nextAddress = await nextListener.listen(next.port.value, next.host.value, next.port.source);
        } catch (error) {
          logger.error(
            { err: error },
            `reload failed, still listening on ${url}: ${(error as Error).message}`,
          );
          return;
        }
        const old = listener;
        listener = nextListener;
        port = nextAddress.port;
        url = urlOf(next.host.value, port);
        const drain = old.retire(retireGrace, next.shutdownTimeout.value);
        draining.add(drain);
        void drain.finally(() => draining.delete(drain));
      }
      instance = nextInstance;
      settings = next;
      announce(next.port.source, 'reloaded: ');
    };

    let closing: Promise<void> | undefined;
    return {
      get port() {
        return port;
      },
      get url() {
        return url;
      },
      get settings() {
        return settings;
      },
      logger,
      get instance() {
        return instance;
      },
      storage,
      reload,
      close() {
        closing ??= shutdown();
        return closing;
      },
    };
  } catch (error) {
    await storage.close();
    logger.flush();
    throw error;
  }
}
