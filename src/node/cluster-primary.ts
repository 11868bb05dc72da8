import cluster, { type Worker } from 'node:cluster';
import { createServer, type Server } from 'node:http';
import { setupPrimary as setupClusterAdapter } from '@socket.io/cluster-adapter';
import { setupMaster as setupSticky } from '@socket.io/sticky';
import type { App } from '../core/index.js';
import { boot } from './boot.js';
import type { NodeLogger } from './logger.js';
import { SettingError } from './setting-error.js';
import type { StartFlags } from './settings.js';

/** Messages between the primary and its workers. */
export const clusterMessages = { ready: 'berth:ready', shutdown: 'berth:shutdown' } as const;

/** Set in a worker's environment: it serves connections handed over by the primary. */
export const workerVariable = 'BERTH_CLUSTER_WORKER';

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

/**
 * `start --workers N`: this process owns the port and hands each connection
 * to one of N worker processes (sticky for socket.io long-polling sessions),
 * which serve the app. Migrations and the admin token are done here once,
 * before any worker starts. A worker that dies is replaced.
 */
export async function startCluster(
  app: App,
  options: { flags: StartFlags; argv: string[]; cwd?: string; env?: Record<string, string | undefined> },
): Promise<{ port: number; logger: NodeLogger; close(): Promise<void> }> {
  // Migrations, the admin token and the route table, once, before any worker starts.
  const booted = await boot(app, {
    flags: options.flags,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    showNewToken: process.stdout.isTTY === true,
    logRoutes: true,
  });
  await booted.storage.close();
  const { settings, logger } = booted;
  const count = settings.workers.value;
  logger.info({ workers: count }, `cluster: ${count} workers (from ${settings.workers.source})`);

  const server = createServer();
  setupSticky(server, { loadBalancingMethod: 'round-robin' });
  if (!settings.redisUrl.value) setupClusterAdapter();
  // Sticky hands over the first bytes of each connection as a Buffer: that needs advanced serialization.
  cluster.setupPrimary({ exec: options.argv[1]!, args: options.argv.slice(2), serialization: 'advanced' });

  let stopping = false;
  const crashes: number[] = [];
  const fork = (): Worker => cluster.fork({ [workerVariable]: '1' });
  const readyWorkers = new Promise<void>((done) => {
    let ready = 0;
    cluster.on('message', (_worker, message: { type?: string }) => {
      if (message?.type === clusterMessages.ready && ++ready === count) done();
    });
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
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
  process.on('SIGHUP', () =>
    logger.warn({}, 'reload (SIGHUP) is not supported with --workers yet: restart to apply new settings'),
  );
  for (let i = 0; i < count; i++) fork();
  await readyWorkers;
  const port = await listen(server, settings.port.value, settings.host.value, settings.port.source);
  logger.info(
    { port, portSource: settings.port.source, workers: count },
    `listening on http://localhost:${port} (port from ${settings.port.source}) with ${count} workers`,
  );

  return {
    port,
    logger,
    async close() {
      stopping = true;
      logger.info({}, 'shutting down the workers');
      const exits = Object.values(cluster.workers ?? {}).map(
        (worker) =>
          new Promise<void>((done) => {
            if (!worker) return done();
            worker.once('exit', () => done());
            worker.send({ type: clusterMessages.shutdown });
            setTimeout(() => worker.kill('SIGKILL'), settings.shutdownTimeout.value + 2000).unref();
          }),
      );
      server.close();
      await Promise.all(exits);
      logger.info({}, 'stopped');
      await new Promise<void>((done) => logger.flush(() => done()));
    },
  };
}
