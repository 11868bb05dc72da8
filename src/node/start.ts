import { createApp, EventBus, type App, type AppInstance, type RuntimeInfo } from '../core/index.js';
import type { Storage } from '../storage/repository.js';
import { ensureAdminToken } from './admin-token-store.js';
import { HttpListener } from './http-listener.js';
import { createNodeRealtime } from '../realtime/node-realtime.js';
import { createAppInstance } from './app-instance.js';
import { clusterAdapter, isClusterWorker, serveAsWorker } from './cluster-worker.js';
import { openStorage } from './open-storage.js';
import { createLogger, type NodeLogger } from './logger.js';
import { logRoutes } from './route-log.js';
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
  const settings = resolveSettings({
    cwd: options.cwd ?? process.cwd(),
    flags: options.flags ?? {},
    processEnv: options.env ?? process.env,
    ...(configured.options.mode ? { modeInCode: configured.options.mode } : {}),
  });
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
    const instance = createAppInstance(app, {
      runtime,
      ...(realtime
        ? {
            realtime: realtime.bridge,
            adminReports: {
              realtime: () => ({
                ...realtime.monitor.report(),
                redis: realtime.redis?.() ?? 'not configured',
              }),
            },
          }
        : {}),
      storage,
      logger,
      events,
      mode,
      bodyLimit: settings.bodyLimit.value,
      adminTokenHash: token.hash,
      ...(logRequest ? { logRequest } : {}),
    });
    if (!worker) logRoutes(logger, app.routes);
    const listener = new HttpListener(instance);
    realtime?.attach(listener.server);
    const shutdown = async (): Promise<void> => {
      logger.info(
        { inFlight: listener.inFlight },
        `shutting down: finishing ${listener.inFlight} request(s) in flight`,
      );
      await realtime?.close();
      const cut = await listener.close(settings.shutdownTimeout.value);
      if (cut > 0) {
        logger.warn(
          { cut },
          `${cut} request(s) did not finish within ${settings.shutdownTimeout.value} ms and were cut off`,
        );
      }
      await storage.close();
      logger.info({}, 'stopped');
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    };
    if (worker) {
      serveAsWorker(
        listener.server,
        realtime && app.realtimePath ? { instance: realtime, path: app.realtimePath } : undefined,
        shutdown,
      );
      logger.info({ pid: process.pid }, `worker ${process.pid} ready`);
      return { port: 0, url: '', settings, logger, instance, storage, close: shutdown };
    }
    const address = await listener.listen(settings.port.value, settings.host.value, settings.port.source);
    runtime.port = address.port;
    runtime.portSource = settings.port.source;
    const url = `http://${settings.host.value && !['0.0.0.0', '::'].includes(settings.host.value) ? settings.host.value : 'localhost'}:${address.port}`;
    logger.info(
      { port: address.port, portSource: settings.port.source, url },
      `listening on ${url} (port from ${settings.port.source})`,
    );

    let closing: Promise<void> | undefined;
    return {
      port: address.port,
      url,
      settings,
      logger,
      instance,
      storage,
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
