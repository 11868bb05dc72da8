/** One backup file. */
export interface BackupEntry {
  name: string;
  bytes: number;
  createdAt: string;
  /** Made by the schedule (and pruned by it), not by hand. */
  scheduled: boolean;
}

/** When backups are made on their own, and how many of those are kept. */
export interface BackupSchedule {
  /** `6h`, `1d`, …; null when there is no schedule. */
  every: string | null;
  keep: number;
  /** Why an interval that is set makes no backups here (a `--workers` worker), and what to do instead. */
  note?: string;
}

/** What `GET /admin/backups` answers. */
export interface BackupList {
  directory: string;
  /** Newest first. */
  backups: BackupEntry[];
  schedule: BackupSchedule;
  /** The last scheduled backup, when it failed; null once one succeeds. */
  lastFailure: { at: string; message: string } | null;
}

/**
 * The backups a runtime makes and keeps, for the admin API. Runtime-free:
 * the Node runtime gives one (SQLite's online backup, `pg_dump`); a runtime
 * without files (the browser) gives none.
 */
export interface Backups {
  list(): Promise<BackupList>;
  /** Makes one now (a name the list then shows). */
  make(): Promise<BackupEntry>;
  /** The bytes of one, or undefined when no backup has this name. */
  open(name: string): Promise<{ body: ReadableStream<Uint8Array>; bytes: number } | undefined>;
}
