import type { Command } from 'commander';
import type { App } from '../core/index.js';
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
    .action(async (flags: { port?: string; host?: string; config?: string }) => {
      const server = await startServer(app, { flags });
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
