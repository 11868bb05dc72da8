import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { BackupProgress } from '../../../core/internal.js';
import Database from '../../../storage/sqlite-driver.js';
import { searchSchema, searchTableOf } from '../../../storage/sqlite-search.js';
import { onlineBackup, openSqliteStorage } from '../../../storage/sqlite.js';
import { fileTime, writeWhole } from '../backup-files.js';
import type { StorageDriverEntry } from './driver-entry.js';

/** A backup `restore` refuses, said in one line. */
class Refused extends Error {}

/**
 * The file a `sqlite:` URL names: `sqlite:/abs/path.sqlite`, or
 * `sqlite:relative/path.sqlite` from `cwd`. `sqlite://…` is refused: it
 * reads as a host, and its relative and absolute forms are easy to mix up.
 */
export function sqliteFileOf(url: string, cwd = process.cwd()): string {
  const path = url.slice('sqlite:'.length);
  if (path.startsWith('//')) {
    throw new Error(
      'starts with sqlite://: write sqlite:/absolute/path.sqlite, or sqlite:relative/path.sqlite (from the working directory)',
    );
  }
  if (path === '') throw new Error('names no file: write sqlite:path/to/file.sqlite');
  return resolve(cwd, path);
}

/**
 * A consistent copy of the SQLite database in `source` at `target`, made
 * with SQLite's online backup API on a connection of its own (so a server
 * may keep writing, and what only its -wal holds is copied too).
 */
export async function copySqliteFile(
  source: string,
  target: string,
  onProgress?: BackupProgress,
): Promise<void> {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    await onlineBackup(db, target, onProgress);
  } finally {
    db.close();
  }
}

/** Whether a trigger is one of those Berth makes to keep a collection's text index, exactly as it makes it. */
function isSearchTrigger(
  db: Database.Database,
  trigger: { name: string; tableName: string; sql: string },
): boolean {
  const search = searchTableOf(trigger.tableName);
  if (!trigger.name.startsWith(`${search}_`)) return false;
  const columns = (
    db.prepare('SELECT name FROM pragma_table_info(?)').all(search) as Array<{ name: string }>
  ).map((column) => column.name);
  return columns.length > 0 && searchSchema(trigger.tableName, columns).triggers.includes(trigger.sql);
}

/**
 * Refuses a database holding triggers or views Berth did not make (it makes
 * only those that keep a text index, each checked to be exactly Berth's):
 * once restored they would run inside the server (a trigger on `users` can
 * make every new sign-up an admin).
 */
function refuseCode(db: Database.Database, file: string): void {
  const found = (
    db
      .prepare(
        "SELECT type, name, tbl_name AS tableName, sql FROM sqlite_master WHERE type IN ('trigger', 'view') ORDER BY type, name",
      )
      .all() as Array<{ type: 'trigger' | 'view'; name: string; tableName: string; sql: string }>
  ).filter((each) => each.type === 'view' || !isSearchTrigger(db, each));
  if (found.length === 0) return;
  const named = found.map((each) =>
    each.type === 'trigger' ? `trigger "${each.name}" on ${each.tableName}` : `view "${each.name}"`,
  );
  const drops = found
    .map((each) => `DROP ${each.type.toUpperCase()} "${each.name.replace(/"/g, '""')}";`)
    .join(' ');
  throw new Refused(
    `${file} holds ${named.join(', ')}, which Berth did not make, so nothing was changed: they would run inside the server once restored. If the rest of the backup is yours, remove them from a copy (sqlite3 COPY '${drops}') and restore that`,
  );
}

/** Refuses anything but an SQLite database holding Berth's migrations table, undamaged, with no triggers or views. */
function checkBackup(file: string): void {
  if (!existsSync(file)) throw new Refused(`there is no file ${file}: give the path of a backup`);
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const found = db
      .prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'berth_migrations'")
      .get() as { n: number };
    if (found.n === 0) {
      throw new Refused(
        `${file} is an SQLite database, but not one of Berth’s (it has no berth_migrations table), so nothing was changed: give a file made by \`backup\``,
      );
    }
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') {
      throw new Refused(`${file} is damaged (quick_check: ${String(check)}), so nothing was changed`);
    }
    refuseCode(db, file);
  } catch (error) {
    if (error instanceof Refused) throw error;
    throw new Refused(
      `${file} is not an SQLite database (${(error as Error).message}), so nothing was changed: give a file made by \`backup\``,
      { cause: error },
    );
  } finally {
    db?.close();
  }
}

/** `berth.sqlite` → `berth.sqlite.before-restore` (a time is added when that exists already). */
function asideName(database: string): string {
  const plain = `${database}.before-restore`;
  return existsSync(plain) ? `${plain}-${fileTime()}` : plain;
}

/**
 * Moves the database aside with its -wal and -shm (the -wal may hold the
 * latest writes), under names SQLite pairs again: `restore` of the aside
 * file brings every write back. Returns the aside name.
 */
function moveAside(database: string): string {
  const aside = asideName(database);
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(`${database}${suffix}`)) renameSync(`${database}${suffix}`, `${aside}${suffix}`);
  }
  return aside;
}

/**
 * SQLite: a database file this process opens itself (`sqlite:PATH`, and
 * the default `berth.sqlite` in the data directory). A backup is SQLite's
 * online backup (a server may keep writing meanwhile); a restore checks the
 * backup, copies it in full, then swaps it in and keeps the database before
 * it aside.
 */
export const sqliteDriver: StorageDriverEntry = {
  name: 'sqlite',
  schemes: ['sqlite:'],
  description: 'SQLite: a database file this process opens, in WAL mode',
  example: 'sqlite:path/to/file.sqlite',
  embedded: true,
  normalize: (url, cwd) => `sqlite:${sqliteFileOf(url, cwd)}`,
  open: (url) => openSqliteStorage(sqliteFileOf(url)),
  missing: (url) => {
    const file = sqliteFileOf(url);
    return existsSync(file) ? undefined : file;
  },
  backupExtension: 'sqlite',
  backupSource: (url) => sqliteFileOf(url),
  async backup(url, file, { storage, onProgress } = {}) {
    // A server copies on its own connection: the writes it makes meanwhile are in the copy too.
    if (storage) {
      if (!storage.backup) throw new Error(`the ${storage.driver} storage cannot make backups`);
      return storage.backup(file, onProgress);
    }
    const database = sqliteFileOf(url);
    try {
      await copySqliteFile(database, file, onProgress);
    } catch (error) {
      throw new Error(
        `the backup of ${database} failed, so nothing was written: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  },
  async restore(url, file, { lock, onProgress }) {
    const source = resolve(file);
    checkBackup(source);
    // Held until the restore ends: no server starts on a half-restored directory.
    const held = lock();
    try {
      const database = sqliteFileOf(url);
      mkdirSync(dirname(database), { recursive: true, mode: 0o700 });
      // The backup is copied in full before anything is moved, so a failure changes nothing.
      const incoming = `${database}.restoring`;
      try {
        await writeWhole(incoming, (partial) => copySqliteFile(source, partial, onProgress));
      } catch (error) {
        throw new Error(`${source} could not be read, so nothing was changed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      const aside = existsSync(database) ? moveAside(database) : undefined;
      renameSync(incoming, database);
      return `restored ${source} into ${database}${aside ? `; the database before it is kept as ${aside}` : ''}`;
    } finally {
      held.release();
    }
  },
};
