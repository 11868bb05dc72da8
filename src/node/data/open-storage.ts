import type { Logger, StorageDriver } from '../../core/internal.js';
import type { Settings } from '../settings/settings.js';
import { chosenStorage } from './storage-drivers/registry.js';

/**
 * Opens the database the settings choose: the driver that `DATABASE_URL`'s
 * scheme picks (`sqlite:`, `postgres:`), else the embedded SQLite file in
 * the data directory.
 */
export function openStorage(
  settings: Pick<Settings, 'databaseUrl' | 'dataDir' | 'queryTimeout'>,
  logger: Logger,
): StorageDriver {
  const { url, driver } = chosenStorage(settings);
  return driver.open(url, { queryTimeout: settings.queryTimeout.value, logger });
}
