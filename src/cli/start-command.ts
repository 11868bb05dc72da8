import type { Command } from 'commander';
import { MigrationError, type App } from '../core/internal.js';
import { SettingError } from '../node/settings/setting-error.js';
import { failWorkerStart, isClusterWorker, settingsFromPrimary } from '../node/cluster/cluster-worker.js';
import { resolveSettings, type Settings } from '../node/settings/settings.js';
import { startServer } from '../node/server/start.js';
import { recordStartFailure } from '../node/server/start-failure.js';
import { exitCodes } from './exit-codes.js';
import type { startCluster } from '../node/cluster/cluster-primary.js';

/** What a failure says: its message when it is one of Berth's own, its stack when unexpected. */
const reasonOf = (error: unknown): string =>
  error instanceof SettingError || error instanceof MigrationError
    ? error.message
    : ((error as Error).stack ?? String(error));

type Running = Awaited<ReturnType<typeof startServer>> | Awaited<ReturnType<typeof startCluster>>;

/** `<binary> start`: serves the app until SIGTERM or SIGINT, then shuts down gracefully; SIGHUP reloads. */
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
      let server: Running | undefined = undefined;
      const pending: NodeJS.Signals[] = [];
      let stopping = false;
      const worker = isClusterWorker();
      const settings: Settings | undefined = worker
        ? undefined
        : resolveSettings({ cwd: process.cwd(), flags, processEnv: process.env, app });
      const clustered = (settings?.workers.value ?? 1) > 1;
      // A worker starts with what its primary applied, whatever the files hold now.
      const inputs = worker ? await settingsFromPrimary() : undefined;

      const onSignal = (signal: NodeJS.Signals): void => {
        if (!server) {
          pending.push(signal);
          return;
        }
        const running = server;
        if (signal === 'SIGHUP') {
          if (stopping) return;
          // `service reload` (ExecReload) sends SIGHUP: re-read .env and the config, keep serving.
          running.logger.info({ signal }, 'SIGHUP received: reloading .env and the config');
          void running.reload();
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
      // Workers too: systemd sends SIGTERM to every process of the unit. A primary also logs SIGHUP itself.
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, onSignal);

      try {
        // The cluster's packages load only for a cluster.
        server = clustered
          ? await (
              await import('../node/cluster/cluster-primary.js')
            ).startCluster(app, { flags, argv: process.argv })
          : await startServer(app, { flags, ...(inputs ? { inputs } : {}) });
      } catch (error) {
        // `service load` reads this to say why the service did not come up.
        if (settings) recordStartFailure(settings.dataDir.value, (error as Error).message);
        // The primary logs why and starts another later; this one exits with the failure code.
        if (worker) await failWorkerStart(reasonOf(error), exitCodes.failure);
        throw error;
      }
      for (const signal of pending.splice(0)) onSignal(signal);
    });
}
