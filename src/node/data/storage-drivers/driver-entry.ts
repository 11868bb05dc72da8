/** What a storage driver is to the Node runtime: how it opens, backs up and restores, by URL scheme. */
import type { BackupProgress, Logger, Storage, StorageDriver } from '../../../core/internal.js';

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
