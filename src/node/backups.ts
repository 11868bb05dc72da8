import { spawn } from 'node:child_process';
import { chmodSync, createReadStream, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Database from '../storage/sqlite-driver.js';
import type { BackupEntry, BackupProgress, Backups, Logger, Storage } from '../core/internal.js';
import { onlineBackup } from '../storage/sqlite.js';
import { durationText } from './setting-table.js';

/** Where backups go: `<data dir>/backups`. */
export const backupsDirOf = (dataDir: string): string => join(dataDir, 'backups');

/** `2026-11-24T16-45-00-123Z.sqlite`; scheduled ones start with `auto-`. Sortable, safe in any file system. */
export const backupNamePattern = /^(auto-)?\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.(sqlite|dump)$/;

/** A UTC time that is safe in a file name: `2026-11-24T16-45-00-123Z`. */
export const fileTime = (now = new Date()): string => now.toISOString().replace(/[:.]/g, '-');

/** A new backup's name: its UTC time, `auto-` first when the schedule made it. */
export function newBackupName(kind: 'sqlite' | 'dump', scheduled = false, now = new Date()): string {
  return `${scheduled ? 'auto-' : ''}${fileTime(now)}.${kind}`;
}

/** The backups in a directory, newest first. */
export function listBackupFiles(dir: string): BackupEntry[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => backupNamePattern.test(name))
    .map((name) => {
      const stat = statSync(join(dir, name));
      return {
        name,
        bytes: stat.size,
        createdAt: stat.mtime.toISOString(),
        scheduled: name.startsWith('auto-'),
      };
    })
    .sort((a, b) => (a.name.replace(/^auto-/, '') < b.name.replace(/^auto-/, '') ? 1 : -1));
}

/** A progress line every 10 % for a database of more than `large` pages (4 MiB of 4 KiB pages). */
export function progressLines(write: (line: string) => void, large = 1000): BackupProgress {
  let shown = -1;
  return (copied, total) => {
    if (total <= large) return;
    const tenth = Math.floor((copied / total) * 10);
    if (tenth > shown) {
      shown = tenth;
      write(`backing up: ${tenth * 10} % (${copied} of ${total} pages)`);
    }
  };
}

/**
 * Writes `file` through `write`, which gets a temporary name next to it: the
 * file appears whole or not at all, readable by its owner only (a backup
 * holds what the database holds).
 */
export async function writeWhole(file: string, write: (partial: string) => Promise<void>): Promise<void> {
  const partial = `${file}.partial`;
  try {
    await write(partial);
    chmodSync(partial, 0o600);
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
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
    await writeWhole(target, (partial) => onlineBackup(db, partial, onProgress));
  } finally {
    db.close();
  }
}

/** Thrown when `pg_dump` is not on this machine: the message says what to run instead. */
export class MissingPgDump extends Error {}

/**
 * A PostgreSQL URL without its password, and the password: a client tool
 * gets the URL in its arguments, which every user of the machine can read
 * (`ps`), and the password in `PGPASSWORD`, which only the same user can.
 * Both places libpq reads a password from are emptied (`user:password@`
 * and `?password=`); everything else is kept as written.
 */
export function splitPassword(url: string): { url: string; password: string | undefined } {
  let password: string | undefined;
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text; // not percent-encoded: libpq will say what is wrong with it
    }
  };
  let rest = url.replace(/^(postgres(?:ql)?:\/\/)([^@/?#]*)@/, (whole, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    if (colon < 0) return whole;
    password = decode(userinfo.slice(colon + 1));
    return `${scheme}${userinfo.slice(0, colon)}@`;
  });
  const query = rest.indexOf('?');
  if (query >= 0) {
    const params = rest.slice(query + 1).split('&');
    const given = params.find((param) => param.startsWith('password='));
    if (given !== undefined) {
      password = decode(given.slice('password='.length));
      const kept = params.filter((param) => !param.startsWith('password='));
      rest = `${rest.slice(0, query)}${kept.length ? `?${kept.join('&')}` : ''}`;
    }
  }
  return { url: rest, password };
}

/**
 * `pg_dump --format=custom` of a PostgreSQL database into `file` (restore
 * it with `pg_restore --clean --dbname=...`; write it through `writeWhole`).
 * The password goes in the environment, never in the arguments. Rejects
 * with its stderr when it fails, or with `MissingPgDump` when it is not
 * installed.
 */
export function pgDump(databaseUrl: string, file: string): Promise<void> {
  const { url, password } = splitPassword(databaseUrl);
  return new Promise((resolve, reject) => {
    const child = spawn('pg_dump', ['--format=custom', `--file=${file}`, `--dbname=${url}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: password === undefined ? process.env : { ...process.env, PGPASSWORD: password },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new MissingPgDump(
              `pg_dump is not on this machine (PATH): install PostgreSQL’s client tools (Debian: apt-get install postgresql-client), or run elsewhere: pg_dump --format=custom --file=${file} "$DATABASE_URL"`,
            )
          : error,
      ),
    );
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`pg_dump failed (exit ${code}): ${stderr.trim() || 'no message'}`)),
    );
  });
}

/** Writes one backup of a running server's storage into `dir`; the file appears whole or not at all. */
async function backupInto(
  dir: string,
  storage: Storage,
  databaseUrl: string | undefined,
  scheduled: boolean,
): Promise<BackupEntry> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = newBackupName(databaseUrl ? 'dump' : 'sqlite', scheduled);
  await writeWhole(join(dir, name), async (partial) => {
    if (databaseUrl) await pgDump(databaseUrl, partial);
    else if (storage.backup) await storage.backup(partial);
    else throw new Error(`the ${storage.driver} storage cannot make backups`);
  });
  return listBackupFiles(dir).find((entry) => entry.name === name)!;
}

/** Why a `--workers` worker makes no scheduled backups, said once when it starts and in the list. */
const noScheduleInWorkers =
  'scheduled backups run in a single process only, so BERTH_BACKUP_INTERVAL is not used with --workers: schedule `berth backup` from cron or a systemd timer instead (POST /admin/backups works on any worker)';

/**
 * The backups of a running server: made on demand (the admin API) and,
 * with an interval, on a schedule that keeps the newest `keep` scheduled
 * ones. A failed scheduled backup is logged as an error and remembered for
 * the admin UI until one succeeds. Backups are made one at a time. A
 * `--workers` worker never schedules (`inWorker`): every worker would, and
 * the primary has no storage open.
 */
export function serverBackups(options: {
  storage: Storage;
  dataDir: string;
  databaseUrl: string | undefined;
  interval: number;
  keep: number;
  logger: Logger;
  inWorker?: boolean;
}): Backups & { stop(): Promise<void> } {
  const { storage, dataDir, databaseUrl, keep, logger } = options;
  const interval = options.inWorker ? 0 : options.interval;
  const note = options.inWorker && options.interval > 0 ? noScheduleInWorkers : undefined;
  const dir = backupsDirOf(dataDir);
  let lastFailure: { at: string; message: string } | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  const make = (scheduled: boolean): Promise<BackupEntry> => {
    const made = queue.then(async () => {
      const entry = await backupInto(dir, storage, databaseUrl, scheduled);
      logger.info(
        { backup: entry.name, bytes: entry.bytes },
        `backup made: ${join(dir, entry.name)} (${entry.bytes} bytes)`,
      );
      return entry;
    });
    queue = made.catch(() => undefined);
    return made;
  };
  const prune = () => {
    for (const old of listBackupFiles(dir)
      .filter((entry) => entry.scheduled)
      .slice(keep)) {
      rmSync(join(dir, old.name), { force: true });
      logger.info({ backup: old.name }, `backup removed: ${old.name} (keeping the newest ${keep})`);
    }
  };
  let running = false;
  const scheduled = async () => {
    if (running) return;
    running = true;
    try {
      await make(true);
      lastFailure = null;
      prune();
    } catch (error) {
      lastFailure = { at: new Date().toISOString(), message: (error as Error).message };
      logger.error({ err: error }, `scheduled backup failed: ${(error as Error).message}`);
    } finally {
      running = false;
    }
  };
  const timer = interval > 0 ? setInterval(() => void scheduled(), interval) : undefined;
  timer?.unref();
  if (interval > 0) {
    logger.info(
      { every: durationText(interval), keep },
      `backups: every ${durationText(interval)} into ${dir}, keeping ${keep}`,
    );
  }
  if (note) logger.warn({ every: durationText(options.interval) }, note);
  return {
    async list() {
      return {
        directory: dir,
        backups: listBackupFiles(dir),
        schedule: { every: interval > 0 ? durationText(interval) : null, keep, ...(note ? { note } : {}) },
        lastFailure,
      };
    },
    make: () => make(false),
    async open(name) {
      if (!backupNamePattern.test(name)) return undefined;
      const file = join(dir, name);
      let bytes: number;
      try {
        bytes = statSync(file).size;
      } catch {
        return undefined;
      }
      return { body: Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>, bytes };
    },
    // The schedule stops; a backup under way ends before the storage closes.
    async stop() {
      clearInterval(timer);
      await queue;
    },
  };
}
