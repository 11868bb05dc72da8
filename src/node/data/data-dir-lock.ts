import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from '../../storage/sqlite-driver.js';
import { ensurePrivateDir } from './private-files.js';
import { readServerState } from '../server/server-state.js';
import { SettingError } from '../settings/setting-error.js';

/** The file a server (a `--workers` primary for its cluster) and `restore` keep locked in a data directory. */
export const dataDirLockFile = 'berth.lock';

/** A data directory this process holds; `release` lets the next one take it. */
export interface DataDirLock {
  readonly file: string;
  release(): void;
}

/** The locks this process holds: kept referenced, since a collected connection would let its lock go. */
const held = new Set<Database.Database>();

/**
 * Locks `dataDir` for this process, or answers undefined when another
 * process holds it. The lock is an exclusive lock on `berth.lock` taken
 * through SQLite, i.e. an operating-system record lock (fcntl), which the
 * kernel drops when the process ends however it ends (`kill -9` included):
 * a crashed server never blocks the next start. A transaction is held open
 * with its journal in memory, so nothing is ever written (the file stays
 * empty and the lock is taken on a full disk too). Nothing else may open
 * and close `berth.lock` in a process that holds it: closing any descriptor
 * of a file drops the process's locks on it.
 */
export function tryLockDataDir(dataDir: string): DataDirLock | undefined {
  ensurePrivateDir(dataDir);
  const file = join(dataDir, dataDirLockFile);
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file, { timeout: 0 });
  try {
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY') return undefined;
    if (code === 'SQLITE_NOTADB') {
      throw new SettingError(
        `${file} is not the lock file Berth makes (something wrote into it): delete it while no Berth process uses ${dataDir}, then start again`,
      );
    }
    throw error;
  }
  held.add(db);
  return {
    file,
    release() {
      if (!held.delete(db)) return;
      db.close();
    },
  };
}

/** Whether a process with this pid runs (one we may not signal runs too). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Who holds a locked data directory, as far as can be told: the server its
 * state file names when that process runs, else a process that has not said
 * (a server still starting, or `restore`).
 */
export function dataDirHolder(dataDir: string): { pid: number; url: string } | undefined {
  const state = readServerState(dataDir);
  return state && state.pid !== process.pid && processAlive(state.pid)
    ? { pid: state.pid, url: state.url }
    : undefined;
}

/**
 * Locks `dataDir` for a server, for as long as it runs: a second server on
 * the same directory is refused, and so is `restore` while one runs.
 */
export function lockDataDirForServer(dataDir: string): DataDirLock {
  let lock: DataDirLock | undefined;
  try {
    lock = tryLockDataDir(dataDir);
  } catch (error) {
    if (error instanceof SettingError) throw error;
    throw new SettingError(
      `cannot lock the data directory ${dataDir} (${(error as Error).message}): it must be writable by the user the server runs as`,
      { cause: error },
    );
  }
  if (lock) return lock;
  const holder = dataDirHolder(dataDir);
  throw new SettingError(
    `${holder ? `another server (pid ${holder.pid}, ${holder.url})` : 'another Berth process (a server, or a restore)'} is using the data directory ${dataDir} (it holds ${join(dataDir, dataDirLockFile)}), so this server did not start: stop that one first, or give this one a data directory of its own (BERTH_DATA_DIR, or "dataDir" in berth.config.json)`,
  );
}
