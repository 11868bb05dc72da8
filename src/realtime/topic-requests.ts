/**
 * What a client asks of the collections' events, whatever its transport
 * (socket.io's `subscribe` and `unsubscribe` events, or the same over a plain
 * WebSocket's JSON frames): who it is, whether it may, and where in the change
 * log it goes on from.
 */
import { createHash } from 'node:crypto';
import {
  judge,
  type Caller,
  type ChangeLogDriver,
  type createLiveQueries,
  type LogTail,
  type Logger,
  type Topic,
} from '../core/internal.js';
import type { createSubscriptions, Subscriber } from './subscriptions.js';

/**
 * What a client sends to subscribe: a topic's name, `{ topic, since }` to
 * replay what it missed first, or `{ topic, query }` for a live query
 * (with `since`: the seq its result stands at, and `caller`: the stamp of
 * the ack that gave it).
 */
type SubscribeRequest = { topic: string; since?: number; query?: string; caller?: string };

/** A subscribe's argument, read: the request, or what is wrong with it. */
function subscribeRequest(value: unknown): SubscribeRequest | { error: string } {
  if (typeof value === 'string') return { topic: value };
  if (typeof value !== 'object' || value === null || typeof (value as { topic?: unknown }).topic !== 'string')
    return { error: "send a topic's name, or { topic, since }, or { topic, query }" };
  const { topic, since, query, caller } = value as {
    topic: string;
    since?: unknown;
    query?: unknown;
    caller?: unknown;
  };
  if (query !== undefined && typeof query !== 'string')
    return {
      error: `query must be a list's query string (status=open&sort=-due&limit=20), not ${JSON.stringify(query)}`,
    };
  if (since !== undefined && (typeof since !== 'number' || !Number.isSafeInteger(since) || since < 0))
    return {
      error: `since must be the seq of the last event the client has (a whole number, 0 or more), not ${JSON.stringify(since)}`,
    };
  return {
    topic,
    ...(typeof query === 'string' ? { query } : {}),
    ...(since === undefined ? {} : { since: since as number }),
    ...(typeof caller === 'string' ? { caller } : {}),
  };
}

/** How many changes a live query's `since` may look through before it answers a fresh result instead. */
const unchangedScan = 5_000;

/**
 * Whether the log holds no change of `topic` after `since`, to its end (so
 * a result at `since` is still the result, whatever this instance has
 * delivered yet), looking at no more than `unchangedScan` changes; false
 * when it cannot tell (past retention, trimmed meanwhile, too far back, an
 * error).
 */
async function untouched(changes: ChangeLogDriver, topic: string, since: number): Promise<boolean> {
  try {
    const { floor, head } = await changes.bounds(topic);
    if (since < floor || since > head) return false;
    let after = since;
    for (let scanned = 0; scanned < unchangedScan;) {
      const page = await changes.read(after, 500);
      if (page.length === 0) break;
      for (const change of page) {
        if (change.collection === topic) return false;
        after = change.seq;
      }
      scanned += page.length;
    }
    if (after < head) return false;
    // Trimmed while it looked: what it read may have lost changes just after since.
    return (await changes.bounds(topic)).floor <= since;
  } catch {
    return false;
  }
}

/**
 * Who a live query's result was read for, and in what shape (its order and
 * limit), as a stamp the client hands back with `since`: a result kept for
 * one caller is never kept for another, nor kept where the server now keeps
 * it otherwise (a deploy gave the collection another default order).
 */
const resultStamp = (caller: Caller | undefined, shape: { sort: string; limit: number }): string =>
  createHash('sha256')
    .update(
      JSON.stringify([
        caller
          ? [caller.via, caller.id, caller.admin, caller.collection, caller.role, caller.claims]
          : ['nobody'],
        shape.sort,
        shape.limit,
      ]),
    )
    .digest('base64url')
    .slice(0, 16);

/** What a subscribe or unsubscribe names: its topic, or a live query's topic and query (`topic?query`). */
function requestName(given: unknown): string {
  if (typeof given === 'string') return given;
  const { topic, query } = (given ?? {}) as { topic?: unknown; query?: unknown };
  return `${String(topic)}${typeof query === 'string' ? `?${query}` : ''}`;
}

export interface TopicRequestOptions {
  topics: ReadonlyMap<string, Topic>;
  /** Who a subscriber is now, as the app's authenticators say (asked at each subscribe). */
  callerOf: (subscriber: Subscriber) => Promise<Caller | null | undefined>;
  subscriptions: ReturnType<typeof createSubscriptions>;
  /** With the app's change log: where delivery stands, and the log itself (for `since`). */
  tail?: LogTail;
  changes?: ChangeLogDriver;
  live?: ReturnType<typeof createLiveQueries>;
  logger: Logger;
}

export type TopicRequests = ReturnType<typeof createTopicRequests>;

/** How a transport hands its clients' subscribes and unsubscribes over: see the module's comment. */
export function createTopicRequests(options: TopicRequestOptions) {
  const { topics, subscriptions, tail, live } = options;
  const subscribe = async (
    subscriber: Subscriber,
    given: unknown,
    answer: (value: object) => void,
  ): Promise<void> => {
    const request = subscribeRequest(given);
    if ('error' in request) return answer({ ok: false, error: request.error });
    const { topic, since } = request;
    const rules = topics.get(topic);
    if (rules === undefined) {
      return answer({
        ok: false,
        error: `unknown topic ${JSON.stringify(topic)}; topics: ${[...topics.keys()].join(', ')}`,
      });
    }
    let caller: Caller | null | undefined;
    try {
      // Asked again at each subscribe: a revoked session, a disabled user or a new admin token is seen at once.
      caller = await options.callerOf(subscriber);
    } catch (error) {
      // An authenticator that cannot answer now (an identity provider, the database): this subscribe fails, nothing else.
      options.logger.warn(
        { socket: subscriber.id, err: error },
        `realtime: a subscriber's token could not be checked: ${(error as Error).message}`,
      );
      return answer({
        ok: false,
        code: 503,
        error: 'the token cannot be checked right now: try again shortly',
      });
    }
    // It may have left while its token was checked.
    if (!subscriber.connected) return;
    const verdict = judge(rules.list, caller ?? undefined, undefined, rules.ownership, true);
    if (!verdict.allowed) {
      const needs =
        rules.list === 'admin' ? 'the admin token' : 'a signed-in caller (a token of POST /auth/login)';
      const connect = subscriber.credential
        ? 'connect with an Authorization: Bearer header, or send { "event": "auth", "data": { "token" } } first'
        : 'connect with io(url, { auth: { token } })';
      return answer({
        ok: false,
        error:
          caller === null
            ? `the token is not valid (expired or revoked): log in again, then ${connect}`
            : verdict.status === 401
              ? `subscribing to ${String(topic)} needs ${needs}, as reading it over HTTP does: ${connect}`
              : `this caller may not read ${String(topic)}${verdict.reason ? `: ${verdict.reason}` : ''}`,
      });
    }
    if (request.query !== undefined) {
      if (!tail || !live)
        return answer({ ok: false, error: 'this server keeps no change log: live queries need one' });
      const { ack, start, current } = await live.subscribe(
        subscriber,
        caller ?? undefined,
        topic,
        request.query,
        () => tail.position,
      );
      if (!ack.ok) return answer(ack);
      const stamp = resultStamp(caller ?? undefined, ack);
      // A client that has the result as it stood at `since`, for the same caller, and nothing of the topic
      // changed since: it keeps its result, and is not sent it again.
      const kept =
        since !== undefined &&
        request.caller === stamp &&
        options.changes !== undefined &&
        (await untouched(options.changes, topic, since));
      // Replaced (the same query again) or dropped while the log was read: it says nothing more.
      if (current && !current())
        return answer({ ok: false, error: 'subscribed again (or unsubscribed) before this answer' });
      if (kept) {
        const { items: _items, ...rest } = ack;
        answer({ ...rest, caller: stamp, unchanged: true });
      } else answer({ ...ack, caller: stamp });
      start?.();
      return;
    }
    if (!tail || !options.changes) {
      if (since !== undefined)
        return answer({ ok: false, error: 'this server keeps no change log: subscribe without since' });
      subscriptions.subscribe(subscriber, topic, caller ?? undefined);
      return answer({ ok: true, topic });
    }
    // Where the log stands: read before the tail's position, which is taken with no await before the
    // subscription (everything up to it went to the subscribers before this one; what comes after, to it too).
    // The topic's floor: a change of another collection that went is no gap for it.
    const bounds = since === undefined ? undefined : await options.changes.bounds(topic);
    if (!subscriber.connected) return;
    const seq = tail.position;
    if (since !== undefined && bounds && (since < bounds.floor || since > Math.max(bounds.head, seq))) {
      // Past retention, or a seq this log never gave (another database, a restore): never a silent gap.
      subscriptions.subscribe(subscriber, topic, caller ?? undefined, seq);
      return answer({
        ok: true,
        topic,
        seq,
        resync: true,
        // Where the client reads the topic again (null: its resource has no list).
        read: rules.listPath,
        reason:
          since < bounds.floor
            ? `the changes after ${since} are no longer kept (those of ${topic} are kept after ${bounds.floor}): read ${topic} again, then go on from seq ${seq}`
            : `${since} is past the log's last change (${Math.max(bounds.head, seq)}): read ${topic} again, then go on from seq ${seq}`,
      });
    }
    // A client that saw more than this instance has delivered yet (another instance told it first) goes on
    // from what it saw.
    subscriptions.subscribe(subscriber, topic, caller ?? undefined, seq, since);
    answer({ ok: true, topic, seq: Math.max(seq, since ?? 0) });
  };

  /**
   * Each subscriber's requests still under way, by what they name (a topic,
   * or a live query's topic and query): a request waits for the one before
   * it of the same name, so an unsubscribe sent before a subscribe's answer
   * ends that subscription rather than coming first and ending nothing.
   */
  const underWay = new WeakMap<Subscriber, Map<string, Promise<void>>>();
  const inTurn = (subscriber: Subscriber, name: string, work: () => Promise<void> | void): Promise<void> => {
    let names = underWay.get(subscriber);
    const before = names?.get(name);
    // Nothing before it: at once (an unsubscribe within this call).
    const turn = before ? before.then(work) : Promise.resolve(work());
    if (!names) underWay.set(subscriber, (names = new Map()));
    names.set(name, turn);
    void turn.then(() => {
      if (names.get(name) !== turn) return;
      names.delete(name);
      if (names.size === 0) underWay.delete(subscriber);
    });
    return turn;
  };

  return {
    /** Who a subscriber is now (undefined without a token, null when none accepts it). */
    callerOf: options.callerOf,
    /**
     * A subscribe: `answer` is the ack (a refusal says why, the connection
     * stays); a live query's first events go out only after it.
     */
    subscribe(subscriber: Subscriber, given: unknown, answer: (value: object) => void): Promise<void> {
      return inTurn(subscriber, requestName(given), async () => {
        try {
          await subscribe(subscriber, given, answer);
        } catch (error) {
          // The database could not be read (a replay's start, a live query's result): this subscribe fails.
          options.logger.error(
            { socket: subscriber.id, err: error },
            `realtime: a subscribe failed: ${(error as Error).message}`,
          );
          answer({ ok: false, code: 503, error: 'the subscribe failed on the server: try again shortly' });
        }
      });
    },
    /** `unsubscribe`: a topic's name, or `{ topic, query }` for a live query (after that one's subscribes under way). */
    unsubscribe(subscriber: Subscriber, given: unknown): void {
      void inTurn(subscriber, requestName(given), () => {
        if (typeof given === 'string') subscriptions.unsubscribe(subscriber, given);
        const { topic, query } = (given ?? {}) as { topic?: unknown; query?: unknown };
        if (typeof topic === 'string' && typeof query === 'string')
          live?.unsubscribe(subscriber, topic, query);
      });
    },
    /** A subscriber that left. */
    drop(subscriber: Subscriber): void {
      subscriptions.drop(subscriber);
      live?.drop(subscriber);
    },
  };
}
