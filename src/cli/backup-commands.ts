import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { App } from '../core/internal.js';
import { writeWhole } from '../node/data/backup-files.js';
import { backupsDirOf, newBackupName, progressLines } from '../node/data/backups.js';
import {
  dataDirHolder,
  dataDirLockFile,
  tryLockDataDir,
  type DataDirLock,
} from '../node/data/data-dir-lock.js';
import { resolveSettings, type Settings } from '../node/settings/settings.js';
import { chosenStorage } from '../node/data/storage-drivers/registry.js';
import { CommandError } from './command-error.js';

/** The settings as `start` resolves them (flags, environment, `.env`, config file). */
const settingsOf = (app: App, config: string | undefined): Settings =>
  resolveSettings({ cwd: process.cwd(), flags: config ? { config } : {}, processEnv: process.env, app });

/** Progress lines on stderr (every 10 % of a large database), so stdout stays the one result line. */
const progressOnStderr = () => progressLines((line) => process.stderr.write(`${line}\n`));

/** A failure of a driver's backup or restore, said in one line (as the driver says it). */
const oneLine = (error: unknown): CommandError =>
  error instanceof CommandError ? error : new CommandError((error as Error).message, { cause: error });

/** A target that is free: a backup never overwrites a file. */
function freeTarget(file: string): string {
  if (existsSync(file)) {
    throw new CommandError(
      `${file} already exists, so nothing was written: choose another name or move it away`,
    );
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  return file;
}

/**
 * `<binary> backup [FILE]`: a consistent copy of the database, made while a
 * server may be writing, by the driver `DATABASE_URL` picks: SQLite's
 * online backup API on a connection of its own, or `pg_dump` with
 * PostgreSQL. Prints where it went.
 */
export function addBackupCommand(program: Command, app: App): void {
  program
    .command('backup [file]')
    .description(
      'write a consistent copy of the database (a server may keep serving) to FILE or data/backups/',
    )
    .option('-c, --config <file>', 'config file (default: ./berth.config.json)')
    .action(async (file: string | undefined, flags: { config?: string }) => {
      const settings = settingsOf(app, flags.config);
      const { url, driver } = chosenStorage(settings);
      const missing = driver.missing?.(url);
      if (missing) {
        throw new CommandError(
          `there is no database at ${missing} yet: \`${app.name} start\` creates it (or run this where the project’s data directory is)`,
        );
      }
      const dir = backupsDirOf(settings.dataDir.value);
      const target = freeTarget(file ? resolve(file) : join(dir, newBackupName(driver.backupExtension)));
      try {
        await writeWhole(target, (partial) =>
          driver.backup(url, partial, { onProgress: progressOnStderr() }),
        );
      } catch (error) {
        throw oneLine(error);
      }
      done(target, driver.backupSource(url));
    });
}

/** Says where the backup went, and how big it is. */
function done(target: string, what: string): void {
  process.stdout.write(`backed up ${what} to ${target} (${statSync(target).size} bytes)\n`);
}

/**
 * `<binary> restore FILE`: puts a backup in place of the database, as the
 * driver `DATABASE_URL` picks does it (SQLite: checked, copied in full,
 * swapped in, the current database kept aside; PostgreSQL: refused, with
 * the pg_restore to run). Refuses while a server uses the data directory.
 */
export function addRestoreCommand(program: Command, app: App): void {
  program
    .command('restore <file>')
    .description(
      'put a backup in place of the database (the server must be stopped); the current one is kept aside',
    )
    .option('-c, --config <file>', 'config file (default: ./berth.config.json)')
    .action(async (file: string, flags: { config?: string }) => {
      const settings = settingsOf(app, flags.config);
      const { url, source, driver } = chosenStorage(settings);
      const dataDir = settings.dataDir.value;
      let said: string;
      try {
        said = await driver.restore(url, file, {
          source,
          lock: () => lockForRestore(app, dataDir),
          onProgress: progressOnStderr(),
        });
      } catch (error) {
        throw oneLine(error);
      }
      process.stdout.write(`${said}\n`);
    });
}

/** The data directory's lock, held until the restore ends (with the process): no server starts on a half-restored directory. */
function lockForRestore(app: App, dataDir: string): DataDirLock {
  let lock: DataDirLock | undefined;
  try {
    lock = tryLockDataDir(dataDir);
  } catch (error) {
    throw new CommandError(
      `cannot lock ${dataDir} (${(error as Error).message}), so nothing was changed: run restore as the user the server runs as`,
      { cause: error },
    );
  }
  if (lock) return lock;
  const holder = dataDirHolder(dataDir);
  throw new CommandError(
    holder
      ? `a server (pid ${holder.pid}, ${holder.url}) is using ${dataDir}, so nothing was changed: stop it first (\`${app.name} service stop\` for a service, or \`kill ${holder.pid}\`), then restore`
      : `another Berth process (a server, or another restore) is using ${dataDir} (it holds ${join(dataDir, dataDirLockFile)}), so nothing was changed: let it finish or stop it, then restore`,
  );
}
