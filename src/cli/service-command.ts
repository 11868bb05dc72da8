import { mkdirSync, realpathSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { App } from '../core/index.js';
import { readServerState } from '../node/server-state.js';
import { resolveSettings } from '../node/settings.js';
import { pickServiceManager } from '../service/pick-manager.js';
import type { ServiceSpec } from '../service/service-spec.js';
import { CommandError } from './command-error.js';

interface ServiceFlags {
  user?: boolean;
  name?: string;
  logFile?: string;
  config?: string;
}

const scopeOf = (flags: ServiceFlags): ServiceSpec['scope'] =>
  flags.user || (process.getuid?.() ?? 0) !== 0 ? 'user' : 'system';

function nameOf(app: App, flags: ServiceFlags): string {
  const name = flags.name ?? app.name;
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.@-]{0,100}$/.test(name)) {
    throw new CommandError(`"${name}" cannot name a service: use letters, digits, ".", "_", "@" or "-"`);
  }
  return name;
}

/** Fails before anything is written when the port the service would take is held by someone else. */
async function checkPortFree(port: number, host: string | undefined, source: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((done, fail) => {
    probe.once('error', (error: NodeJS.ErrnoException) =>
      fail(
        error.code === 'EADDRINUSE'
          ? new CommandError(
              `port ${port} (from ${source}) is already in use, so the service could not serve: stop the program using it or choose another port`,
            )
          : error,
      ),
    );
    probe.listen(port, host, () => probe.close(() => done()));
  });
}

const say = (text: string): void => void process.stdout.write(`${text}\n`);

/**
 * `<binary> service load|reload|stop|unload|status`: the app as a background
 * system service (systemd on Linux, launchd on macOS).
 */
export function addServiceCommand(program: Command, app: App): void {
  const service = program.command('service').description('run the server as a background system service');
  const common = (command: Command) =>
    command
      .option('--user', "use the current user's service manager (the default when not root)")
      .option('--name <name>', `the unit name (default: ${app.name})`);

  common(service.command('load'))
    .description('register the server as a service, enable it and start it')
    .option('--log-file <file>', 'log to this file instead of the journal')
    .option('-c, --config <file>', 'config file (default: ./berth.config.json)')
    .action(async (flags: ServiceFlags) => {
      const scope = scopeOf(flags);
      const name = nameOf(app, flags);
      const settings = resolveSettings({
        cwd: process.cwd(),
        flags: { ...(flags.config ? { config: flags.config } : {}) },
        processEnv: process.env,
      });
      const manager = await pickServiceManager(scope);
      const running = readServerState(settings.dataDir.value);
      const ours = running && (await manager.status(name, scope).catch(() => undefined))?.pid === running.pid;
      if (!ours) await checkPortFree(settings.port.value, settings.host.value, settings.port.source);
      const spec: ServiceSpec = {
        name,
        description: `${name}: HTTP server built on Berth`,
        scope,
        node: process.execPath,
        script: realpathSync(process.argv[1]!),
        workingDirectory: process.cwd(),
        dataDir: settings.dataDir.value,
        ...(flags.logFile ? { logFile: resolve(flags.logFile) } : {}),
      };
      // The hardened unit may write only there, and systemd refuses a ReadWritePaths that does not exist.
      mkdirSync(spec.dataDir, { recursive: true });
      const { file, changed } = await manager.load(spec);
      const state = readServerState(settings.dataDir.value);
      say(
        `${changed ? 'loaded' : 'already loaded, unchanged:'} ${name} as a ${scope} ${manager.name} service (${file})${state ? `; serving on ${state.url}` : ''}`,
      );
    });

  common(service.command('reload'))
    .description('make the running service re-read .env and the config file')
    .action(async (flags: ServiceFlags) => {
      const scope = scopeOf(flags);
      const manager = await pickServiceManager(scope);
      await manager.reload(nameOf(app, flags), scope);
      say(
        `reload sent to ${nameOf(app, flags)}: it re-reads .env and the config file without dropping requests`,
      );
    });

  common(service.command('stop'))
    .description('stop the service (it stays registered)')
    .action(async (flags: ServiceFlags) => {
      const scope = scopeOf(flags);
      const manager = await pickServiceManager(scope);
      await manager.stop(nameOf(app, flags), scope);
      say(`stopped ${nameOf(app, flags)}`);
    });

  common(service.command('unload'))
    .description('stop, disable and remove the service')
    .action(async (flags: ServiceFlags) => {
      const scope = scopeOf(flags);
      const manager = await pickServiceManager(scope);
      const { file } = await manager.unload(nameOf(app, flags), scope);
      say(`unloaded ${nameOf(app, flags)}: removed ${file}`);
    });

  common(service.command('status'))
    .description('show whether the service is loaded and running, its PID, port and since when')
    .option('--json', 'print JSON')
    .action(async (flags: ServiceFlags & { json?: boolean }) => {
      const scope = scopeOf(flags);
      const manager = await pickServiceManager(scope);
      const status = await manager.status(nameOf(app, flags), scope);
      if (flags.json) return say(JSON.stringify(status));
      say(
        [
          `${status.unit} (${status.manager}, ${status.scope})`,
          `  loaded: ${status.loaded ? `yes (${status.file})` : 'no'}`,
          `  active: ${status.active}`,
          `  pid:    ${status.pid ?? '-'}`,
          `  port:   ${status.port ?? '-'}`,
          `  since:  ${status.since ?? '-'}`,
        ].join('\n'),
      );
    });
}
