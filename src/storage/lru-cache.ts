/**
 * A map that keeps at most `limit` entries, dropping the least recently used
 * one when a new one would pass the limit. Drivers keep prepared statements
 * in it, so queries of ever new shapes cannot grow memory without bound.
 *
 * A lookup only stamps its entry with a counter (it runs on every query);
 * the least recently used one is looked for only when the cache is full and
 * a new entry comes, which is rare and costs a prepare anyway.
 *
 * @example
 * const statements = new LruCache<string, Statement>(200)
 * const statement = statements.get(sql) ?? statements.set(sql, db.prepare(sql))
 */
export class LruCache<K, V> {
  readonly limit: number;
  readonly #entries = new Map<K, { value: V; used: number }>();
  #clock = 0;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`an LRU cache needs a limit of 1 or more, not ${limit}`);
    this.limit = limit;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    entry.used = ++this.#clock;
    return entry.value;
  }

  /** Stores the value and returns it. */
  set(key: K, value: V): V {
    const entry = this.#entries.get(key);
    if (entry) {
      entry.value = value;
      entry.used = ++this.#clock;
      return value;
    }
    if (this.#entries.size >= this.limit) {
      let oldest: K | undefined;
      let used = Infinity;
      for (const [each, { used: at }] of this.#entries) {
        if (at < used) {
          used = at;
          oldest = each;
        }
      }
      this.#entries.delete(oldest as K);
    }
    this.#entries.set(key, { value, used: ++this.#clock });
    return value;
  }

  clear(): void {
    this.#entries.clear();
  }
}
