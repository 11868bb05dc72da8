import { orderOf, type Condition, type ListQuery, type ListResult, type Row } from '../core/internal.js';
import { afterAll, fieldBounds, plainBounds } from './indexeddb-index-find.js';
import {
  intersect,
  keyOf,
  keyPathOfIndex,
  rangeOf,
  readRun,
  type Bounds,
  type IndexScope,
  type Reader,
} from './indexeddb-requests.js';
import { encodeKey, rowOf } from './indexeddb-schema.js';

// Walking: a list read in the order's index (or a scan when no index serves the order), checking records
// until the page is full; and counting by reading records.

/** How many records a scan reads at once. */
const scanBatch = 1000;

/** The ways a collection's lists walk an index or scan the store, and count by reading records. */
export function walking(scope: IndexScope) {
  const { fields, from } = scope;

  /** Counts the records a test passes, reading a range in batches; stops past `cap`. */
  const countBy = async (
    read: Reader,
    index: string | undefined,
    bounds: Bounds,
    test: (record: Record<string, unknown>) => boolean,
    cap: number,
  ): Promise<number> => {
    if (bounds.empty) return 0;
    const keyPath = keyPathOfIndex(index);
    let count = 0;
    for (let range = bounds; ;) {
      const records = await readRun(read, from(index), rangeOf(range), 'next', scanBatch);
      for (const record of records) if (test(record) && ++count > cap) return count;
      if (records.length < scanBatch) return count;
      range = intersect(range, { lower: keyOf(records.at(-1)!, keyPath), lowerOpen: true });
    }
  };
  /** The answer's total: counted up to the query's count limit. */
  const totalOf = (query: ListQuery, count: number): Pick<ListResult<Row>, 'total' | 'totalCapped'> =>
    query.countLimit !== undefined && count > query.countLimit
      ? { total: query.countLimit, totalCapped: true }
      : { total: count };

  /**
   * The order's own index (on every key of the order), from the cursor on and bounded by conditions on its
   * first key, read in growing batches and checked record by record until the page is full.
   */
  async function walkOrder(
    read: Reader,
    query: ListQuery,
    where: readonly Condition[],
    filtered: boolean,
    index: string | undefined,
    test: (record: Record<string, unknown>) => boolean,
    total: Promise<number>,
  ): Promise<ListResult<Row>> {
    const order = orderOf(query);
    const keys = order.slice(0, -1);
    let bounds: Bounds = {};
    const first = order[0]!.field;
    for (const condition of where) {
      if (condition.field !== first) continue;
      const each = keys.length ? fieldBounds(condition) : plainBounds(condition);
      if (each) bounds = intersect(bounds, each);
    }
    const direction = order[0]!.direction === 'asc' ? 'next' : 'prev';
    const keyPath = keyPathOfIndex(index);
    const beyond = (key: IDBValidKey): Bounds =>
      direction === 'next' ? { lower: key, lowerOpen: true } : { upper: key, upperOpen: true };
    if (query.after) {
      const after = query.after;
      const key = keys.length
        ? [...keys.map((_, i) => encodeKey(after[i])), after.at(-1) as IDBValidKey]
        : (after[0] as IDBValidKey);
      bounds = intersect(bounds, beyond(key));
    }
    let skip = query.offset ?? 0;
    const items: Row[] = [];
    let batch = filtered ? Math.max(64, 4 * (skip + query.limit)) : skip + query.limit;
    while (!bounds.empty && items.length < query.limit) {
      const records = await readRun(read, from(index), rangeOf(bounds), direction, batch);
      for (const record of records) {
        if (!test(record)) continue;
        if (skip > 0) skip--;
        else if (items.push(rowOf(fields, record)) >= query.limit) break;
      }
      if (records.length < batch) break;
      bounds = intersect(bounds, beyond(keyOf(records.at(-1)!, keyPath)));
      batch = Math.min(batch * 4, 4096);
    }
    return { items, ...totalOf(query, await total) };
  }

  /**
   * The order's first key has an index, the rest of the order none (or keys of mixed directions): that index
   * is walked a whole run of equal first keys at a time, until the page is full and its last run read; what
   * was read is sorted.
   */
  async function walkGroups(
    read: Reader,
    query: ListQuery,
    where: readonly Condition[],
    index: string,
    byOrder: (a: Row, b: Row) => number,
    test: (record: Record<string, unknown>) => boolean,
    total: Promise<number>,
  ): Promise<ListResult<Row>> {
    const order = orderOf(query);
    const first = order[0]!;
    const direction = first.direction === 'asc' ? 'next' : 'prev';
    const wanted = (query.offset ?? 0) + query.limit;
    const keyPath = keyPathOfIndex(index);
    let bounds: Bounds = {};
    for (const condition of where) {
      const each = condition.field === first.field ? fieldBounds(condition) : undefined;
      if (each) bounds = intersect(bounds, each);
    }
    let after: Row | undefined;
    if (query.after) {
      after = Object.fromEntries(order.map(({ field }, i) => [field, query.after![i] ?? null])) as Row;
      // From the run of the cursor's first key on: later keys decide within it.
      const at = encodeKey(query.after[0]);
      bounds = intersect(bounds, direction === 'next' ? { lower: [at] } : { upper: [at, afterAll] });
    }
    const kept: Row[] = [];
    let boundary: IDBValidKey | undefined;
    let batch = Math.max(256, 4 * wanted);
    reading: while (!bounds.empty) {
      const records = await readRun(read, from(index), rangeOf(bounds), direction, batch);
      for (const record of records) {
        const key = (keyOf(record, keyPath) as IDBValidKey[])[0]!;
        if (boundary !== undefined && indexedDB.cmp(key, boundary) !== 0) break reading;
        if (!test(record)) continue;
        const row = rowOf(fields, record);
        if (after && byOrder(row, after) <= 0) continue;
        if (kept.push(row) === wanted) boundary = key;
      }
      if (records.length < batch) break;
      const last = keyOf(records.at(-1)!, keyPath);
      bounds = intersect(
        bounds,
        direction === 'next' ? { lower: last, lowerOpen: true } : { upper: last, upperOpen: true },
      );
      batch = Math.min(batch * 4, 4096);
    }
    const items = kept.sort(byOrder).slice(query.offset ?? 0, wanted);
    return { items, ...totalOf(query, await total) };
  }

  /** No index serves the order: every record is read once, in batches, keeping the page's worth of the first in order. */
  async function scan(
    read: Reader,
    query: ListQuery,
    byOrder: (a: Row, b: Row) => number,
    test: (record: Record<string, unknown>) => boolean,
  ): Promise<ListResult<Row>> {
    const wanted = (query.offset ?? 0) + query.limit;
    const order = orderOf(query);
    const after = query.after
      ? (Object.fromEntries(order.map(({ field }, i) => [field, query.after![i] ?? null])) as Row)
      : undefined;
    let kept: Row[] = [];
    let count = 0;
    for (let bounds: Bounds = {}; ;) {
      const records = await readRun(read, from(undefined), rangeOf(bounds), 'next', scanBatch);
      for (const record of records) {
        if (!test(record)) continue;
        count++;
        const row = rowOf(fields, record);
        if (!after || byOrder(row, after) > 0) kept.push(row);
      }
      if (kept.length > 2 * wanted) kept = kept.sort(byOrder).slice(0, wanted);
      if (records.length < scanBatch) break;
      bounds = { lower: records.at(-1)!.id as IDBValidKey, lowerOpen: true };
    }
    const items = kept.sort(byOrder).slice(query.offset ?? 0, wanted);
    return { items, ...totalOf(query, count) };
  }

  return { countBy, walkOrder, walkGroups, scan };
}
