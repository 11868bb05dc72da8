import type {
  Client,
  ClientProblem,
  ClientRecord,
  ClientSocket,
  FetchPath,
  LiveQuery,
  RecordChange,
  SubscriptionHandlers,
} from './client-types.js';
import { createLiveEntry, type LiveEntry } from './live-entry.js';
import type { LiveAction } from './live-result.js';
import { resyncOf } from './read-collection.js';
import { keepSubscribed, refusalOf, retryLater, socketLink, type SubscribeAck } from './socket-link.js';
import { createTopicFeed, subscriberOf, type TopicFeed } from './topic-feed.js';

/** How long a subscribe's answer may take before it is asked again. */
const defaultAckTimeout = 10_000;

const changeActions: ReadonlyArray<RecordChange<unknown>['action']> = ['created', 'updated', 'deleted'];
const liveActions: readonly LiveAction[] = ['enter', 'change', 'leave'];

/** What `berth:error` says: the server ends the connection, a topic's subscription, or one live query. */
interface Closing {
  code?: number;
  reason?: string;
  topic?: string;
  query?: string;
}

/** The meta an event carries: its seq, and for a live query's event the query string (and `more`, `after`). */
type EventMeta = { seq?: number; query?: string; more?: boolean; after?: string | null } | undefined;

type Plain = { feed: TopicFeed<ClientRecord>; end(problem?: ClientProblem): void; again(): void };
type Live = {
  topic: string;
  query: string;
  entry: LiveEntry<ClientRecord>;
  apply(
    action: LiveAction,
    record: ClientRecord,
    seq: number | undefined,
    more: boolean,
    after: string | null | undefined,
  ): void;
  end(problem?: ClientProblem): void;
  again(): void;
};

/** The client over a socket.io-client socket: see `createClient`. */
export function socketClient(options: {
  socket: ClientSocket;
  fetch?: FetchPath;
  ackTimeout?: number;
}): Client {
  const link = socketLink(options.socket, options.ackTimeout ?? defaultAckTimeout);
  const plain = new Map<string, Plain>();
  const live = new Map<string, Live>();
  /** Per topic with live queries: the listeners of its enter, change and leave events. */
  const liveTopics = new Map<string, () => void>();
  const liveKey = (topic: string, query: string): string => `${topic}?${query}`;

  const openPlain = (topic: string): Plain => {
    const feed = createTopicFeed<ClientRecord>(topic);
    const offs = changeActions.map((action) =>
      link.on(`${topic}:${action}`, (record: ClientRecord, meta: EventMeta) =>
        standing.receive(() => feed.change(action, record, meta?.seq), meta?.seq),
      ),
    );
    const { fetch } = options;
    const standing = keepSubscribed(link, {
      request: () => (feed.last === undefined ? topic : { topic, since: feed.last }),
      unsubscribe: topic,
      unavailable: (reason) => feed.problem({ topic, code: 503, reason }),
      startBefore(lowestHeld) {
        if (feed.last !== undefined) return false;
        feed.startAt(lowestHeld - 1);
        return true;
      },
      answered(ack: SubscribeAck) {
        if (!ack.ok) return entry.end({ topic, reason: refusalOf(ack) });
        if (ack.resync) {
          const { reason, reread } = resyncOf<ClientRecord>(
            fetch,
            topic,
            ack.read,
            ack.reason ?? `read ${topic} again`,
          );
          feed.resync(ack.seq, reason, reread);
        } else feed.startAt(ack.seq);
      },
    });
    const entry: Plain = {
      feed,
      again: standing.again,
      end(problem) {
        if (plain.get(topic) !== entry) return;
        plain.delete(topic);
        offs.forEach((off) => off());
        standing.stop();
        if (problem) feed.problem(problem);
      },
    };
    plain.set(topic, entry);
    return entry;
  };

  /** Hands a topic's live events to the query they name. */
  const followLiveTopic = (topic: string): void => {
    if (liveTopics.has(topic)) return;
    const offs = liveActions.map((action) =>
      link.on(`${topic}:${action}`, (record: ClientRecord, meta: EventMeta) => {
        if (typeof meta?.query === 'string')
          live
            .get(liveKey(topic, meta.query))
            ?.apply(action, record, meta.seq, meta.more === true, meta.after);
      }),
    );
    liveTopics.set(topic, () => offs.forEach((off) => off()));
  };

  const openLive = (topic: string, query: string): Live => {
    const key = liveKey(topic, query);
    // Its own subscription ends with its last handle, never a newer one of the same query.
    const entry = createLiveEntry<ClientRecord>(topic, query, () => subscription.end());
    /** The server's stamp of the caller its result was read for. */
    let readFor: string | undefined;
    const standing = keepSubscribed(link, {
      // With a result already, its seq and whom it was read for: the server answers `unchanged` when that
      // caller is still the one asking and nothing of the topic changed since.
      request: () =>
        entry.seq === undefined || readFor === undefined
          ? { topic, query }
          : { topic, query, since: entry.seq, caller: readFor },
      unsubscribe: { topic, query },
      unavailable: (reason) => entry.problem({ topic, query, code: 503, reason }),
      answered(ack: SubscribeAck) {
        if (!ack.ok) return subscription.end({ topic, query, reason: refusalOf(ack) });
        readFor = typeof ack.caller === 'string' ? ack.caller : undefined;
        // Unchanged: the same caller, order and limit (the stamp says so), and nothing of the topic since.
        if (ack.unchanged && entry.seq !== undefined) entry.keep(ack.seq);
        else entry.snapshot((ack.items ?? []) as ClientRecord[], ack.seq, ack);
      },
    });
    const subscription: Live = {
      topic,
      query,
      entry,
      again: standing.again,
      apply: (action, record, seq, more, after) =>
        standing.receive(() => entry.apply(action, record, seq, more, after)),
      end(problem) {
        if (live.get(key) !== subscription) return;
        live.delete(key);
        standing.stop();
        if (![...live.keys()].some((other) => other.startsWith(`${topic}?`))) {
          liveTopics.get(topic)?.();
          liveTopics.delete(topic);
        }
        // With no problem: the client's close, or its last handle's (which said so to `ready` already).
        if (problem) entry.problem(problem);
        else entry.closed();
      },
    };
    live.set(key, subscription);
    followLiveTopic(topic);
    return subscription;
  };

  const offClosing = link.on('berth:error', (closing: Closing | undefined) => {
    const problem = {
      reason: closing?.reason ?? 'the server ended it',
      ...(closing?.code ? { code: closing.code } : {}),
    };
    const { topic, query } = closing ?? {};
    if (topic === undefined) {
      // The connection ends: each subscription hears why, and stands again if the socket connects again.
      for (const { feed } of plain.values()) feed.problem({ topic: feed.topic, ...problem });
      for (const { entry, topic, query } of live.values()) entry.problem({ topic, query, ...problem });
      return;
    }
    // One live query (it names its query), or a topic's subscription; 503: the server could not go on and
    // says to subscribe again; any other code ends it.
    const ended = query === undefined ? plain.get(topic) : live.get(liveKey(topic, query));
    if (closing?.code === 503) ended?.again();
    else ended?.end({ topic, ...(query === undefined ? {} : { query }), ...problem });
  });

  // A connection refused by one of the server's limits (503: too many from this address, or in all) is tried
  // again after a while, as over the events WebSocket: socket.io's client does not, after a refusal.
  const { socket } = options;
  const refused = retryLater();
  const offRefused = link.on('connect_error', (error: { data?: { code?: unknown } } | undefined) => {
    if (error?.data?.code !== 503 || socket.active !== false || !socket.connect) return;
    refused.later(() => void (socket.active === false && socket.connect?.()));
  });
  const offConnected = link.on('connect', () => refused.reset());

  return {
    subscribe(topic, handlers) {
      const entry = plain.get(topic) ?? openPlain(topic);
      const subscriber = subscriberOf(handlers as SubscriptionHandlers<ClientRecord>);
      entry.feed.subscribers.add(subscriber);
      return () => {
        if (entry.feed.subscribers.delete(subscriber) && entry.feed.subscribers.size === 0) entry.end();
      };
    },
    live(topic, query = '', liveOptions = {}) {
      const { entry } = live.get(liveKey(topic, query)) ?? openLive(topic, query);
      return entry.open(liveOptions) as LiveQuery<never>;
    },
    close() {
      offClosing();
      offRefused();
      offConnected();
      refused.cancel();
      for (const each of [...plain.values(), ...live.values()]) each.end();
    },
  };
}
