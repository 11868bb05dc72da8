import { Option, type Command } from 'commander';
import type { App } from '../core/internal.js';
import type { ServiceFlags } from './service-actions.js';

/** What the subcommands do, loaded when one runs: `berth start` never needs it. */
const actions = () => import('./service-actions.js');

/**
 * `<binary> service load|reload|stop|unload|status`: the app as a background
 * system service (systemd on Linux, launchd on macOS).
 *
 * @example
 * addServiceCommand(program, app) // then: bookshop service load --user
 */
export function addServiceCommand(program: Command, app: App): void {
  const service = program.command('service').description('run the server as a background system service');
  const common = (command: Command) =>
    command
      .addOption(
        new Option('--user', "use the current user's service manager (the default when not root)").conflicts(
          'system',
        ),
      )
      .addOption(new Option('--system', 'use the system service manager (needs root; the default as root)'))
      .option('--name <name>', `the unit name (default: ${app.name})`);

  common(service.command('load'))
    .description('register the server as a service, enable it, start it and wait until it serves')
    .option('--log-file <file>', 'log to this file instead of the journal')
    .option('-c, --config <file>', 'config file (default: ./berth.config.json)')
    .option('--debug', 'run the service in debug mode (default: release mode)')
    .option('--run-as <user>', 'system service: the user it runs as (default: the owner of this directory)')
    .option('--print', 'print the unit (or plist) that load would write, and write nothing')
    .action(async (flags: ServiceFlags) => (await actions()).load(app, flags));

  common(service.command('reload'))
    .description('make the running service re-read .env and the config file, without dropping requests')
    .action(async (flags: ServiceFlags) => (await actions()).reload(app, flags));

  common(service.command('stop'))
    .description('stop the service (it stays registered)')
    .action(async (flags: ServiceFlags) => (await actions()).stop(app, flags));

  common(service.command('unload'))
    .description('stop, disable and remove the service')
    .action(async (flags: ServiceFlags) => (await actions()).unload(app, flags));

  common(service.command('status'))
    .description('show whether the service is loaded and running, its PID, port and since when')
    .option('--json', 'print JSON')
    .action(async (flags: ServiceFlags) => (await actions()).status(app, flags));
}
