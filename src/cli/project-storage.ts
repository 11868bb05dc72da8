import { join } from 'node:path';
import type { App, CollectionDefinition, Logger, Storage } from '../core/internal.js';
import {
  dataDirHolder,
  dataDirLockFile,
  tryLockDataDir,
  type DataDirLock,
} from '../node/data/data-dir-lock.js';
import { resolveAppModuleSettings } from '../node/settings/module-settings.js';
import { openStorage } from '../node/data/open-storage.js';
import { resolveSettings, type Settings } from '../node/settings/settings.js';
import { chosenStorage } from '../node/data/storage-drivers/registry.js';
import { CommandError } from './command-error.js';

/** The settings as `start` resolves them (flags, environment, `.env`, config file). */
export const settingsOf = (app: App, config: string | undefined): Settings =>
  resolveSettings({ cwd: process.cwd(), flags: config ? { config } : {}, processEnv: process.env, app });

/** Warnings of the storage (a lost PostgreSQL connection) on stderr; nothing else. */
const stderrLogger: Logger = {
  debug() {},
  info() {},
  warn: (_fields, message) => process.stderr.write(`${message ?? ''}\n`),
  error: (_fields, message) => process.stderr.write(`${message ?? ''}\n`),
};

/** The collection of this name, or an error that lists those there are. */
export function collectionNamed(app: App, name: string): CollectionDefinition {
  const found = app.collections.find((collection) => collection.name === name);
  if (found) return found;
  throw new CommandError(
    `${app.name} has no collection "${name}": its collections are ${app.collections.map((collection) => collection.name).join(', ')}`,
  );
}

/**
 * Locks the data directory as `restore` does, for a command that writes
 * an embedded database (SQLite) in one long transaction: no server starts
 * meanwhile, and one that runs is named with what to do.
 */
export function lockForWriting(app: App, dataDir: string, what: string): DataDirLock {
  let lock: DataDirLock | undefined;
  try {
    lock = tryLockDataDir(dataDir);
  } catch (error) {
    throw new CommandError(
      `cannot lock ${dataDir} (${(error as Error).message}), so nothing was ${what}: run this as the user the server runs as`,
      { cause: error },
    );
  }
  if (lock) return lock;
  const holder = dataDirHolder(dataDir);
  throw new CommandError(
    holder
      ? `a server (pid ${holder.pid}, ${holder.url}) is using ${dataDir}, so nothing was ${what}: an import into SQLite holds the database's write lock until it ends (the server's writes would fail meanwhile); stop the server first (\`${app.name} service stop\` for a service, or \`kill ${holder.pid}\`), or POST the records to it`
      : `another Berth process (a server, a restore or an import) is using ${dataDir} (it holds ${join(dataDir, dataDirLockFile)}), so nothing was ${what}: let it finish or stop it, then try again`,
  );
}

/** The project's storage as `start` opens it, with its collections' validation and write hooks. */
export function openProjectStorage(app: App, settings: Settings, options: { mustExist: boolean }): Storage {
  if (options.mustExist) {
    const { url, driver } = chosenStorage(settings);
    const missing = driver.missing?.(url);
    if (missing) {
      throw new CommandError(
        `there is no database at ${missing} yet: \`${app.name} start\` creates it (or run this where the project’s data directory is)`,
      );
    }
  }
  return app
    .createStorage(openStorage(settings, stderrLogger))
    .withSettings(resolveAppModuleSettings(app, settings));
}
