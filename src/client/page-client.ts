import type {
  Client,
  ClientRecord,
  LiveQuery,
  PageChangeEvent,
  PageServer,
  SubscriptionHandlers,
} from './client-types.js';
import { createLiveEntry, type LiveEntry } from './live-entry.js';
import { readQuery } from './read-collection.js';
import { createTopicFeed, subscriberOf, type TopicFeed } from './topic-feed.js';

type Live = { topic: string; entry: LiveEntry<ClientRecord>; stale(): void; end(): void };

/**
 * The client of an in-page server (berth/browser): subscriptions follow its
 * change events, in seq order; a live query reads `GET /<topic>?<query>`
 * again after each change of its topic (reads coalesce: one at a time, and
 * one more after it when changes came meanwhile).
 */
export function pageClient(server: PageServer): Client {
  const feeds = new Map<string, TopicFeed<ClientRecord>>();
  const lives = new Map<string, Live>();
  /** The highest seq the server's events have shown. */
  let seen: number | undefined;
  let unfollow: (() => unknown) | undefined;

  const onEvent = (event: PageChangeEvent): void => {
    if (event.seq !== undefined) seen = Math.max(seen ?? event.seq, event.seq);
    feeds.get(event.topic)?.change(event.action, event.record as ClientRecord, event.seq);
    for (const live of lives.values()) if (live.topic === event.topic) live.stale();
  };
  const follow = (): void => {
    unfollow ??= server.events.subscribe(onEvent);
  };
  const unfollowWhenIdle = (): void => {
    if (feeds.size || lives.size) return;
    unfollow?.();
    unfollow = undefined;
  };

  /** Where the log stands: the last event's seq, or the log's head before any. */
  const position = async (): Promise<number | undefined> =>
    seen ?? (await server.storage?.changes?.bounds().catch(() => undefined))?.head;

  const openLive = (topic: string, query: string, sort: string | undefined): Live => {
    const key = `${topic}?${query}`;
    const entry = createLiveEntry<ClientRecord>(topic, query, sort, () => live.end());
    let reading = false;
    let again = false;
    let ended = false;
    const read = async (): Promise<void> => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const at = await position();
          const items = await readQuery<ClientRecord>(server.fetch.bind(server), topic, query);
          if (ended) return;
          entry.snapshot(items, at);
        } while (again && !ended);
      } catch (error) {
        const status = (error as { status?: number }).status;
        entry.problem({
          topic,
          query,
          reason: (error as Error).message,
          ...(status ? { code: status } : {}),
        });
        // A query the server refuses (400, 403…) is refused again at every change: it ends.
        if (status !== undefined && status < 500) live.end();
      } finally {
        reading = false;
      }
    };
    const live: Live = {
      topic,
      entry,
      stale: () => void read(),
      end() {
        if (lives.get(key) !== live) return;
        ended = true;
        lives.delete(key);
        unfollowWhenIdle();
      },
    };
    lives.set(key, live);
    follow();
    void read();
    return live;
  };

  return {
    subscribe(topic, handlers) {
      let feed = feeds.get(topic);
      if (!feed) feeds.set(topic, (feed = createTopicFeed<ClientRecord>(topic)));
      follow();
      const subscriber = subscriberOf(handlers as SubscriptionHandlers<ClientRecord>);
      feed.subscribers.add(subscriber);
      const mine = feed;
      return () => {
        if (!mine.subscribers.delete(subscriber) || mine.subscribers.size > 0) return;
        if (feeds.get(topic) === mine) feeds.delete(topic);
        unfollowWhenIdle();
      };
    },
    live(topic, query = '', options = {}) {
      const { entry } = lives.get(`${topic}?${query}`) ?? openLive(topic, query, options.sort);
      return entry.open(options) as LiveQuery<never>;
    },
    close() {
      for (const live of [...lives.values()]) live.end();
      feeds.clear();
      unfollowWhenIdle();
    },
  };
}
