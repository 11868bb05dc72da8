import type { SubscriberEntry } from './monitor.js';
import { DepartedPositions } from './departed.js';
import {
  judge,
  type Authenticator,
  type Caller,
  type ChangeEvent,
  type ChangeLogDriver,
  type Logger,
  type Topic,
  type TokenCredential,
} from '../core/internal.js';

/**
 * A client that subscribes: a socket.io socket, or a plain WebSocket at
 * `/{realtimePath}/events` (which carries each event as one JSON frame).
 */
export interface Subscriber {
  readonly id: string;
  readonly connected: boolean;
  emit(event: string, ...args: unknown[]): unknown;
  /** Ends its connection, after what it was sent. */
  disconnect(close: true): unknown;
  /** A plain WebSocket's token, as its connection gave it (a socket.io socket's is in its handshake). */
  credential?(): TokenCredential | undefined;
  /** A plain WebSocket sends an event's frame as it is: one frame, encoded once, for many subscribers. */
  sendFrame?(frame: string): void;
  /** A socket.io socket joins its topics' rooms (`topicRoom`), so an event to all of them is one broadcast. */
  join?(room: string): unknown;
  leave?(room: string): unknown;
}

/** The socket.io room of a topic's socket.io subscribers: a name no channel's room has (theirs start with the channel's name). */
export const topicRoom = (topic: string): string => `\u0000berth-topic\u0000${topic}`;

/** An event as one frame of the plain WebSocket transport: its name and its arguments. */
export const eventFrame = (event: string, args: readonly unknown[]): string =>
  JSON.stringify({ event, data: args });

/** The event a client receives, with `{ code, reason }`, when the server ends its connection or its subscriptions. */
export const closingEvent = 'berth:error';

/**
 * How long a subscriber's caller is trusted before its token is checked
 * again. That check runs in the background, spread over time: events go on
 * to the caller as last checked while it runs.
 */
export const recheckAfterMs = 60_000;

/** How many background checks run at once. */
const checksAtOnce = 8;

export interface SubscriptionOptions {
  topics: ReadonlyMap<string, Topic>;
  /** The app's authenticators: those that say which changes affect their callers. */
  authenticators: readonly Authenticator[];
  /** Who a socket's handshake token is now: undefined without a token, null when none accepts it. */
  callerOf: (socket: Subscriber) => Promise<Caller | null | undefined>;
  logger: Logger;
  /** Defaults to `recheckAfterMs`. */
  recheckAfterMs?: number;
  /** The app's change log, which a subscriber that resumes replays from. */
  changes?: ChangeLogDriver;
  /**
   * With a log that keeps each collection's floor: the seq this process's
   * delivery began after, and where it stands now (every change up to it
   * was delivered). A subscriber that was sent its topic's last change
   * since then has every change of that topic up to there: a quiet topic
   * holds the log no further back than that.
   */
  following?: { readonly from: number; position(): number };
  /**
   * Sends one event to these sockets of this process (subscribers of
   * `topic`), encoded once: socket.io's broadcast to the topic's room when
   * they are all of its sockets, else to their own rooms; absent: each is
   * sent its own.
   */
  broadcast?: (sockets: readonly Subscriber[], topic: string, event: string, ...args: unknown[]) => void;
}

/** How many changes one read of a replay takes. */
const replayPage = 500;

/** A subscribed socket: who it is, when that was checked, its topics, and the work waiting on a check. */
interface Standing {
  caller: Caller | undefined;
  checkedAt: number;
  generation: number;
  stale: boolean;
  /** How many times something said its caller changed: a check that began before the last one is not taken. */
  told: number;
  /**
   * Its topics, each with the seq up to which it was given their changes (with the log; -1 before any): the
   * last one sent, or its subscribe's, or where its replay ended. Nothing at or before it is sent again.
   * One map for both: a server keeps one per subscriber.
   */
  topics: Map<string, number>;
  /**
   * Its topics whose client has less than their seq above: the seq of the last event it was sent (or of its
   * subscribe's answer) once a change since was one its caller may not read. Most subscribers never have one.
   */
  behind: Map<string, number> | undefined;
  /**
   * What its client had (`known`) at the last ask for holds, and at the one before (about a minute
   * earlier): a dead connection not yet noticed (up to the ping timeout) may have lost what was sent
   * since, so a hold reaches no further than the older.
   */
  seen: number;
  seenBefore: number;
  queue: Promise<void> | undefined;
  /** A background check of its token is under way. */
  checking: boolean;
}

/**
 * The change events of the collections, to the sockets that subscribed and
 * may read each record, as each may see it. A subscriber's caller is
 * checked again (its token, through the authenticators) before it gets
 * another event when an authenticator says a change affects it (its user
 * changed, its session ended), when credentials were reloaded, or when its
 * session expired. Besides, every caller is checked again in the background
 * about every `recheckAfterMs` — the bound on how late another instance's
 * revocation is seen when no adapter carries events between them — a few
 * at a time, never holding up an event. A token no longer valid disconnects
 * its socket, saying why; a caller who may no longer list a topic is
 * unsubscribed from it.
 */
export function createSubscriptions(options: SubscriptionOptions) {
  const { topics, logger } = options;
  const recheckAfter = options.recheckAfterMs ?? recheckAfterMs;
  const affecting = new Map(
    options.authenticators.flatMap((each) =>
      each.affectedBy ? [[each.name, each.affectedBy.bind(each)] as const] : [],
    ),
  );
  const standings = new Map<Subscriber, Standing>();
  const subscribers = new Map<string, Set<Subscriber>>();
  let generation = 0;
  /** A topic's subscribers and its room are changed together: the room holds its socket.io subscribers, no other. */
  const added = (socket: Subscriber, topic: string): void => {
    let each = subscribers.get(topic);
    if (!each) subscribers.set(topic, (each = new Set()));
    each.add(socket);
    void socket.join?.(topicRoom(topic));
  };
  const removed = (socket: Subscriber, topic: string): void => {
    subscribers.get(topic)?.delete(socket);
    void socket.leave?.(topicRoom(topic));
  };

  /** Each topic's last change delivered (its seq), since this process began following the log. */
  const lastOf = new Map<string, number>();
  /**
   * Up to where a subscriber's client has every change of its topics: for
   * each, the seq of the last event it was sent (the `since` a resume would
   * give), or where delivery stands when no change of the topic came since
   * (the topic's floor keeps its resume whole: no change of it goes);
   * the lowest of them. Undefined without the log.
   */
  const knownOf = (standing: Standing): number | undefined => {
    const following = options.following;
    const position = following?.position();
    let lowest: number | undefined;
    for (const [topic, cursor] of standing.topics) {
      if (cursor < 0) continue;
      let seq = standing.behind?.get(topic) ?? cursor;
      if (
        following &&
        !standing.behind?.has(topic) &&
        cursor >= following.from &&
        (lastOf.get(topic) ?? 0) <= cursor
      )
        seq = Math.max(cursor, position!);
      if (lowest === undefined || seq < lowest) lowest = seq;
    }
    return lowest;
  };
  /** What retention keeps for a subscriber: what its client has, as it was at least a minute ago at most. */
  const holdOf = (standing: Standing): number | undefined => {
    const known = knownOf(standing);
    return known === undefined ? undefined : Math.min(known, standing.seenBefore);
  };
  /** Its client had `seq` when it subscribed (its `since`, or the answer's seq). */
  const subscribedAt = (standing: Standing, seq: number): void => {
    standing.seen = Math.min(standing.seen, seq);
    standing.seenBefore = Math.min(standing.seenBefore, seq);
  };
  const departed = new DepartedPositions();

  const drop = (socket: Subscriber): void => {
    const standing = standings.get(socket);
    if (!standing) return;
    for (const topic of standing.topics.keys()) removed(socket, topic);
    standings.delete(socket);
    // It may come back and resume from there.
    const hold = holdOf(standing);
    if (hold !== undefined) departed.add(hold);
  };

  /** Sends the topic's changes after `since`, up to `upTo`, that the caller may read now: a resume's replay. */
  const replay = async (
    socket: Subscriber,
    standing: Standing,
    topic: string,
    since: number,
    upTo: number,
  ): Promise<void> => {
    const rules = topics.get(topic)!;
    let after = since;
    pages: while (after < upTo) {
      const page = await options.changes!.read(after, replayPage);
      // Trimmed past it meanwhile (another instance's trim; its own holds it): never a silent gap.
      if ((await options.changes!.bounds(topic)).floor > after)
        throw new Error(`the log was trimmed past ${after} during the replay`);
      if (page.length === 0) break;
      for (const change of page) {
        if (standings.get(socket) !== standing) return;
        if (change.seq > upTo) break pages;
        after = change.seq;
        if (change.collection !== topic) continue;
        send(
          socket,
          standing,
          { topic, action: change.action, record: change.record as ChangeEvent['record'], seq: change.seq },
          rules,
        );
      }
    }
    // Every change of the topic up to `upTo` went out (live events skip them): it stands there.
    const cursor = standing.topics.get(topic);
    if (cursor !== undefined && cursor < upTo && standings.get(socket) === standing)
      standing.topics.set(topic, upTo);
  };

  /** The token no longer stands: the client is told why and disconnected (a new connection brings a valid one). */
  const stop = (socket: Subscriber, reason: string): void => {
    drop(socket);
    socket.emit(closingEvent, {
      code: 401,
      reason: `${reason}: disconnected; log in again, then connect with the new token`,
    });
    socket.disconnect(true);
  };

  /** A check that must come before the next event: something said who the caller is changed, or it expired. */
  const needsCheck = (standing: Standing, now: number): boolean =>
    standing.caller !== undefined &&
    (standing.stale ||
      standing.generation !== generation ||
      (standing.caller.expiresAt !== undefined && standing.caller.expiresAt <= new Date(now).toISOString()));

  /**
   * Ends one topic's subscription with a 503, which says to subscribe again
   * with `since`. With no topic left it is no subscriber (the admin lists
   * none): it leaves, and holds where it stood, as one that left does.
   */
  const endTopic = (socket: Subscriber, standing: Standing, topic: string, reason: string): void => {
    if (standing.topics.size === 1 && standing.topics.has(topic) && standings.get(socket) === standing)
      drop(socket);
    else {
      standing.topics.delete(topic);
      standing.behind?.delete(topic);
      removed(socket, topic);
    }
    socket.emit(closingEvent, { code: 503, topic, reason });
  };

  /**
   * The caller could not be checked before an event that waits on it: each topic's subscription ends with a
   * 503, which says to subscribe again with `since` (berth/client does, and retries while the check still
   * fails), so the client's resume replays the event and nothing is lost. The event is not sent unchecked,
   * and is not held: a database down for minutes would hold every event of every such subscriber.
   */
  const uncheckable = (socket: Subscriber, standing: Standing): void => {
    if (standings.get(socket) !== standing) return;
    const list = [...standing.topics.keys()];
    drop(socket);
    for (const topic of list)
      socket.emit(closingEvent, {
        code: 503,
        topic,
        reason: `the caller could not be checked again now: unsubscribed from ${topic}; subscribe again with since (the seq of the last event you got)`,
      });
  };

  /** Checks a subscriber's token again; false when its events must stop, 'unknown' when the check failed. */
  const recheck = async (socket: Subscriber, standing: Standing): Promise<boolean | 'unknown'> => {
    const checking = generation;
    const told = standing.told;
    let caller: Caller | null | undefined;
    try {
      caller = await options.callerOf(socket);
    } catch (error) {
      // Cannot tell now (the database, an identity provider): not sent unchecked; checked again before the next.
      logger.warn(
        { socket: socket.id, err: error },
        `realtime: a subscriber's token could not be checked again: ${(error as Error).message}`,
      );
      standing.stale = true;
      return 'unknown';
    }
    if (standings.get(socket) !== standing) return false;
    // Told of a change to who it is while this check ran: what it found may be stale already; check again.
    if (caller && standing.told !== told) return recheck(socket, standing);
    if (!caller) {
      stop(
        socket,
        standing.caller?.expiresAt && standing.caller.expiresAt <= new Date().toISOString()
          ? 'the session expired'
          : 'the token is no longer valid (revoked, expired or replaced)',
      );
      return false;
    }
    Object.assign(standing, { caller, checkedAt: Date.now(), generation: checking, stale: false });
    for (const topic of [...standing.topics.keys()]) {
      const rules = topics.get(topic)!;
      if (judge(rules.list, caller, undefined, rules.ownership, true).allowed) continue;
      standing.topics.delete(topic);
      removed(socket, topic);
      socket.emit(closingEvent, {
        code: 403,
        topic,
        reason: `this caller may no longer read ${topic}: unsubscribed`,
      });
    }
    if (standing.topics.size === 0) standings.delete(socket);
    return standing.topics.size > 0;
  };

  /** Runs `work` after the socket's earlier work, checking its caller first when due; in order, per socket. */
  const enqueue = (socket: Subscriber, standing: Standing, work?: () => void | Promise<void>): void => {
    const run = async (): Promise<void> => {
      // Ended meanwhile (unsubscribed, or its check failed): no check, no work.
      if (standings.get(socket) !== standing) return;
      if (needsCheck(standing, Date.now())) {
        const checked = await recheck(socket, standing);
        if (checked === 'unknown') return uncheckable(socket, standing);
        if (!checked) return;
      }
      if (standings.get(socket) === standing) await work?.();
    };
    const next = (standing.queue ?? Promise.resolve())
      .then(run)
      .catch((error: unknown) =>
        logger.error({ socket: socket.id, err: error }, 'realtime: delivering an event failed'),
      );
    standing.queue = next;
    void next.finally(() => {
      if (standing.queue === next) standing.queue = undefined;
    });
  };

  /**
   * The periodic checks, in the background: every tenth of the period, the
   * callers checked longest ago and due, at most `checksAtOnce` at a time;
   * their events meanwhile go on as before.
   */
  let sweeping = false;
  const sweep = async (): Promise<void> => {
    if (sweeping) return;
    sweeping = true;
    try {
      const dueBefore = Date.now() - recheckAfter;
      const due = [...standings].filter(
        ([, standing]) => standing.caller && !standing.checking && standing.checkedAt <= dueBefore,
      );
      for (let next = 0; next < due.length; next += checksAtOnce) {
        await Promise.all(
          due.slice(next, next + checksAtOnce).map(async ([socket, standing]) => {
            if (standings.get(socket) !== standing || standing.checking) return;
            standing.checking = true;
            try {
              await recheck(socket, standing);
            } finally {
              standing.checking = false;
            }
          }),
        );
      }
    } finally {
      sweeping = false;
    }
  };
  const sweeper = setInterval(
    () =>
      void sweep().catch((error: unknown) =>
        logger.error(
          { err: error },
          `realtime: checking subscribers again failed: ${(error as Error).message}`,
        ),
      ),
    Math.max(10, Math.floor(recheckAfter / 10)),
  );
  sweeper.unref();

  /** The topics whose read rule threw: said once each, not at every event of every subscriber. */
  const rulesThatThrew = new Set<string>();
  /** Whether the caller may read the record; a rule that throws says no (for this caller, this record). */
  const mayRead = (standing: Standing, event: ChangeEvent, rules: Topic): boolean => {
    try {
      return judge(rules.read, standing.caller, event.record as Record<string, unknown>, rules.ownership)
        .allowed;
    } catch (error) {
      if (!rulesThatThrew.has(event.topic)) {
        rulesThatThrew.add(event.topic);
        logger.error(
          { topic: event.topic, err: error },
          `realtime: the read rule of ${event.topic} threw (${(error as Error)?.message ?? String(error)}): its events are not sent to the callers it throws for; make the rule answer false instead (said once)`,
        );
      }
      return false;
    }
  };

  /** Whether the socket is to get the event: subscribed, not sent it yet, and its caller may read the record. */
  const admits = (standing: Standing, event: ChangeEvent, rules: Topic): boolean => {
    const cursor = standing.topics.get(event.topic);
    if (cursor === undefined) return false;
    const { seq } = event;
    if (seq !== undefined) {
      // Once each: a change the replay sent is not sent again live, nor one before it.
      if (seq <= cursor) return false;
      standing.topics.set(event.topic, seq);
    }
    const allowed = mayRead(standing, event, rules);
    // Not sent: its client still has only what it was sent last, which a resume gives as `since`.
    if (allowed) standing.behind?.delete(event.topic);
    else if (seq !== undefined && !standing.behind?.has(event.topic))
      (standing.behind ??= new Map()).set(event.topic, cursor);
    return allowed;
  };
  const argsOf = (event: ChangeEvent, presented: Record<string, unknown>): unknown[] =>
    event.seq === undefined ? [presented] : [presented, { seq: event.seq }];

  const send = (socket: Subscriber, standing: Standing, event: ChangeEvent, rules: Topic): void => {
    if (!admits(standing, event, rules)) return;
    const presented = rules.presentTo(event.record as Record<string, unknown>, standing.caller);
    socket.emit(`${event.topic}:${event.action}`, ...argsOf(event, presented));
  };

  /**
   * The event to the sockets that may have it now, in two groups: those who
   * see the record whole and the others. Each group's record is presented
   * once and, where the transport can, encoded once.
   */
  const sendAll = (sockets: readonly Subscriber[], event: ChangeEvent, rules: Topic): void => {
    const record = event.record as Record<string, unknown>;
    const whole: Subscriber[] = [];
    const others: Subscriber[] = [];
    for (const socket of sockets) {
      const standing = standings.get(socket)!;
      if (admits(standing, event, rules))
        (rules.seesAll(record, standing.caller) ? whole : others).push(socket);
    }
    const name = `${event.topic}:${event.action}`;
    for (const [group, seesAll] of [
      [whole, true],
      [others, false],
    ] as const) {
      if (group.length === 0) continue;
      const args = argsOf(event, rules.shown(record, seesAll));
      if (group.length > 1 && options.broadcast) options.broadcast(group, event.topic, name, ...args);
      else for (const socket of group) socket.emit(name, ...args);
    }
  };

  return {
    /**
     * Adds a socket (its caller just checked) to a topic's subscribers.
     * With the log: `at`, the seq the live events go on from, and `since`,
     * where a resume's replay starts (the changes after it, up to `at`,
     * are sent first).
     */
    subscribe(
      socket: Subscriber,
      topic: string,
      caller: Caller | undefined,
      at?: number,
      since?: number,
    ): void {
      let standing = standings.get(socket);
      if (!standing) {
        standing = {
          caller,
          checkedAt: Date.now(),
          generation,
          stale: false,
          told: 0,
          topics: new Map(),
          behind: undefined,
          seen: Infinity,
          seenBefore: Infinity,
          queue: undefined,
          checking: false,
        };
        standings.set(socket, standing);
      } else if (!standing.queue) {
        Object.assign(standing, { caller, checkedAt: Date.now(), generation, stale: false });
      }
      if (!standing.topics.has(topic)) standing.topics.set(topic, -1);
      added(socket, topic);
      if (at === undefined) return;
      if (since === undefined || since >= at) {
        const cursor = Math.max(at, since ?? 0, standing.topics.get(topic)!);
        standing.topics.set(topic, cursor);
        // The answer says max(at, since): already subscribed further, the client has less than the cursor.
        const answered = Math.max(at, since ?? 0);
        if (answered < cursor) (standing.behind ??= new Map()).set(topic, answered);
        else standing.behind?.delete(topic);
        subscribedAt(standing, since ?? at);
        return;
      }
      // The replay goes first in the socket's queue: live events wait behind it, and skip what it sent.
      standing.topics.set(topic, since);
      standing.behind?.delete(topic);
      subscribedAt(standing, since);
      const subscribed = standing;
      enqueue(socket, subscribed, () =>
        replay(socket, subscribed, topic, since, at).catch((error: unknown) => {
          // Never a silent gap: the client is told, and unsubscribed, to subscribe again.
          logger.warn(
            { socket: socket.id, topic, err: error },
            `realtime: a replay failed: ${(error as Error).message}`,
          );
          endTopic(
            socket,
            subscribed,
            topic,
            `the changes to ${topic} after ${since} could not be read: unsubscribed; subscribe again`,
          );
        }),
      );
    },
    unsubscribe(socket: Subscriber, topic: string): void {
      const standing = standings.get(socket);
      if (!standing) return;
      standing.topics.delete(topic);
      standing.behind?.delete(topic);
      removed(socket, topic);
      if (standing.topics.size === 0) standings.delete(socket);
    },
    /** A socket that left. */
    drop,
    /** Sends an event to this instance's subscribers that its record's read rule lets see it. */
    deliver(event: ChangeEvent): void {
      if (event.seq !== undefined) lastOf.set(event.topic, event.seq);
      if (affecting.size) {
        for (const [socket, standing] of standings) {
          const affected = standing.caller && affecting.get(standing.caller.via);
          if (affected && affected(event, standing.caller!)) {
            standing.stale = true;
            standing.told++;
            enqueue(socket, standing);
          }
        }
      }
      const each = subscribers.get(event.topic);
      const rules = topics.get(event.topic);
      if (!each || !rules) return;
      const now = Date.now();
      const atOnce: Subscriber[] = [];
      for (const socket of each) {
        const standing = standings.get(socket)!;
        if (standing.queue || needsCheck(standing, now))
          enqueue(socket, standing, () => send(socket, standing, event, rules));
        else atOnce.push(socket);
      }
      sendAll(atOnce, event, rules);
    },
    /** The topics with subscribers. */
    topics: (): string[] => [...subscribers].flatMap(([topic, each]) => (each.size > 0 ? [topic] : [])),
    /**
     * Changes of the topic up to `floor` went from the log before they were
     * sent (a cut by an import): each subscription that had not got them
     * ends with a 503, and the client's subscribe again with `since` is told
     * `resync`.
     */
    lost(topic: string, floor: number): void {
      for (const socket of [...(subscribers.get(topic) ?? [])]) {
        const standing = standings.get(socket);
        const cursor = standing?.topics.get(topic);
        if (!standing || cursor === undefined || cursor >= floor) continue;
        endTopic(
          socket,
          standing,
          topic,
          `changes of ${topic} went from the log before they were sent: unsubscribed; subscribe again with since (the seq of the last event you got)`,
        );
      }
    },
    /** Each subscriber and where its subscriptions stand, for the admin monitor. */
    report(): SubscriberEntry[] {
      return [...standings].map(([socket, standing]) => ({
        client: socket.id,
        caller: standing.caller ? `${standing.caller.via}:${standing.caller.id}` : null,
        topics: [...standing.topics].map(([topic, seq]) => ({ topic, seq: Math.max(seq, 0) })),
      }));
    },
    /**
     * The lowest seq up to which a subscriber of this process has every
     * change of its topics: those connected, and those that left less than
     * `withinMs` ago (they may resume). Each as it was at the ask before
     * (about a minute ago) when that is lower: a connection that died
     * unnoticed may have lost what was sent since. Undefined when there is
     * none. Asked at each trim of the log.
     */
    held(withinMs: number): number | undefined {
      let lowest = departed.lowest(withinMs);
      for (const standing of standings.values()) {
        const known = knownOf(standing);
        if (known === undefined) continue;
        standing.seenBefore = standing.seen;
        standing.seen = known;
        const hold = Math.min(known, standing.seenBefore);
        if (lowest === undefined || hold < lowest) lowest = hold;
      }
      return lowest;
    },
    /** Credentials were reloaded (a new admin token): every subscriber's caller is checked again now. */
    recheckAll(): void {
      generation++;
      for (const [socket, standing] of standings) if (standing.caller) enqueue(socket, standing);
    },
    /** Ends the background checks. */
    close(): void {
      clearInterval(sweeper);
    },
  };
}
