import type { ClientProblem, LiveOptions, LiveQuery } from './client-types.js';
import { createLiveResult, type LiveAction, type ResultKept } from './live-result.js';
import { passing, tell } from './topic-feed.js';

/** One handle given by `client.live`: its own listeners and error handler, over a result it may share. */
interface Handle {
  changed(): void;
  problem(problem: ClientProblem): void;
}

/**
 * A live query's result and the handles that follow it: every `client.live`
 * of the same topic and query string shares one result (and one
 * subscription on the server); the last handle closed ends it.
 */
export function createLiveEntry<R extends { id: string }>(topic: string, query: string, ended: () => void) {
  const result = createLiveResult<R>(query);
  const handles = new Set<Handle>();
  let taken = false;
  /** The events of a change whose last has not come yet. */
  let held: Array<{
    action: LiveAction;
    record: R | { id: string };
    seq: number | undefined;
    after: string | null | undefined;
  }> = [];
  /** What `ready` is for the handles opened now: the first result, or once it came, that it did. */
  let first = firstResult();
  const changed = (): void => {
    for (const handle of [...handles]) handle.changed();
  };

  return {
    /** A fresh result at `seq` (a subscribe's ack), kept as the server says it keeps it. */
    snapshot(items: readonly R[], seq: number | undefined, kept: ResultKept): void {
      held = [];
      result.replace(items, seq, kept);
      taken = true;
      first.resolve();
      changed();
    },
    /** The seq the result stands at (undefined before its first snapshot). */
    get seq(): number | undefined {
      return taken ? result.seq : undefined;
    },
    /** The server says the result still stands at `seq` (nothing of its topic changed): kept as it is. */
    keep(seq: number | undefined): void {
      held = [];
      result.keep(seq);
    },
    /**
     * An event of the query: applied when its seq is above the result's, at
     * its place (`after`, the server's). Those of one change (`more` on all
     * but its last) are applied together, after the last: the result never
     * shows a state between them.
     */
    apply(
      action: LiveAction,
      record: R | { id: string },
      seq: number | undefined,
      more = false,
      after?: string | null,
    ): void {
      if (!taken) return;
      held.push({ action, record, seq, after });
      if (more) return;
      const batch = held;
      held = [];
      let moved = false;
      for (const each of batch) moved = result.apply(each.action, each.record, each.seq, each.after) || moved;
      if (moved) changed();
    },
    /** The client was closed: whoever awaits a first result that has not come hears so. */
    closed(): void {
      if (!taken) first.reject(new Error(`${topic}?${query}: the client was closed before its first result`));
    },
    /** The server refused or ended the query, or it cannot be read. */
    problem(problem: ClientProblem): void {
      // A passing one is no refusal: the client asks again, and `ready` waits for the answer.
      if (!taken && !passing(problem)) {
        first.reject(new Error(`${topic}?${query}: ${problem.reason}`));
        // The query stands when only the connection ended: a handle opened now waits for its result.
        first = firstResult();
      }
      for (const handle of [...handles]) handle.problem(problem);
    },
    /** A new handle on the result. */
    open(options: LiveOptions = {}): LiveQuery<R> {
      const listeners = new Set<(items: readonly R[]) => void>();
      const problem = (found: ClientProblem): void => tell(options.error, found);
      const call = (listener: (items: readonly R[]) => void): void => {
        try {
          listener(result.items);
        } catch (error) {
          problem({ topic, query, reason: `a listener threw: ${(error as Error)?.message ?? error}`, error });
        }
      };
      const handle: Handle = {
        changed: () => listeners.forEach(call),
        problem,
      };
      handles.add(handle);
      const { ready } = first;
      return {
        get items() {
          return result.items;
        },
        get seq() {
          return result.seq;
        },
        ready,
        subscribe(listener) {
          listeners.add(listener);
          if (taken) call(listener);
          return () => void listeners.delete(listener);
        },
        close() {
          if (!handles.delete(handle)) return;
          listeners.clear();
          if (handles.size > 0) return;
          // Closed before its first result: whoever awaits `ready` hears so rather than waiting for ever.
          if (!taken) first.reject(new Error(`${topic}?${query}: closed before its first result`));
          ended();
        },
      };
    },
  };
}

export type LiveEntry<R extends { id: string }> = ReturnType<typeof createLiveEntry<R>>;

/** A live query's first result to come: `ready` of the handles opened until it comes or a refusal. */
function firstResult() {
  let settle!: { resolve: () => void; reject: (error: Error) => void };
  const ready = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  ready.catch(() => {}); // a refusal reaches the error handlers; `ready` rejects for those who await it
  return { ready, ...settle };
}
