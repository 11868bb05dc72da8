import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from '../storage/sqlite-driver.js';
import type { Command } from 'commander';
import type { App } from '../core/internal.js';
import {
  backupsDirOf,
  copySqliteFile,
  fileTime,
  newBackupName,
  pgDump,
  progressLines,
  writeWhole,
} from '../node/backups.js';
import { sqliteFileName } from '../node/open-storage.js';
import { dataDirHolder, dataDirLockFile, tryLockDataDir, type DataDirLock } from '../node/data-dir-lock.js';
import { resolveSettings, type Settings } from '../node/settings.js';
import { searchSchema, searchTableOf } from '../storage/sqlite-search.js';
import { CommandError } from './command-error.js';

/** The settings as `start` resolves them (flags, environment, `.env`, config file). */
const settingsOf = (app: App, config: string | undefined): Settings =>
  resolveSettings({ cwd: process.cwd(), flags: config ? { config } : {}, processEnv: process.env, app });

/** Progress lines on stderr (every 10 % of a large database), so stdout stays the one result line. */
const progressOnStderr = () => progressLines((line) => process.stderr.write(`${line}\n`));

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
 * server may be writing: SQLite's online backup API on a connection of its
 * own, or `pg_dump` with PostgreSQL. Prints where it went.
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
      const dir = backupsDirOf(settings.dataDir.value);
      const url = settings.databaseUrl.value;
      if (url) {
        const target = freeTarget(file ? resolve(file) : join(dir, newBackupName('dump')));
        try {
          await writeWhole(target, (partial) => pgDump(url, partial));
        } catch (error) {
          throw new CommandError((error as Error).message, { cause: error });
        }
        return done(target, 'the PostgreSQL database (pg_dump, custom format; restore with pg_restore)');
      }
      const database = join(settings.dataDir.value, sqliteFileName);
      if (!existsSync(database)) {
        throw new CommandError(
          `there is no database at ${database} yet: \`${app.name} start\` creates it (or run this where the project’s data directory is)`,
        );
      }
      const target = freeTarget(file ? resolve(file) : join(dir, newBackupName('sqlite')));
      try {
        await copySqliteFile(database, target, progressOnStderr());
      } catch (error) {
        throw new CommandError(
          `the backup of ${database} failed, so nothing was written: ${(error as Error).message}`,
          { cause: error },
        );
      }
      done(target, database);
    });
}

/** Says where the backup went, and how big it is. */
function done(target: string, what: string): void {
  process.stdout.write(`backed up ${what} to ${target} (${statSync(target).size} bytes)\n`);
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
  throw new CommandError(
    `${file} holds ${named.join(', ')}, which Berth did not make, so nothing was changed: they would run inside the server once restored. If the rest of the backup is yours, remove them from a copy (sqlite3 COPY '${drops}') and restore that`,
  );
}

/** Refuses anything but an SQLite database holding Berth's migrations table, undamaged, with no triggers or views. */
function checkBackup(file: string): void {
  if (!existsSync(file)) throw new CommandError(`there is no file ${file}: give the path of a backup`);
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const found = db
      .prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'berth_migrations'")
      .get() as { n: number };
    if (found.n === 0) {
      throw new CommandError(
        `${file} is an SQLite database, but not one of Berth’s (it has no berth_migrations table), so nothing was changed: give a file made by \`backup\``,
      );
    }
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') {
      throw new CommandError(`${file} is damaged (quick_check: ${String(check)}), so nothing was changed`);
    }
    refuseCode(db, file);
  } catch (error) {
    if (error instanceof CommandError) throw error;
    throw new CommandError(
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
 * `<binary> restore FILE`: puts a backup in place of the embedded database,
 * keeping the current one aside. Refuses while a server uses the data
 * directory, and anything that is not a Berth SQLite database.
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
      if (settings.databaseUrl.value) {
        throw new CommandError(
          `restore puts back the embedded SQLite database, but this project uses PostgreSQL (${settings.databaseUrl.source}): restore a dump with pg_restore --clean --if-exists --dbname="$DATABASE_URL" ${file}`,
        );
      }
      const source = resolve(file);
      checkBackup(source);
      const dataDir = settings.dataDir.value;
      // Held until the restore ends (with the process): no server starts on a half-restored directory.
      let lock: DataDirLock | undefined;
      try {
        lock = tryLockDataDir(dataDir);
      } catch (error) {
        throw new CommandError(
          `cannot lock ${dataDir} (${(error as Error).message}), so nothing was changed: run restore as the user the server runs as`,
          { cause: error },
        );
      }
      if (!lock) {
        const holder = dataDirHolder(dataDir);
        throw new CommandError(
          holder
            ? `a server (pid ${holder.pid}, ${holder.url}) is using ${dataDir}, so nothing was changed: stop it first (\`${app.name} service stop\` for a service, or \`kill ${holder.pid}\`), then restore`
            : `another Berth process (a server, or another restore) is using ${dataDir} (it holds ${join(dataDir, dataDirLockFile)}), so nothing was changed: let it finish or stop it, then restore`,
        );
      }
      try {
        const database = join(dataDir, sqliteFileName);
        // The backup is copied in full before anything is moved, so a failure changes nothing.
        const incoming = `${database}.restoring`;
        try {
          await copySqliteFile(source, incoming, progressOnStderr());
        } catch (error) {
          throw new CommandError(
            `${source} could not be read, so nothing was changed: ${(error as Error).message}`,
            { cause: error },
          );
        }
        const aside = existsSync(database) ? moveAside(database) : undefined;
        renameSync(incoming, database);
        process.stdout.write(
          `restored ${source} into ${database}${aside ? `; the database before it is kept as ${aside}` : ''}\n`,
        );
      } finally {
        lock.release();
      }
    });
}
