/**
 * A value now, or a promise of it. Berth's read path passes values on
 * without a promise where every step has its answer at once (an SQLite
 * read, an in-memory IndexedDB copy): each `await` costs a request a
 * microtask and a promise, about 0.35 µs of CPU apiece under load.
 */
export type Eventually<T> = T | Promise<T>;

/** Whether `value` is a promise (or any thenable) to wait for. */
export const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | null | undefined)?.then === 'function';

/**
 * `next(value)` at once when `value` is at hand, else once it settles.
 *
 * @example
 * thenEventually(repository.get(id), (row) => row ?? null)
 */
export function thenEventually<T, R>(value: Eventually<T>, next: (value: T) => Eventually<R>): Eventually<R> {
  return isThenable(value) ? Promise.resolve(value).then(next) : next(value as T);
}

/** A promise for a value that may be at hand: a throw becomes a rejection, as an async function's would. */
export function promised<T>(work: () => Eventually<T>): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}
