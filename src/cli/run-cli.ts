import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { MigrationError, type App } from '../core/internal.js';
import { SettingError } from '../node/settings/setting-error.js';
import { ServiceError } from '../service/service-error.js';
import { CommandError } from './command-error.js';
import { exitCodes } from './exit-codes.js';
import { addBackupCommand, addRestoreCommand } from './backup-commands.js';
import { addExportCommand } from './export-command.js';
import { addImportCommand } from './import-command.js';
import { addServiceCommand } from './service-command.js';
import { addStartCommand } from './start-command.js';
import { addTestCommand } from './test-command.js';
import { addTokenCommand } from './token-command.js';

export interface CliOptions {
  /** Defaults to `process.argv`. */
  argv?: string[];
  /** Adds commands of the binary's own (Berth adds `new`). */
  extend?: (program: Command) => void;
}

export { CommandError } from './command-error.js';

/** The version in the package.json nearest the binary, when the app names none in code. */
function projectVersion(argv: string[]): string | undefined {
  let dir = argv[1] ? dirname(resolve(argv[1])) : undefined;
  while (dir && dir !== dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version;
    } catch {
      dir = dirname(dir);
    }
  }
  return undefined;
}

/**
 * Turns an app into its command-line tool: `start` (and the other system
 * commands) on the app's own binary.
 *
 * @example
 * #!/usr/bin/env node
 * import { createApp, runCli } from 'berth'
 * await runCli(createApp({ name: 'bookshop', modules: [authors] }))
 */
export async function runCli(app: App, options: CliOptions = {}): Promise<void> {
  const program = new Command(app.name)
    .description(`${app.name}: an HTTP back end built on Berth`)
    .version(
      app.options.version ?? projectVersion(options.argv ?? process.argv) ?? app.version,
      '-v, --version',
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  addStartCommand(program, app);
  addServiceCommand(program, app);
  addTokenCommand(program, app);
  addBackupCommand(program, app);
  addRestoreCommand(program, app);
  addImportCommand(program, app);
  addExportCommand(program, app);
  addTestCommand(program);
  options.extend?.(program);
  const override = (command: Command): void => {
    command.exitOverride();
    command.commands.forEach(override);
  };
  program.commands.forEach(override);

  try {
    await program.parseAsync(options.argv ?? process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
      return;
    }
    if (
      error instanceof SettingError ||
      error instanceof CommandError ||
      error instanceof ServiceError ||
      error instanceof MigrationError
    ) {
      process.stderr.write(`${app.name}: ${error.message}\n`);
    } else {
      process.stderr.write(`${app.name}: unexpected failure: ${(error as Error).stack ?? String(error)}\n`);
    }
    process.exitCode = exitCodes.failure;
  }
}
