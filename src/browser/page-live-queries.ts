/**
 * Live queries in the page, kept by the same engine as the Node server's
 * (`core/live-queries`): the result is read once, then each change of
 * its topic is applied to it where it can concern it (looked up by the
 * query's equality condition and by the ids in its result), and the query is
 * read again only where the database alone knows the answer (a full result
 * that lost a record). A write costs nothing for the live queries it cannot
 * concern. The page's caller is its one user, as its `fetch` is.
 *
 * A result is read as the Node server reads one, without the write lock: the
 * page's reads answer what is committed (a transaction's writes only once it
 * ends, in this tab or another), and a change that comes while the result is
 * read is applied to it after. So on IndexedDB a live query asked inside a
 * transaction answers at once, and one asked during a long transaction (an
 * import) does not wait for its end. A storage whose reads wait for a running
 * transaction (SQLite in memory: one connection) waits there.
 */
import {
  adminCaller,
  createLiveQueries,
  type CollectionDefinition,
  type EventBus,
  type LiveSubscriber,
  type PageLiveAnswer,
  type PageLiveHandlers,
  type Logger,
  type Storage,
  type Topic,
} from '../core/internal.js';
import type { LostTopics } from './page-changes.js';

export interface PageLiveOptions {
  topics: ReadonlyMap<string, Topic>;
  collections: readonly CollectionDefinition[];
  storage: Storage;
  events: EventBus;
  /** Topics that lost changes before `events` carried them: their live queries are read again. */
  lost: LostTopics;
  /** Where a result read now stands: every change up to this seq was passed on by `events` (set before each). */
  position: () => number;
  logger: Logger;
  /** Settles once storage is migrated. */
  ready: Promise<void>;
}

/** How long a live query's first read may take before the page warns that it waits (for a transaction's end). */
export const readWaitWarnMs = 5_000;

export function createPageLiveQueries(options: PageLiveOptions) {
  const { events } = options;
  const engine = createLiveQueries(options);
  /** How to end each live query that is open. */
  const open = new Set<() => void>();
  let counter = 0;
  let unfollow: Array<() => void> | undefined;
  let following: Promise<void> | undefined;
  let closed = false;
  /**
   * Hears the change events from now on; `position` says where they stand (not the log's bounds, which wait for
   * the write lock that a transaction asking for a live query holds).
   */
  const follow = async (): Promise<void> => {
    await options.ready;
    if (closed) return;
    // A query read before changes of its topic went ends with a 503: its caller asks for it again (a fresh read).
    unfollow = [
      events.subscribe((event) => engine.deliver(event)),
      options.lost.subscribe(({ topic, floor }) => engine.lost(topic, floor)),
    ];
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
              meta as { seq?: number; more?: boolean; after?: string | null },
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
      // Said, not ended: a read that waits that long most likely waits for the transaction that asked for it.
      const slow = setTimeout(
        () =>
          options.logger.warn(
            { topic, query, waitedMs: readWaitWarnMs },
            `a live query has waited ${readWaitWarnMs / 1000} s to read its result: this storage reads it once a running transaction ends (SQLite in memory has one connection), so one asked inside that transaction or a write hook waits for ever; ask for it outside`,
          ),
        readWaitWarnMs,
      );
      try {
        started = await engine.subscribe(subscriber, adminCaller, topic, query, options.position);
      } catch (error) {
        end();
        // Its read failed (an IndexedDB abort, another tab's upgrade): as the Node server answers it, 503, to ask
        // again; the query itself was not refused.
        options.logger.warn({ topic, query, err: error }, `a live query of ${topic} could not be read`);
        return {
          ok: false,
          code: 503,
          error: `its result could not be read: ${(error as Error)?.message ?? error}`,
        };
      } finally {
        clearTimeout(slow);
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
        sort: ack.sort,
        limit: ack.limit,
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
