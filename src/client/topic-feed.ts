import type {
  ClientProblem,
  RecordChange,
  SubscriptionEvent,
  SubscriptionHandlers,
  SubscriptionListener,
} from './client-types.js';

/** One subscriber of a topic: its handlers or listener, called the same way. */
export interface Subscriber<R> {
  deliver(event: SubscriptionEvent<R>): void | Promise<void>;
  problem(problem: ClientProblem): void;
}

/** A passing problem (code 503): the server cannot now; the client subscribes again by itself, and loses nothing. */
export const passing = (problem: { code?: number | undefined }): boolean => problem.code === 503;

/** Throws `error` where nothing catches it, once the caller's work is done. */
const rethrow = (error: unknown): void =>
  queueMicrotask(() => {
    throw error;
  });

/** Throws where nothing catches it: a problem nobody handles is not swallowed (but for a passing one). */
export function throwLater(problem: ClientProblem): void {
  if (!passing(problem)) rethrow(problem.error ?? new Error(`${problem.topic}: ${problem.reason}`));
}

/**
 * Tells a problem to the caller's error handler, or throws it later when
 * there is none. A handler that throws never stops the client's work (the
 * events of a topic, its other subscribers): what it threw is thrown later.
 */
export function tell(handler: ((problem: ClientProblem) => void) | undefined, problem: ClientProblem): void {
  if (!handler) return throwLater(problem);
  try {
    handler(problem);
  } catch (error) {
    rethrow(error);
  }
}

export function subscriberOf<R>(handlers: SubscriptionHandlers<R> | SubscriptionListener<R>): Subscriber<R> {
  if (typeof handlers === 'function') return { deliver: handlers, problem: throwLater };
  const problem = (found: ClientProblem): void => tell(handlers.error, found);
  return {
    deliver(event) {
      if (event.action === 'resync') {
        if (handlers.resync) return handlers.resync(event);
        // Changes were lost: a subscriber without a resync handler is told so, never left with a silent gap.
        return problem({ topic: event.topic, reason: `changes were lost: ${event.reason}` });
      }
      return handlers[event.action]?.(event.record, { seq: event.seq });
    },
    problem,
  };
}

/**
 * Runs work one piece at a time, in the order given: at once when nothing
 * waits, else after the promise of the piece before.
 */
export function serially(onError: (error: unknown) => void): (work: () => void | Promise<void>) => void {
  let pending: Promise<void> | undefined;
  // Never throws, so that a piece's promise never rejects: the pieces after it run whatever it did.
  const failed = (error: unknown): void => {
    try {
      onError(error);
    } catch (thrown) {
      rethrow(thrown);
    }
  };
  const run = (work: () => void | Promise<void>): Promise<void> | undefined => {
    try {
      const result = work();
      return result instanceof Promise ? result.catch(failed) : undefined;
    } catch (error) {
      failed(error);
      return undefined;
    }
  };
  return (work) => {
    if (pending) {
      const next: Promise<void> = pending.then(() => run(work));
      pending = next;
      void next.then(() => {
        if (pending === next) pending = undefined;
      });
      return;
    }
    const started = run(work);
    if (started) {
      pending = started;
      void started.then(() => {
        if (pending === started) pending = undefined;
      });
    }
  };
}

/**
 * A topic's subscribers and the seq of the last change handed to them: a
 * change at or before it is dropped (the server never repeats one, but a
 * resubscription must not either), the others go to every subscriber, one
 * at a time, in order.
 */
export function createTopicFeed<R>(topic: string) {
  const subscribers = new Set<Subscriber<R>>();
  let last: number | undefined;
  // Errors of handlers are caught per subscriber below; this one is the resync's own reading.
  const hand = serially((error) => feed.problem({ topic, reason: String(error), error }));
  const threw = (subscriber: Subscriber<R>, error: unknown): void =>
    subscriber.problem({ topic, reason: `a handler threw: ${(error as Error)?.message ?? error}`, error });
  const deliverRest = async (rest: Subscriber<R>[], event: SubscriptionEvent<R>): Promise<void> => {
    for (const subscriber of rest) {
      try {
        await subscriber.deliver(event);
      } catch (error) {
        threw(subscriber, error);
      }
    }
  };
  /** Hands an event to every subscriber: synchronously while their handlers are, awaiting a promise one returns. */
  const deliver = (event: SubscriptionEvent<R>): void | Promise<void> => {
    const list = [...subscribers];
    for (let i = 0; i < list.length; i++) {
      const subscriber = list[i]!;
      let result: void | Promise<void>;
      try {
        result = subscriber.deliver(event);
      } catch (error) {
        threw(subscriber, error);
        continue;
      }
      if (result instanceof Promise) {
        const rest = list.slice(i + 1);
        return result.then(
          () => deliverRest(rest, event),
          (error: unknown) => {
            threw(subscriber, error);
            return deliverRest(rest, event);
          },
        );
      }
    }
  };

  const feed = {
    topic,
    subscribers,
    get last() {
      return last;
    },
    /** Where the feed starts when it has had no change yet (a subscribe's ack). */
    startAt(seq: number | undefined): void {
      last ??= seq;
    },
    /** A change from the server: handed over unless its seq is not above the last one. */
    change(action: RecordChange<R>['action'], record: R, seq: number | undefined): void {
      if (seq !== undefined) {
        if (last !== undefined && seq <= last) return;
        last = seq;
      }
      const event: RecordChange<R> = { topic, action, record, seq };
      hand(() => deliver(event));
    },
    /** The changes up to `seq` are lost: subscribers hear so (with the collection read again, if `read`), then go on from it. */
    resync(seq: number | undefined, reason: string, read?: () => Promise<R[]>): void {
      if (seq !== undefined) last = seq;
      hand(async () => {
        let records: R[] | undefined;
        if (read) {
          try {
            records = await read();
          } catch (error) {
            feed.problem({
              topic,
              reason: `reading ${topic} again failed: ${(error as Error).message}`,
              error,
            });
          }
        }
        await deliver({ topic, action: 'resync', seq, reason, records });
      });
    },
    problem(problem: ClientProblem): void {
      for (const subscriber of [...subscribers]) subscriber.problem(problem);
    },
  };
  return feed;
}

export type TopicFeed<R> = ReturnType<typeof createTopicFeed<R>>;
