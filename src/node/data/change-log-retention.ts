/** Drops the changes the change log no longer keeps: older than its retention, or past its size. */
import { durationText, type ChangeLogDriver, type Logger } from '../../core/internal.js';

/** How often the log is trimmed. */
const everyMs = 60_000;

export interface LogRetention {
  /** How long a change is kept, in ms (0: until the size says otherwise). */
  retentionMs: number;
  /** The most changes kept. */
  maxChanges: number;
}

/**
 * Trims the log once now and then every minute, as the running settings
 * say (a reload applies at the next trim). Every instance and worker may
 * run it: a trim is one transaction, and trimming to where another already
 * did drops nothing. A change younger than the retention is dropped only
 * when the log holds more than `maxChanges`; a client that resumes from
 * before the floor is told to read again (`resync`), never given a gap.
 */
export function keepChangeLog(
  changes: ChangeLogDriver,
  retention: () => LogRetention,
  logger: Logger,
  now: () => number = Date.now,
): { trim(): Promise<number>; stop(): void } {
  const trim = async (): Promise<number> => {
    const { retentionMs, maxChanges } = retention();
    const { head } = await changes.bounds();
    const bySize = head - maxChanges;
    const byTime = retentionMs > 0 ? await changes.seqAt(new Date(now() - retentionMs).toISOString()) : 0;
    const cut = Math.max(bySize, byTime);
    if (cut <= 0) return 0;
    const dropped = await changes.trim(cut);
    if (dropped > 0) {
      logger.info(
        { dropped, floor: cut },
        `change log: dropped ${dropped} change(s) up to seq ${cut} (${cut === byTime ? `older than ${durationText(retentionMs)}` : `over ${maxChanges} changes`})`,
      );
    }
    return dropped;
  };
  const run = (): void => {
    trim().catch((error: unknown) =>
      logger.warn(
        { err: error },
        `change log: trimming failed, it is tried again in a minute: ${(error as Error).message}`,
      ),
    );
  };
  const first = setTimeout(run, 5000);
  const timer = setInterval(run, everyMs);
  first.unref();
  timer.unref();
  return {
    trim,
    stop() {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
