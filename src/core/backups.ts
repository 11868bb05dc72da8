import { z } from 'zod';

/** One backup file. */
export const BackupEntrySchema = z.object({
  name: z.string(),
  bytes: z.number().int(),
  createdAt: z.string().describe('ISO 8601'),
  scheduled: z.boolean().describe('Made by the schedule (which keeps the newest few), not by hand'),
});
export type BackupEntry = z.infer<typeof BackupEntrySchema>;

/** When backups are made on their own, and how many of those are kept. */
export const BackupScheduleSchema = z.object({
  every: z.string().nullable().describe('`6h`, `1d`, …; null when there is no schedule'),
  keep: z.number().int(),
  note: z
    .string()
    .optional()
    .describe('Why an interval that is set makes no backups here (a `--workers` worker), and what to do'),
});
export type BackupSchedule = z.infer<typeof BackupScheduleSchema>;

/** What `GET /admin/backups` answers. */
export const BackupListSchema = z.object({
  directory: z.string(),
  /** Newest first. */
  backups: z.array(BackupEntrySchema),
  schedule: BackupScheduleSchema,
  /** The last scheduled backup, when it failed; null once one succeeds. */
  lastFailure: z.object({ at: z.string(), message: z.string() }).nullable(),
});
export type BackupList = z.infer<typeof BackupListSchema>;

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
