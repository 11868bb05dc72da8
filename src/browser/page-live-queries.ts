/**
 * Live queries in the page, kept by the same engine as the Node server's
 * (`core/live-queries`): the result is read once, then each change of
 * its topic is applied to it where it can concern it (looked up by the
 * query's equality condition and by the ids in its result), and the query is
 * read again only where the database alone knows the answer (a full result
 * that lost a record). A write costs nothing for the live queries it cannot
 * concern. The page's caller is its one user, as its `fetch` is.
 */
import {
  adminCaller,
  createLiveQueries,
  type ChangeEvent,
  type CollectionDefinition,
  type EventBus,
  type LiveSubscriber,
  type PageLiveAnswer,
  type PageLiveHandlers,
  type Logger,
  type Storage,
  type Topic,
  type Transaction,
} from '../core/internal.js';
import type { LostChanges } from './page-changes.js';

export interface PageLiveOptions {
  topics: ReadonlyMap<string, Topic>;
  collections: readonly CollectionDefinition[];
  storage: Storage;
  events: EventBus;
  /** Topics that lost changes before `events` carried them: their live queries are read again. */
  lost: LostChanges;
  logger: Logger;
  /** Settles once storage is migrated. */
  ready: Promise<void>;
}

/** How long a live query's read may wait for the write lock before the page warns (a transaction holds it). */
export const lockWaitWarnMs = 5_000;

export function createPageLiveQueries(options: PageLiveOptions) {
  const { storage, events } = options;
  type Waiting = {
    read: (scope: Transaction) => Promise<unknown>;
    settle: (value: unknown) => void;
    fail: (error: unknown) => void;
  };
  /** The results to read at the next hold of the write lock: those asked for in one task share it. */
  let waiting: Waiting[] | undefined;
  /**
   * Reads a result holding the write lock (across the page's tabs and its Service Worker): no write comes
   * between the result and the log's head it stands at. One hold for every read asked for in the same task (a
   * change that makes many results read again).
   */
  const committed = <R>(read: (scope: Transaction) => Promise<R>): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      if (!waiting) {
        const reads: Waiting[] = (waiting = []);
        queueMicrotask(() => {
          waiting = undefined;
          // A wait that long is most likely a live query awaited inside a transaction: said once, not ended.
          const slow = setTimeout(
            () =>
              options.logger.warn(
                { waitedMs: lockWaitWarnMs },
                `a live query has waited ${lockWaitWarnMs / 1000} s for the write lock to read its result: a live query awaited inside a transaction or a write hook waits for that transaction's lock for ever; open it outside`,
              ),
            lockWaitWarnMs,
          );
          storage
            .transaction((scope) => {
              clearTimeout(slow);
              return Promise.all(reads.map(({ read, settle, fail }) => read(scope).then(settle, fail)));
            })
            // The lock or the transaction failed (storage closing): each read not settled yet fails with it.
            .catch((error: unknown) => reads.forEach(({ fail }) => fail(error)))
            .finally(() => clearTimeout(slow));
        });
      }
      waiting.push({ read, settle: resolve as (value: unknown) => void, fail: reject });
    });
  const engine = createLiveQueries({ ...options, committed });
  /** How to end each live query that is open. */
  const open = new Set<() => void>();
  let counter = 0;
  /** The seq of the last change event (or the log's head before any): where a result read now stands. */
  let head = 0;
  let unfollow: Array<() => void> | undefined;
  let following: Promise<void> | undefined;
  let closed = false;
  const hear = (event: ChangeEvent): void => {
    if (event.seq !== undefined && event.seq > head) head = event.seq;
    engine.deliver(event);
  };
  /** Hears the change events from now on; the log's head covers what came before (a later event only raises it). */
  const follow = async (): Promise<void> => {
    await options.ready;
    if (closed) return;
    // A query read before changes of its topic went ends with a 503: its caller asks for it again (a fresh read).
    unfollow = [
      events.subscribe(hear),
      options.lost.subscribe(({ topic, floor }) => engine.lost(topic, floor)),
    ];
    const bounds = await storage.changes?.bounds().catch(() => undefined);
    head = Math.max(head, bounds?.head ?? 0);
  };

  return {
    /**
     * Starts a live query of `GET /<topic>?<query>`, with the Node server's rules for one (no paging, a limit up to
     * 100). Its events start in a later task: the caller takes `items` as the answer comes, then hears what follows.
     */
    async live(topic: string, query: string, handlers: PageLiveHandlers): Promise<PageLiveAnswer> {
      const stopped = { ok: false as const, error: 'the in-page server is closed' };
      if (closed) return stopped;
      await (following ??= follow());
      if (closed) return stopped;
      const subscriber: LiveSubscriber = {
        id: `page-live-${++counter}`,
        emit(event, payload, meta) {
          if (!open.has(end)) return;
          if (event === 'berth:error') {
            // The engine has let it go already.
            end();
            return handlers.error(payload as { code?: number; reason: string });
          }
          try {
            // A copy: what the caller does with it never touches the result the engine keeps.
            handlers.event(
              event.slice(topic.length + 1) as 'enter' | 'change' | 'leave',
              structuredClone(payload) as { id: string },
              meta as { seq?: number; more?: boolean },
            );
          } catch (error) {
            // The caller's own failure: reported as the page reports any, and the query goes on.
            setTimeout(() => {
              throw error;
            }, 0);
          }
        },
      };
      const end = (): void => {
        if (open.delete(end)) engine.drop(subscriber);
      };
      open.add(end);
      let started;
      try {
        started = await engine.subscribe(subscriber, adminCaller, topic, query, () => head);
      } catch (error) {
        end();
        throw error;
      }
      const { ack, start } = started;
      if (!ack.ok) {
        end();
        return ack;
      }
      // Its changes start once the caller has taken the result (its continuation runs before this timer).
      if (start) setTimeout(start, 0);
      return {
        ok: true,
        seq: ack.seq,
        items: structuredClone(ack.items) as Array<{ id: string }>,
        close: end,
      };
    },
    /** Ends every live query (the server stops). */
    close(): void {
      closed = true;
      for (const end of [...open]) end();
      unfollow?.forEach((off) => off());
      unfollow = undefined;
    },
  };
}
