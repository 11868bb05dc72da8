/**
 * A map that keeps at most `limit` entries, dropping the least recently used
 * one when a new one would pass the limit. Drivers keep prepared statements
 * in it, so queries of ever new shapes cannot grow memory without bound.
 *
 * @example
 * const statements = new LruCache<string, Statement>(200)
 * const statement = statements.get(sql) ?? statements.set(sql, db.prepare(sql))
 */
export class LruCache<K, V> {
  readonly limit: number;
  readonly #entries = new Map<K, V>();

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`an LRU cache needs a limit of 1 or more, not ${limit}`);
    this.limit = limit;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  /** Stores the value and returns it. */
  set(key: K, value: V): V {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.limit) this.#entries.delete(this.#entries.keys().next().value as K);
    return value;
  }

  clear(): void {
    this.#entries.clear();
  }
}
