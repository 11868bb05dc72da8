import type { Command } from 'commander';
import type { App } from '../core/internal.js';
import { replaceAdminToken } from '../node/security/admin-token-store.js';
import { resolveSettings } from '../node/settings/settings.js';
import { CommandError } from './command-error.js';

/**
 * `<binary> token`: makes a new admin token, prints it once on stdout (so
 * `TOKEN=$(berth token)` works) and keeps only its hash, replacing the one
 * before. A running server takes it at its next reload or restart.
 */
export function addTokenCommand(program: Command, app: App): void {
  program
    .command('token')
    .description('make a new admin token: printed once, only its hash is kept; replaces the previous one')
    .option('-c, --config <file>', 'config file (default: ./berth.config.json)')
    .action(async (flags: { config?: string }) => {
      const settings = resolveSettings({
        cwd: process.cwd(),
        flags: flags.config ? { config: flags.config } : {},
        processEnv: process.env,
        app,
      });
      if (settings.adminToken.value) {
        throw new CommandError(
          `BERTH_ADMIN_TOKEN is set (${settings.adminToken.source}) and wins over a stored token, so nothing was written: change it there, or remove it to use tokens made by \`${app.name} token\``,
        );
      }
      const made = await replaceAdminToken(settings.dataDir.value);
      process.stdout.write(`${made.token}\n`);
      process.stderr.write(
        `new admin token for ${app.name}, shown only this once (only its hash is kept in ${made.file}); a running server takes it after \`${app.name} service reload\` (SIGHUP) or a restart\n`,
      );
    });
}
