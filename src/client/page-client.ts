import type {
  Client,
  ClientRecord,
  LiveQuery,
  PageChangeEvent,
  PageServer,
  SubscriptionHandlers,
} from './client-types.js';
import { createLiveEntry, type LiveEntry } from './live-entry.js';
import { resyncOf } from './read-collection.js';
import { refusalOf, retryLater, type SubscribeAck } from './socket-link.js';
import { createTopicFeed, subscriberOf, type TopicFeed } from './topic-feed.js';

type Live = { entry: LiveEntry<ClientRecord>; end(): void };

/**
 * The client of an in-page server (berth/browser): subscriptions follow its
 * change events, in seq order; a live query is kept by the server's own
 * engine (`server.live`), as the Node server keeps one: its result, then
 * what enters, changes within and leaves it.
 */
export function pageClient(server: PageServer): Client {
  const feeds = new Map<string, TopicFeed<ClientRecord>>();
  const lives = new Map<string, Live>();
  let unfollow: Array<() => unknown> | undefined;

  const onEvent = (event: PageChangeEvent): void => {
    feeds.get(event.topic)?.change(event.action, event.record as ClientRecord, event.seq);
  };
  /** Changes of a topic up to `floor` went before the server's events carried them: its subscribers resync. */
  const onLost = ({ topic, floor, read }: { topic: string; floor: number; read?: string | null }): void => {
    const { reason, reread } = resyncOf<ClientRecord>(
      server.fetch,
      topic,
      read,
      `changes of ${topic} went unheard by this page (records loaded without hooks, or its storage failed as it started following the log): read ${topic} again`,
    );
    feeds.get(topic)?.resync(floor, reason, reread);
  };
  const follow = (): void => {
    unfollow ??= [server.events.subscribe(onEvent), ...(server.lost ? [server.lost.subscribe(onLost)] : [])];
  };
  const unfollowWhenIdle = (): void => {
    if (feeds.size) return;
    unfollow?.forEach((off) => off());
    unfollow = undefined;
  };

  const openLive = (topic: string, query: string): Live => {
    const key = `${topic}?${query}`;
    const entry = createLiveEntry<ClientRecord>(topic, query, () => live.end());
    let ended = false;
    let closeOnServer: (() => void) | undefined;
    /** After a read that failed: asking again later. */
    const retry = retryLater();
    const fail = (reason: string, code?: number): void => {
      entry.problem({ topic, query, reason, ...(code === undefined ? {} : { code }) });
      live.end();
    };
    const live: Live = {
      entry,
      end() {
        if (ended) return;
        ended = true;
        if (lives.get(key) === live) lives.delete(key);
        retry.cancel();
        closeOnServer?.();
        entry.closed(); // a first result no longer comes (a refusal or its last handle said so already)
      },
    };
    lives.set(key, live);
    let attempt = 0;
    const start = (): void => {
      const mine = ++attempt;
      const stale = (): boolean => mine !== attempt;
      server
        .live(topic, query, {
          event: (action, record, { seq, more, after }) =>
            stale() ? undefined : entry.apply(action, record as ClientRecord, seq, more === true, after),
          // 503: the server could not go on (changes of its topic went before they were applied) and ended it;
          // it is asked for again, and its fresh result replaces this one.
          error: ({ reason, code }) =>
            stale() ? undefined : code === 503 && !ended ? start() : fail(reason, code),
        })
        .then(
          (answer) => {
            if (ended || stale()) return answer.ok && answer.close();
            if (!answer.ok && answer.code === 503) {
              // Its read failed, not the query: asked again later, as over a socket; `ready` waits for it.
              entry.problem({ topic, query, code: 503, reason: answer.error });
              retry.later(start);
              return;
            }
            if (!answer.ok) return fail(refusalOf(answer as SubscribeAck));
            closeOnServer = answer.close;
            retry.reset();
            entry.snapshot(answer.items as ClientRecord[], answer.seq, answer);
          },
          // The page's server cannot answer at all (its storage never opened): nothing to ask again.
          (error: unknown) => (stale() ? undefined : fail((error as Error)?.message ?? String(error))),
        );
    };
    start();
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
      const { entry } = lives.get(`${topic}?${query}`) ?? openLive(topic, query);
      return entry.open(options) as LiveQuery<never>;
    },
    close() {
      for (const live of [...lives.values()]) live.end();
      feeds.clear();
      unfollowWhenIdle();
    },
  };
}
