import { join } from 'node:path';
import type { BackupProgress, Logger, Storage, StorageDriver } from '../../../core/internal.js';
import { SettingError } from '../../settings/setting-error.js';
import type { Sourced } from '../../settings/setting-table.js';
import { postgresDriver } from './postgres.js';
import { sqliteDriver } from './sqlite.js';

/** What opening a database may take besides its URL. */
export interface StorageOpenOptions {
  /** The longest a statement may run outside migrations, in ms (0: no limit), where the driver can stop one. */
  queryTimeout: number;
  /** Where the driver says what goes wrong once it is open (a lost connection). */
  logger: Logger;
}

/** What a backup may take besides the URL and the file. */
export interface StorageBackupOptions {
  /** The running server's storage, when a server makes the backup: a driver may copy through it. */
  storage?: Storage;
  onProgress?: BackupProgress;
}

/** What `restore` gives a driver besides the URL and the backup. */
export interface StorageRestoreOptions {
  /** Where the URL came from (`the DATABASE_URL variable`), for messages. */
  source: string;
  /** Locks the data directory, as a server does, before anything changes; throws when a server holds it. */
  lock(): { release(): void };
  onProgress?: BackupProgress;
}

/**
 * A storage driver as the Node runtime knows it: the URL schemes that pick
 * it, how it opens, and how it backs up and restores. Everything that
 * depends on which database a project uses (`start`, `backup`, `restore`,
 * `import`, the scheduled backups, `DATABASE_URL`'s check) asks the entry;
 * a new driver is one `registerStorageDriver` call.
 */
export interface StorageDriverEntry {
  /** How logs and messages name it (`sqlite`, `postgres`). */
  readonly name: string;
  /** The URL schemes that pick it, lower-case, with their colon (`sqlite:`). */
  readonly schemes: readonly string[];
  /** What it is, in one line. */
  readonly description: string;
  /** A URL to copy, for messages and the reference. */
  readonly example: string;
  /**
   * The database is a file this process opens itself (SQLite): a command
   * that writes it in one long transaction (`import`) locks the data
   * directory first, so no server starts meanwhile.
   */
  readonly embedded: boolean;
  /**
   * A URL as a setting gives it, checked, with what is relative made
   * absolute against `cwd`; throws an Error whose message follows
   * "DATABASE_URL from SOURCE" and says what to write instead.
   */
  normalize?(url: string, cwd: string): string;
  open(url: string, options: StorageOpenOptions): StorageDriver;
  /** Where the database should be, when it is a file that does not exist yet. */
  missing?(url: string): string | undefined;
  /** The file name extension of its backups (`sqlite`, `dump`). */
  readonly backupExtension: string;
  /** What a backup copies, as `backup` says it (a file, or how the copy is made). */
  backupSource(url: string): string;
  /** Copies the database into `file` (the caller makes it appear whole, or not at all). */
  backup(url: string, file: string, options?: StorageBackupOptions): Promise<void>;
  /**
   * Puts the backup `file` (as given, relative to the working directory)
   * in place of the database, or refuses and says what to do instead.
   * Answers the line that says what it did.
   */
  restore(url: string, file: string, options: StorageRestoreOptions): Promise<string>;
}

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
