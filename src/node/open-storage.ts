import { join } from 'node:path';
import type { Logger, StorageDriver } from '../core/internal.js';
import { openPostgresStorage } from '../storage/postgres.js';
import { openSqliteStorage } from '../storage/sqlite.js';
import type { Settings } from './settings.js';

/** SQLite file inside the data directory. */
export const sqliteFileName = 'berth.sqlite';

/** PostgreSQL when `DATABASE_URL` is set, else the embedded SQLite file in the data directory. */
export function openStorage(
  settings: Pick<Settings, 'databaseUrl' | 'dataDir' | 'queryTimeout'>,
  logger: Logger,
): StorageDriver {
  const url = settings.databaseUrl.value;
  if (url) {
    return openPostgresStorage(url, {
      queryTimeout: settings.queryTimeout.value,
      onError: (error) =>
        logger.warn({ reason: error.message }, `PostgreSQL connection lost: ${error.message}`),
    });
  }
  return openSqliteStorage(join(settings.dataDir.value, sqliteFileName));
}
