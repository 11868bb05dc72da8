/** Follows the app's change log and hands each change on once, in the log's order. */
import type { ChangeEvent } from './events.js';
import type { ChangeLogDriver } from './change-log.js';
import type { Logger } from './logger.js';

/** How many changes one read of the log takes. */
const pageSize = 500;
/**
 * How often a poll that finds nothing asks the log's floor (whether changes
 * went unread): not at every idle poll. A poke that finds nothing asks at
 * once (something was written), and so does a read whose first change is
 * not the next seq.
 */
const emptyCheckMs = 5_000;

export interface LogTail {
  /** Where it stands: every change up to this seq was handed on. */
  readonly position: number;
  /**
   * A change committed somewhere: this instance's own (its event, with its
   * seq), or another's (a poke, no event). The tail reads the log from its
   * position unless the event is the very next change.
   */
  poke(event?: ChangeEvent): void;
  /** Resolves once every change poked so far was handed on (tests, shutdown). */
  settled(): Promise<void>;
  stop(): void;
}

/**
 * The changes of every instance writing to the database, in one order for
 * every subscriber of this one: the log's. This instance's own writes are
 * poked by their events, other instances' by a message (through the
 * adapter on Node, a BroadcastChannel between a page's tabs), and a timer
 * reads the log every `pollMs` besides (none at 0), so a poke lost with
 * Redis or a worker costs a delay, never an event.
 */
export function followLog(
  changes: ChangeLogDriver,
  start: number,
  deliver: (event: ChangeEvent) => void,
  logger: Logger,
  pollMs = 1000,
  /**
   * Changes after its position went from the log before it read them (a
   * cut of `berth import`, which holds for nobody): those up to `to`. The
   * tail goes on after `to` once this settles; whoever missed a change of
   * theirs must be told (never a silent gap).
   */
  onGap?: (from: number, to: number) => Promise<void> | void,
): LogTail {
  let position = start;
  let emptyCheckedAt = 0;
  /** Poked (a change was written) since the last read began. */
  let poked = false;
  let reading: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const read = async (): Promise<void> => {
    do {
      again = false;
      let page;
      do {
        const afterPoke = poked;
        poked = false;
        page = await changes.read(position, pageSize);
        // Not the next seq (or nothing): seqs a rolled-back transaction drew, or changes that went unread.
        const first = page[0]?.seq;
        let unread = first !== undefined && first > position + 1;
        if (onGap && first === undefined && (afterPoke || Date.now() - emptyCheckedAt >= emptyCheckMs)) {
          emptyCheckedAt = Date.now();
          unread = true;
        }
        if (onGap && unread) {
          const { floor } = await changes.bounds();
          const to = first === undefined ? floor : Math.min(floor, first - 1);
          if (to > position && !stopped) {
            const from = position;
            position = to;
            await onGap(from, to);
          }
        }
        for (const change of page) {
          if (stopped) return;
          position = change.seq;
          deliver({
            topic: change.collection,
            action: change.action,
            record: change.record as ChangeEvent['record'],
            seq: change.seq,
          });
        }
      } while (page.length === pageSize);
    } while (again && !stopped);
  };
  const drain = (): void => {
    if (stopped) return;
    if (reading) {
      again = true;
      return;
    }
    reading = read()
      .catch((error: unknown) =>
        // Stopped meanwhile (its storage closing): nothing to read again.
        stopped
          ? undefined
          : logger.warn(
              { err: error },
              `realtime: reading the change log failed; the next poke reads again: ${(error as Error).message}`,
            ),
      )
      .finally(() => {
        reading = undefined;
        if (again) drain();
      });
  };
  const timer = pollMs > 0 ? setInterval(drain, pollMs) : undefined;
  (timer as { unref?: () => void } | undefined)?.unref?.();
  return {
    get position() {
      return position;
    },
    poke(event) {
      // The next change, and nothing being read: no read of the log needed.
      if (!reading && event?.seq === position + 1) {
        position = event.seq;
        deliver(event);
        return;
      }
      poked = true;
      drain();
    },
    async settled() {
      while (reading) await reading;
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/** A topic that lost changes from the log before they were handed on: its last change that went. */
export interface LostTopic {
  topic: string;
  floor: number;
}

/**
 * Of `topics`, those that lost a change after `from` (the changes up to
 * `to` went unread: `followLog`'s `onGap`), each with its floor: its last
 * change that went (the log's where the driver keeps none per collection,
 * or cannot answer). A topic whose floor is at or below `from` lost none.
 */
export async function topicsLost(
  changes: ChangeLogDriver,
  topics: Iterable<string>,
  from: number,
  to: number,
): Promise<LostTopic[]> {
  const lost: LostTopic[] = [];
  for (const topic of new Set(topics)) {
    const floor = await changes.bounds(topic).then(
      ({ floor }) => floor,
      () => to,
    );
    if (floor > from) lost.push({ topic, floor });
  }
  return lost;
}
