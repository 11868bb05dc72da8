/**
 * The in-page server's change events as the page sees them: every change of
 * its database in the log's order, those written by another tab or by the
 * Service Worker on the same database included. As a Node instance follows
 * the log that other instances write to, the page follows its IndexedDB log
 * (`core/log-tail`) from the moment storage is ready: its own writes pass
 * straight through when they are the next change, and a word from another
 * context over a BroadcastChannel makes it read what it has not seen. Every
 * context says that word after its writes (the channel carries no change,
 * only that one happened).
 *
 * Changes can go from the log before the page read them: another context's
 * load without hooks cuts the log, and the cut holds for nobody. The page
 * then says which topics lost one (`lost`), before any later change: never
 * a silent gap. So it does when its storage failed as it started following
 * the log: once it follows, every topic lost what came before.
 */
import {
  EventBus,
  followLog,
  topicsLost,
  type LogTail,
  type Logger,
  type LostTopic,
  type Storage,
} from '../core/internal.js';

/** How often a page that follows the log reads it besides: the bound on a word that was lost. */
const pollMs = 5000;

export interface PageChangesOptions {
  /** The database's name: contexts on the same database hear each other. */
  name: string;
  storage: Storage;
  /** This context's own writes' events (the storage's bus). */
  writes: EventBus;
  logger: Logger;
  /** Settles once storage is migrated. */
  ready: Promise<void>;
  /** The topics whose changes the log keeps (the collections'): those `lost` may name. */
  topics: readonly string[];
  /**
   * A change another context wrote was read from the log: called with its
   * collection before the change is passed on (the storage drops what it
   * keeps in memory of it, which that context's own word may reach later).
   */
  elsewhere?: (collection: string) => void;
}

/** Hears each topic that lost changes from the log before the page heard them, with its last change that went. */
export interface LostTopics {
  subscribe(listener: (lost: { topic: string; floor: number }) => void): () => void;
}

export function followPageChanges(options: PageChangesOptions): {
  events: EventBus;
  lost: LostTopics;
  following: Promise<void>;
  /** Every change up to this seq was passed on (the log's head when the page started following it, or later). */
  position(): number;
  /**
   * This context wrote without change events (a load without hooks, which
   * cuts the log): it reads the log at once, and tells the other contexts
   * to, as after a write.
   */
  changed(): void;
  close(): void;
} {
  const { storage, writes, logger } = options;
  const changes = storage.changes;
  let tail: LogTail | undefined;
  let starting: Promise<void> | undefined;
  /** The last seq passed on before the tail started: it starts at or after it. */
  let passed = 0;
  /**
   * A start failed: until the tail starts, other contexts' changes go unheard, and where the page stood when it
   * failed is unknown. The tail starts at the log's head then, and says every topic lost what came before it.
   */
  let unheard = false;
  /** The next try after a start failed. */
  let retry: ReturnType<typeof setTimeout> | undefined;
  /** Another context said it wrote while the tail was starting. */
  let wordWhileStarting = false;
  /** The seqs of this context's own changes the tail has not passed on yet: any other it passes on is another's. */
  const own = new Set<number>();
  let closed = false;
  const channel =
    changes && typeof BroadcastChannel === 'function'
      ? new BroadcastChannel(`berth-changes:${options.name}`)
      : undefined;

  const start = (): void => {
    if (!changes || tail || starting || closed) return;
    clearTimeout(retry);
    wordWhileStarting = false;
    starting = options.ready
      .then(async () => {
        const { head } = await changes.bounds();
        if (closed) return;
        const from = Math.max(head, passed);
        tail = followLog(
          changes,
          from,
          (event) => {
            if (event.seq === undefined || !own.delete(event.seq)) toldElsewhere(event.topic);
            events.publish(event);
          },
          logger,
          pollMs,
          lostFromLog,
        );
        // Before the tail passes on a change: it reads the log only when poked, or at its poll.
        if (unheard) {
          unheard = false;
          logger.warn(
            { from },
            `the page's change events follow every context's writes again, from ${from}: what other contexts wrote before is unknown to the page, and its subscribers read it again`,
          );
          for (const topic of options.topics) tellLost({ topic, floor: from });
        }
        // A word that came while it started found no tail to poke: it reads what that word was about.
        if (wordWhileStarting) tail.poke();
      })
      .catch((error: unknown) => {
        if (closed) return;
        // Storage that cannot be used now: this context's own events go on as they come; it tries again in a
        // while, and at the next change or word. Said once, until it follows.
        if (!unheard) {
          logger.warn(
            { err: error },
            `the page's change events follow this page's writes only for now: ${(error as Error).message}`,
          );
        }
        unheard = true;
        retry = setTimeout(start, pollMs);
      })
      .finally(() => (starting = undefined));
  };
  /** The storage hears of another context's change; its failure never keeps the change from being passed on. */
  const toldElsewhere = (collection: string): void => {
    try {
      options.elsewhere?.(collection);
    } catch (error) {
      logger.error(
        { topic: collection, err: error },
        `the storage failed to drop what it keeps of ${collection} after another context's change: ${(error as Error)?.message ?? error}`,
      );
    }
  };
  const events = new EventBus();
  const lostListeners = new Set<(lost: LostTopic) => void>();
  /** Changes after `from`, up to `to`, went before the tail read them: each topic that lost one is told, in turn. */
  const lostFromLog = async (from: number, to: number): Promise<void> => {
    for (const seq of own) if (seq <= to) own.delete(seq);
    for (const lost of await topicsLost(changes!, options.topics, from, to)) {
      logger.warn(
        { topic: lost.topic, from, to },
        `changes of ${lost.topic} went from the page's log before the page heard them (up to ${to}): its subscribers read it again`,
      );
      tellLost(lost);
    }
  };
  /** Each listener hears that `lost.topic` lost changes up to `lost.floor`. */
  const tellLost = (lost: LostTopic): void => {
    for (const listener of [...lostListeners]) {
      try {
        listener(lost);
      } catch (error) {
        // A failing listener never keeps the others, or the changes after, from being heard.
        logger.error(
          { topic: lost.topic, err: error },
          `a listener of the page's lost changes threw: ${(error as Error)?.message ?? error}`,
        );
      }
    }
  };
  start();
  /** Settles once the first start is done (following, or failed and waiting for the next change). */
  const following = starting ?? Promise.resolve();

  let telling = false;
  const tell = (): void => {
    telling = false;
    if (!closed) channel!.postMessage('changed');
  };
  const unsubscribe = writes.subscribe((event) => {
    if (tail && event.seq !== undefined) {
      // One the tail read from the log already (its own read came first) was taken for another's: its copy went.
      if (event.seq > tail.position) own.add(event.seq);
      tail.poke(event);
    } else {
      // Not following yet (or an event that is no change of the log): as it comes.
      if (event.seq !== undefined && event.seq > passed) passed = event.seq;
      events.publish(event);
      if (event.seq !== undefined) start();
    }
    // One word for a transaction's writes together.
    if (channel && event.seq !== undefined && !telling) {
      telling = true;
      queueMicrotask(tell);
    }
  });
  const heard = (): void => {
    if (tail) tail.poke();
    else if (starting) wordWhileStarting = true;
    else start();
  };
  channel?.addEventListener('message', heard);
  // A page back from the background or the back-forward cache may have missed a word: it reads what it has not seen.
  const awake = (): void => {
    if (document.visibilityState === 'visible') heard();
  };
  const page = typeof document === 'object' && channel ? document : undefined;
  page?.addEventListener('visibilitychange', awake);
  if (page) globalThis.addEventListener?.('pageshow', awake);

  return {
    events,
    changed() {
      heard();
      if (channel && !closed) channel.postMessage('changed');
    },
    lost: {
      subscribe(listener) {
        lostListeners.add(listener);
        return () => lostListeners.delete(listener);
      },
    },
    following,
    position: () => tail?.position ?? passed,
    close() {
      closed = true;
      clearTimeout(retry);
      lostListeners.clear();
      unsubscribe();
      tail?.stop();
      channel?.removeEventListener('message', heard);
      channel?.close();
      page?.removeEventListener('visibilitychange', awake);
      if (page) globalThis.removeEventListener?.('pageshow', awake);
    },
  };
}
