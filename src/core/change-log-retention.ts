/** Drops the changes the change log no longer keeps: older than its retention, or past its size. */
import type { ChangeLogDriver } from './change-log.js';
import { durationText } from './duration.js';
import type { Logger } from './logger.js';

/** How often the log is trimmed. */
const everyMs = 60_000;
/**
 * The most changes one trim's transaction drops: a trim holds the write lock (PostgreSQL) or the writer
 * (SQLite) while it runs, so a large one goes in steps, each short, with the writes between them; and a
 * step never meets the database's statement timeout, where a whole million would be cancelled every minute.
 */
const defaultStep = 10_000;

export interface LogRetention {
  /** How long a change is kept, in ms (0: until the size says otherwise). */
  retentionMs: number;
  /** The most changes kept. */
  maxChanges: number;
}

const iso = (time: number): string => new Date(time).toISOString();

/**
 * Trims the log once now and then every minute, as the running settings
 * say (a reload applies at the next trim). Every instance and worker may
 * run it: a trim is one transaction, and trimming to where another already
 * did drops nothing.
 *
 * A change older than the retention is dropped. A younger one is dropped
 * only when the log holds more than `maxChanges`, and never one that a
 * subscriber within the retention has not read: one connected to any
 * instance, or one that left less than the retention ago (it may resume).
 * Each process says where its own subscribers stand (`held`) in the
 * database at each trim and once more as it stops (`holdNow`), and the
 * size cut stops at the lowest of every process's holds. A hold stands for
 * the retention: the subscribers of a process that stopped, or crashed,
 * may resume on another within it. A client that resumes from before the
 * floor is told to read again (`resync`), never given a gap. With the
 * retention `off`, the size alone decides.
 */
export function keepChangeLog(
  changes: ChangeLogDriver,
  retention: () => LogRetention,
  logger: Logger,
  options: {
    /** The lowest seq this process's subscribers have read up to, those that left within `withinMs` included. */
    held?: (withinMs: number) => number | undefined;
    now?: () => number;
    /** The most changes one transaction drops (see defaultStep). */
    step?: number;
    /** When the first trim runs (5 s after the start by default: a server's start has other work first). */
    firstAfterMs?: number;
  } = {},
): { trim(): Promise<number>; holdNow(): Promise<void>; stop(): Promise<void> } {
  const now = options.now ?? Date.now;
  const holder = globalThis.crypto.randomUUID();
  let stopped = false;
  /** Whether a hold keeps the log over its size: said when that starts, not at every trim. */
  let keptOver = false;
  /** Writes this process's hold (renewing it for the retention); answers the lowest hold of all, if any. */
  const hold = async (retentionMs: number, at: number): Promise<number | undefined> => {
    if (retentionMs <= 0 || !changes.hold || !changes.held) return undefined;
    await changes.hold(holder, options.held?.(retentionMs) ?? null, iso(at + Math.max(retentionMs, everyMs)));
    return changes.held(iso(at));
  };
  const trim = async (): Promise<number> => {
    const { retentionMs, maxChanges } = retention();
    const at = now();
    const { head, floor } = await changes.bounds();
    const bySize = head - maxChanges;
    const byTime = retentionMs > 0 ? await changes.seqAt(iso(at - retentionMs)) : 0;
    let held: number | undefined;
    try {
      held = await hold(retentionMs, at);
    } catch (error) {
      // Where subscribers stand cannot be known: the size waits, the time does not.
      held = 0;
      logger.warn(
        { err: error },
        `change log: the subscribers' holds could not be read or written, so only the retention's time trims now: ${(error as Error).message}`,
      );
    }
    const cut = Math.max(held === undefined ? bySize : Math.min(bySize, held), byTime);
    const over = held !== undefined && held < bySize && byTime < bySize;
    if (over && !keptOver) {
      logger.info(
        { held, maxChanges },
        `change log: keeping up to ${bySize - Math.max(held!, byTime)} change(s) over ${maxChanges}: a subscriber within the retention (${durationText(retentionMs)}) has read up to seq ${held} only`,
      );
    }
    keptOver = over;
    if (cut <= 0) return 0;
    const step = options.step ?? defaultStep;
    let dropped = 0;
    let reached = Math.min(cut, floor + step);
    for (; ; reached = Math.min(cut, reached + step)) {
      dropped += await changes.trim(reached);
      // Stopped (the process or the page closes): the rest waits for the next start.
      if (reached >= cut || stopped) break;
    }
    if (dropped > 0) {
      logger.info(
        { dropped, floor: reached },
        `change log: dropped ${dropped} change(s) up to seq ${reached} (${cut === byTime ? `older than ${durationText(retentionMs)}` : `over ${maxChanges} changes`}${reached < cut ? `; stopped before seq ${cut}` : ''})`,
      );
    }
    return dropped;
  };
  /** The trim under way: the next minute's waits for none, it is skipped while one runs. */
  let running: Promise<unknown> | undefined;
  const run = (): void => {
    running ??= trim()
      .catch((error: unknown) =>
        logger.warn(
          { err: error },
          `change log: trimming failed, it is tried again in a minute: ${(error as Error).message}`,
        ),
      )
      .finally(() => (running = undefined));
  };
  const first = setTimeout(run, options.firstAfterMs ?? 5000);
  const timer = setInterval(run, everyMs);
  // A Node.js process does not stay up for them; a browser's timers are numbers, with nothing to unref.
  (first as { unref?: () => void }).unref?.();
  (timer as { unref?: () => void }).unref?.();
  return {
    trim,
    /** Writes this process's hold now: as it stops, once its subscribers have left (they may resume elsewhere). */
    async holdNow() {
      try {
        await hold(retention().retentionMs, now());
      } catch (error) {
        logger.warn(
          { err: error },
          `change log: this process's subscribers' hold could not be written: ${(error as Error).message}`,
        );
      }
    },
    /** No more trims; answers once the one under way, if any, has ended its step (its storage may then close). */
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
