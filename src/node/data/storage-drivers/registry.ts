import { join } from 'node:path';
import { SettingError } from '../../settings/setting-error.js';
import type { Sourced } from '../../settings/sourced.js';
import type { StorageDriverEntry } from './driver-entry.js';
import { postgresDriver } from './postgres.js';
import { sqliteDriver } from './sqlite.js';

export type {
  StorageBackupOptions,
  StorageDriverEntry,
  StorageOpenOptions,
  StorageRestoreOptions,
} from './driver-entry.js';

/** The database, as a project's settings choose it: its URL, where that came from, and the driver it picks. */
export interface ChosenStorage {
  url: string;
  source: string;
  driver: StorageDriverEntry;
}

/** SQLite file inside the data directory, without `DATABASE_URL`. */
export const sqliteFileName = 'berth.sqlite';

const byScheme = new Map<string, StorageDriverEntry>();

/** Adds a driver: its schemes pick it from then on. A scheme another driver has is refused. */
export function registerStorageDriver(entry: StorageDriverEntry): void {
  for (const scheme of entry.schemes) {
    if (!/^[a-z][a-z0-9+.-]*:$/.test(scheme)) {
      throw new Error(`the scheme "${scheme}" of ${entry.name} must be lower-case, end in ":" (sqlite:)`);
    }
    const taken = byScheme.get(scheme);
    if (taken && taken !== entry)
      throw new Error(`the scheme ${scheme} is the ${taken.name} driver’s already`);
  }
  for (const scheme of entry.schemes) byScheme.set(scheme, entry);
}

/** Every scheme a driver takes, in the order they were registered. */
export const registeredSchemes = (): string[] => [...byScheme.keys()];

/** The registered drivers, each once, in the order they were registered. */
export const registeredDrivers = (): StorageDriverEntry[] => [...new Set(byScheme.values())];

/** What `DATABASE_URL` may be, for messages: each driver's schemes and an example. */
const choices = (): string =>
  registeredDrivers()
    .map((entry) => `${entry.schemes.join(' or ')} (${entry.example})`)
    .join(', ');

/**
 * The driver a URL's scheme picks (case-insensitive, as URL schemes are).
 * None: a SettingError that names where the URL came from and lists the
 * registered schemes. The URL itself is not repeated (it may hold a password).
 */
export function storageDriverFor(url: string, source: string): StorageDriverEntry {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase();
  const found = scheme === undefined ? undefined : byScheme.get(scheme);
  if (found) return found;
  throw new SettingError(
    `DATABASE_URL from ${source} ${scheme ? `starts with ${scheme}, which no storage driver takes` : 'has no scheme'}: use ${choices()}, or unset it for SQLite in the data directory`,
  );
}

/** `DATABASE_URL` as a setting: its scheme picks a driver, which checks it and resolves what is relative. */
export function parseDatabaseUrl(raw: string, source: string, cwd: string): string {
  const driver = storageDriverFor(raw, source);
  if (!driver.normalize) return raw;
  try {
    return driver.normalize(raw, cwd);
  } catch (error) {
    throw new SettingError(`DATABASE_URL from ${source} ${(error as Error).message}`, { cause: error });
  }
}

/** The database the settings choose: `DATABASE_URL`, else SQLite's `berth.sqlite` in the data directory. */
export function chosenStorage(settings: {
  databaseUrl: Sourced<string | undefined>;
  dataDir: Sourced<string>;
}): ChosenStorage {
  const { value, source } = settings.databaseUrl;
  const url = value ?? `sqlite:${join(settings.dataDir.value, sqliteFileName)}`;
  return {
    url,
    source: value === undefined ? 'the default (SQLite in the data directory)' : source,
    driver: storageDriverFor(url, source),
  };
}

registerStorageDriver(sqliteDriver);
registerStorageDriver(postgresDriver);
