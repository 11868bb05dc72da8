import { createReadStream, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  durationText,
  type BackupEntry,
  type BackupProgress,
  type Backups,
  type Logger,
  type Storage,
} from '../../core/internal.js';
import { fileTime, writeWhole } from './backup-files.js';
import { chosenStorage, registeredDrivers, type ChosenStorage } from './storage-drivers/registry.js';

/** Where backups go: `<data dir>/backups`. */
export const backupsDirOf = (dataDir: string): string => join(dataDir, 'backups');

/**
 * Whether a file is a backup: `2026-11-24T16-45-00-123Z.sqlite`, its
 * extension a registered driver's (`sqlite`, `dump`); scheduled ones start
 * with `auto-`. Sortable, safe in any file system.
 */
export function isBackupName(name: string): boolean {
  const match = /^(?:auto-)?\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.([a-z0-9]+)$/.exec(name);
  return match !== null && registeredDrivers().some((driver) => driver.backupExtension === match[1]);
}

/** A new backup's name: its UTC time, `auto-` first when the schedule made it, and the driver's extension. */
export function newBackupName(extension: string, scheduled = false, now = new Date()): string {
  return `${scheduled ? 'auto-' : ''}${fileTime(now)}.${extension}`;
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
    .filter(isBackupName)
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

/** Writes one backup of a running server's storage into `dir`; the file appears whole or not at all. */
async function backupInto(
  dir: string,
  storage: Storage,
  chosen: ChosenStorage,
  scheduled: boolean,
): Promise<BackupEntry> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = newBackupName(chosen.driver.backupExtension, scheduled);
  await writeWhole(join(dir, name), (partial) => chosen.driver.backup(chosen.url, partial, { storage }));
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
  // The driver that opened the storage makes its backups (the URL was checked when the settings were read).
  const chosen = chosenStorage({
    databaseUrl: { value: databaseUrl, source: 'DATABASE_URL' },
    dataDir: { value: dataDir, source: 'the data directory' },
  });
  const interval = options.inWorker ? 0 : options.interval;
  const note = options.inWorker && options.interval > 0 ? noScheduleInWorkers : undefined;
  const dir = backupsDirOf(dataDir);
  let lastFailure: { at: string; message: string } | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  const make = (scheduled: boolean): Promise<BackupEntry> => {
    const made = queue.then(async () => {
      const entry = await backupInto(dir, storage, chosen, scheduled);
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
      if (!isBackupName(name)) return undefined;
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
