import type { Command } from 'commander';
import type { App } from '../core/index.js';
import { startCluster } from '../node/cluster-primary.js';
import { isClusterWorker } from '../node/cluster-worker.js';
import { resolveSettings } from '../node/settings.js';
import { startServer } from '../node/start.js';
import { exitCodes } from './exit-codes.js';

/** `<binary> start`: serves the app until SIGTERM or SIGINT, then shuts down gracefully. */
export function addStartCommand(program: Command, app: App): void {
  program
    .command('start')
    .description('start the HTTP server with all registered routes')
    .option('-p, --port <port>', 'port to listen on (over PORT, berth.config.json and 4500)')
    .option('--host <host>', 'address to listen on (default: all interfaces)')
    .option('-c, --config <file>', 'config file (default: ./berth.config.json)')
    .option(
      '-w, --workers <count>',
      'processes serving the port: a number, or auto for one per core (default 1)',
    )
    .action(async (flags: { port?: string; host?: string; config?: string; workers?: string }) => {
      // Signals that arrive while starting wait for the server, instead of killing it half-started.
      let server:
        Awaited<ReturnType<typeof startServer>> | Awaited<ReturnType<typeof startCluster>> | undefined =
        undefined;
      const pending: NodeJS.Signals[] = [];
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals): void => {
        if (!server) {
          pending.push(signal);
          return;
        }
        const running = server;
        if (signal === 'SIGHUP') {
          if ('reload' in running) {
            // `service reload` (ExecReload) sends SIGHUP: re-read .env and the config, keep serving.
            running.logger.info({ signal }, 'SIGHUP received: reloading .env and the config');
            void running.reload();
          }
          return;
        }
        if (stopping) {
          running.logger.warn({ signal }, `${signal} again: exiting now`);
          process.exit(exitCodes.failure);
        }
        stopping = true;
        running.logger.info({ signal }, `${signal} received`);
        running.close().then(
          () => process.exit(exitCodes.ok),
          (error: unknown) => {
            running.logger.error({ err: error }, 'shutdown failed');
            process.exit(exitCodes.failure);
          },
        );
      };
      const worker = isClusterWorker();
      const wanted = worker
        ? 1
        : resolveSettings({ cwd: process.cwd(), flags, processEnv: process.env }).workers.value;
      for (const signal of ['SIGTERM', 'SIGINT', ...(wanted > 1 ? [] : ['SIGHUP'])] as NodeJS.Signals[]) {
        process.on(signal, onSignal);
      }
      server =
        wanted > 1
          ? await startCluster(app, { flags, argv: process.argv })
          : await startServer(app, { flags });
      for (const signal of pending.splice(0)) onSignal(signal);
    });
}
