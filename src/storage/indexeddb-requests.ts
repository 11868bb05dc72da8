/**
 * IndexedDB's own API, as the index reads use it (Dexie wraps writes and
 * schema changes; on the read path its layers cost more than the read):
 * requests as promises, ranges from bounds, and reading a run of records
 * in an index's order.
 */

import type { CollectionDefinition } from '../core/internal.js';

/** What a collection's index reads share: its store, its fields, its text store, a store or index by Dexie name. */
export interface IndexScope {
  collection: CollectionDefinition;
  name: string;
  fields: readonly string[];
  searchStore: string | undefined;
  from: (index: string | undefined) => (transaction: IDBTransaction) => IDBIndex | IDBObjectStore;
}

/** An index's key path from its Dexie name (`[_k.name+id]`, `email`); the primary key's is `id`. */
export const keyPathOfIndex = (index: string | undefined): string | string[] =>
  index === undefined ? 'id' : index.startsWith('[') ? index.slice(1, -1).split('+') : index;

/** A request's result. */
export const settled = <T>(request: IDBRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });

/**
 * Requests on some stores in one read-only transaction, opened at the first
 * one; should it have ended (it commits once nothing is pending), another.
 * `opened` hears each transaction it opens, before its first request.
 */
export function readerOf(
  database: IDBDatabase,
  stores: readonly string[],
  opened: (transaction: IDBTransaction) => void = () => {},
) {
  let transaction: IDBTransaction | undefined;
  const open = (): IDBTransaction => {
    transaction = database.transaction(stores as string[], 'readonly');
    opened(transaction);
    return transaction;
  };
  return <T>(make: (transaction: IDBTransaction) => IDBRequest<T>): Promise<T> => {
    try {
      return settled(make(transaction ?? open()));
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name !== 'TransactionInactiveError' && name !== 'InvalidStateError') throw error;
      return settled(make(open()));
    }
  };
}
export type Reader = ReturnType<typeof readerOf>;

/** Where a range of keys starts and ends; `empty` when nothing can be in it. */
export interface Bounds {
  lower?: IDBValidKey;
  lowerOpen?: boolean;
  upper?: IDBValidKey;
  upperOpen?: boolean;
  empty?: boolean;
}

/** Keys in both ranges. */
export function intersect(a: Bounds, b: Bounds): Bounds {
  if (a.empty || b.empty) return { empty: true };
  const out: Bounds = { ...a };
  if (b.lower !== undefined) {
    const order = out.lower === undefined ? 1 : indexedDB.cmp(b.lower, out.lower);
    if (order > 0) Object.assign(out, { lower: b.lower, lowerOpen: b.lowerOpen });
    else if (order === 0) out.lowerOpen = Boolean(out.lowerOpen || b.lowerOpen);
  }
  if (b.upper !== undefined) {
    const order = out.upper === undefined ? -1 : indexedDB.cmp(b.upper, out.upper);
    if (order < 0) Object.assign(out, { upper: b.upper, upperOpen: b.upperOpen });
    else if (order === 0) out.upperOpen = Boolean(out.upperOpen || b.upperOpen);
  }
  if (out.lower !== undefined && out.upper !== undefined) {
    const order = indexedDB.cmp(out.lower, out.upper);
    if (order > 0 || (order === 0 && (out.lowerOpen || out.upperOpen))) return { empty: true };
  }
  return out;
}

/** The IDBKeyRange of bounds (null: every key); call only when not empty. */
export function rangeOf(bounds: Bounds): IDBKeyRange | null {
  const { lower, upper, lowerOpen = false, upperOpen = false } = bounds;
  if (lower !== undefined && upper !== undefined)
    return IDBKeyRange.bound(lower, upper, lowerOpen, upperOpen);
  if (lower !== undefined) return IDBKeyRange.lowerBound(lower, lowerOpen);
  if (upper !== undefined) return IDBKeyRange.upperBound(upper, upperOpen);
  return null;
}

/** A value at a key path (`_k.name`). */
function valueAt(record: Record<string, unknown>, path: string): unknown {
  let value: unknown = record;
  for (const part of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[part];
  return value;
}

/** A record's key in an index (or the store's primary key). */
export function keyOf(record: Record<string, unknown>, keyPath: string | string[]): IDBValidKey {
  return (
    typeof keyPath === 'string' ? valueAt(record, keyPath) : keyPath.map((path) => valueAt(record, path))
  ) as IDBValidKey;
}

type Source = IDBIndex | IDBObjectStore;
const hasGetAllRecords =
  typeof IDBIndex === 'function' &&
  'getAllRecords' in IDBIndex.prototype &&
  'getAllRecords' in IDBObjectStore.prototype;
type WithRecords = Source & {
  getAllRecords(options: {
    query: IDBKeyRange | null;
    count?: number;
    direction?: IDBCursorDirection;
  }): IDBRequest<Array<{ value: Record<string, unknown> }>>;
};

/**
 * Up to `count` records of a range in an index's order, forwards (`next`)
 * or backwards (`prev`): getAll, getAllRecords where the browser has it
 * (Chromium 141 on) for backwards, else a cursor.
 */
export async function readRun(
  read: Reader,
  source: (transaction: IDBTransaction) => Source,
  range: IDBKeyRange | null,
  direction: 'next' | 'prev',
  count: number,
): Promise<Array<Record<string, unknown>>> {
  if (direction === 'next')
    return read((transaction) => source(transaction).getAll(range, count)) as Promise<
      Array<Record<string, unknown>>
    >;
  if (hasGetAllRecords) {
    const records = await read((transaction) =>
      (source(transaction) as WithRecords).getAllRecords({ query: range, count, direction }),
    );
    return records.map((each) => each.value);
  }
  // Without getAllRecords: the same, by a cursor.
  const found: Array<Record<string, unknown>> = [];
  await new Promise<void>((resolve, reject) => {
    read((transaction) => {
      const request = source(transaction).openCursor(range, direction);
      request.addEventListener('success', () => {
        const cursor = request.result;
        if (!cursor || found.length >= count) return resolve();
        found.push(cursor.value as Record<string, unknown>);
        cursor.continue();
      });
      return request;
    }).catch(reject);
  });
  return found;
}
