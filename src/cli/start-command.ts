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
      const wanted = isClusterWorker()
        ? 1
        : resolveSettings({ cwd: process.cwd(), flags, processEnv: process.env }).workers.value;
      const server =
        wanted > 1
          ? await startCluster(app, { flags, argv: process.argv })
          : await startServer(app, { flags });
      let stopping = false;
      const stop = (signal: NodeJS.Signals): void => {
        if (stopping) {
          server.logger.warn({ signal }, `${signal} again: exiting now`);
          process.exit(exitCodes.failure);
        }
        stopping = true;
        server.logger.info({ signal }, `${signal} received`);
        server.close().then(
          () => process.exit(exitCodes.ok),
          (error: unknown) => {
            server.logger.error({ err: error }, 'shutdown failed');
            process.exit(exitCodes.failure);
          },
        );
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    });
}
