import type { Dexie } from 'dexie';
import type {
  ChangeEntry,
  CollectionDefinition,
  DriverRepository,
  LoggedWrites,
  Row,
  WriteMeta,
} from '../core/internal.js';
import { isThenable, type Eventually } from '../core/eventually.js';
import { indexReads, type IndexReads } from './indexeddb-index-reads.js';
import { listRows, type RowsInOrder } from './in-memory-query.js';
import { addChange, changeLogStore } from './indexeddb-change-log.js';
import { journalStoreNames, type Journal } from './indexeddb-journal.js';
import { keyedFieldsOf, rowOf, searchEntryOf, searchStoreOf, storedOf } from './indexeddb-schema.js';

/** One collection's object store, read from an in-memory copy while it is small and through its indexes once large. */
export interface Store {
  collection: CollectionDefinition;
  /** The copy when this collection is read from one (at once once loaded); undefined when it is read through indexes. */
  copy(): Eventually<Map<string, Row> | undefined>;
  /** Reads through IndexedDB's indexes, as they are: inside a transaction of Berth's (it holds the write lock). */
  indexed: IndexReads;
  /** Reads through IndexedDB's indexes as committed: outside one (a running or dead one's steps as they were before). */
  committed: IndexReads;
  /** The copy's rows in the orders lists asked for; a new, empty one whenever the copy changes. */
  inOrder(): RowsInOrder;
  /** While the copy is loaded, an object that is another one after every change; undefined otherwise. */
  version(): object | undefined;
  /**
   * Writes a record (and its text index entry) or deletes one, in one
   * IndexedDB transaction; with a change, appends it to the log in the same
   * one, and answers its seq. `step` (of a transaction): journals how to
   * take it back (the record as stored before, read in the same one, and
   * the change's seq) in the same one too, and leaves the copies (here and
   * in other contexts) as they are until it ends (`ended`); outside a
   * transaction, it makes sure no step of one that never ended is left
   * (`noStepsLeft`, which throws).
   */
  write(
    change: { add?: Row; put?: Row; removed?: string },
    logged?: ChangeEntry,
    step?: boolean,
  ): Promise<number | undefined>;
  /** Its records changed other than by `write` (a transaction taken back): the copy goes, here and in other contexts. */
  changed(): void;
  /** Another context changed its records, and this one heard it before that context's word: the copy goes, here. */
  stale(): void;
  /** A transaction's steps wrote these records (null: deleted) and it ended: the copies learn them. */
  ended(written: ReadonlyMap<string, Row | null>): void;
  /** Throws as `noStepsLeft` does, in an IndexedDB transaction of its own: for a write that found nothing to write. */
  noStepsLeft(): Promise<void>;
}

/** Puts records written (null: deleted) over `rows`, and answers it. */
function putOver(rows: Map<string, Row>, written: ReadonlyMap<string, Row | null>): Map<string, Row> {
  for (const [id, row] of written) {
    if (row) rows.set(id, row);
    else rows.delete(id);
  }
  return rows;
}

/**
 * A collection of up to `copyUpTo` records is read from an in-memory copy,
 * loaded on first use (IndexedDB is counted first) and kept current by this
 * context's writes; a larger one is read through IndexedDB's indexes, and
 * one that grows past `copyUpTo` drops its copy. Other contexts on the same
 * database (the page, its Service Worker, other tabs) are told over a
 * BroadcastChannel that a write happened: they drop their copy and decide
 * again. Callers get copies, never the cached records themselves.
 */
export function createStore(
  database: () => Dexie,
  collection: CollectionDefinition,
  channelName: string,
  copyUpTo: number,
  journal: Journal,
): Store {
  const name = collection.name;
  const fields = Object.keys(collection.fields);
  const keyed = keyedFieldsOf(collection);
  const searchable = collection.searchable;
  let mode: 'undecided' | 'copy' | 'indexed' = copyUpTo <= 0 ? 'indexed' : 'undecided';
  let cache: Map<string, Row> | undefined;
  let loading: Promise<Map<string, Row> | undefined> | undefined;
  let inOrder: RowsInOrder = new Map();
  /** Another object with every change of the copy: what `readsVersion` answers. */
  let version: object = {};
  /** Another number whenever the copy is dropped: a load that started before does not keep what it read. */
  let generation = 0;
  const drop = (): void => {
    mode = copyUpTo <= 0 ? 'indexed' : 'undecided';
    cache = undefined;
    loading = undefined;
    generation++;
    inOrder = new Map();
    version = {};
  };
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(channelName) : undefined;
  channel?.addEventListener('message', drop);
  /** IndexedDB's own connection, opened again when another context's new version closed it. */
  const opened = async (): Promise<IDBDatabase> => {
    const db = database();
    if (!db.isOpen()) await db.open();
    return db.backendDB();
  };
  /** Loads the copy as committed: the records a transaction not yet ended wrote, as they were before. */
  const load = async (): Promise<Map<string, Row> | undefined> => {
    const started = generation;
    const { read, pending } = journal.committedReader(await opened(), [name], name);
    if (copyUpTo !== Infinity && (await read((t) => t.objectStore(name).count())) > copyUpTo) {
      if (started === generation) mode = 'indexed';
      return undefined;
    }
    const records = (await read((t) => t.objectStore(name).getAll())) as Array<Record<string, unknown>>;
    const rows = new Map(records.map((record) => [record.id as string, rowOf(fields, record)]));
    for (const [id, { was }] of await pending()) {
      if (was) rows.set(id, rowOf(fields, was));
      else rows.delete(id);
    }
    if (started === generation) [mode, cache] = ['copy', rows];
    return rows;
  };
  /** The copy changed (here, or in IndexedDB for other contexts): kept orders and answers go, other contexts' copies too. */
  const moved = (): void => {
    if (cache && cache.size > copyUpTo) [mode, cache] = ['indexed', undefined];
    inOrder = new Map();
    version = {};
    channel?.postMessage('changed');
  };
  return {
    collection,
    indexed: indexReads(opened, collection),
    committed: indexReads(opened, collection, journal),
    copy() {
      if (mode === 'indexed') return undefined;
      if (cache) return cache;
      return (loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      }));
    },
    inOrder: () => inOrder,
    version: () => (cache ? version : undefined),
    changed() {
      drop();
      channel?.postMessage('changed');
    },
    stale: drop,
    ended(written) {
      if (cache) putOver(cache, written);
      moved();
    },
    noStepsLeft() {
      const db = database();
      return db.transaction('r', journalStoreNames, () => journal.noStepsLeft(db));
    },
    async write({ add, put, removed }, logged, step = false) {
      const db = database();
      const table = db.table(name);
      const search = searchable.length ? db.table(searchStoreOf(name)) : undefined;
      const row = add ?? put;
      let seq: number | undefined;
      const scope = [
        table,
        ...(search ? [search] : []),
        ...(logged ? [changeLogStore] : []),
        ...journalStoreNames,
      ];
      await db.transaction('rw', scope, async () => {
        // Asked beside the write (one round trip), awaited at the end. In a step of a transaction: how to take it
        // back, the record (and its text index entry) read before the write in the same IndexedDB transaction.
        // Outside one: whether a transaction that never ended left steps (then all is given up). A step holds the
        // lock its transaction holds: nothing of another's is left then.
        const id = (row?.id ?? removed)!;
        const aside = step
          ? Promise.all([table.get(id), search?.get(id)]).then(([record, entry]) =>
              journal.note(db, {
                collection: name,
                id,
                before: (record as Record<string, unknown> | undefined) ?? null,
                ...(search
                  ? { search: { store: search.name, before: (entry as Record<string, unknown>) ?? null } }
                  : {}),
              }),
            )
          : journal.noStepsLeft(db);
        aside.catch(() => {}); // awaited below
        try {
          if (row) {
            await (add ? table.add(storedOf(keyed, row)) : table.put(storedOf(keyed, row)));
            await search?.put(searchEntryOf(searchable, row));
          }
          if (removed !== undefined) {
            await table.delete(removed);
            await search?.delete(removed);
          }
          // A step of a transaction: its change is taken back with it.
          if (logged) seq = await addChange(db, logged, step ? journal : undefined);
        } catch (error) {
          // Asked first, so settled by now: steps left explain the failure (a unique value a dead transaction took).
          if (!step) await aside;
          throw error;
        }
        await aside;
      });
      // A step is not committed yet: the copies learn it when its transaction ends.
      if (step) return seq;
      if (cache) {
        if (row) cache.set(row.id, row);
        if (removed !== undefined) cache.delete(removed);
      }
      moved();
      return seq;
    },
  };
}

/**
 * A transaction's own state, shared by its repositories: whether a step of
 * it journaled anything yet, and each store's records its steps wrote
 * (null: deleted), which its reads of a copy see over the copy, and the
 * copies learn when it ends.
 */
export interface TransactionSteps {
  wrote: boolean;
  written: Map<Store, Map<string, Row | null>>;
}

/**
 * Reads and writes on one store; in a `transaction`, each write is a step of it, journaled to be taken back.
 * Outside one, `lock` runs a write again once the steps a transaction left are taken back.
 */
export function repositoryOver(
  store: Store,
  lock: <R>(work: () => Promise<R>) => Promise<R>,
  transaction: TransactionSteps | undefined,
  failed: (error: unknown) => never,
): DriverRepository {
  const { collection } = store;
  const fields = Object.keys(collection.fields);
  const guard = async <R>(work: () => Promise<R>): Promise<R> => {
    try {
      return await work();
    } catch (error) {
      return failed(error);
    }
  };
  /** This transaction's writes to the store (over its copy, which holds what is committed). */
  const own = (): Map<string, Row | null> | undefined => transaction?.written.get(store);
  /**
   * A read of the copy (at once when it is loaded), with this transaction's
   * own writes over it (`mine`); or through the indexes: as they are inside
   * a transaction, which holds the write lock, as committed outside one.
   */
  const read = <R>(
    fromCopy: (rows: Map<string, Row>, mine: Map<string, Row | null> | undefined) => R,
    fromIndexes: (indexed: IndexReads) => Promise<R>,
  ): Eventually<R> => {
    const indexed = transaction ? store.indexed : store.committed;
    try {
      const copy = store.copy();
      if (isThenable(copy))
        return copy.then((rows) => (rows ? fromCopy(rows, own()) : fromIndexes(indexed))).catch(failed);
      return copy ? fromCopy(copy, own()) : fromIndexes(indexed).catch(failed);
    } catch (error) {
      return failed(error);
    }
  };
  /** The copy's rows with this transaction's writes over them. */
  const withMine = (rows: Map<string, Row>, mine: Map<string, Row | null>): Map<string, Row> =>
    putOver(new Map(rows), mine);
  /**
   * The record a write starts from, under the write lock: the copy's (with this transaction's writes over it), or
   * as it is (a dead transaction's step met there is found by the write, which runs again once it is taken back).
   */
  const current = async (id: string): Promise<Row | undefined> => {
    const copy = await store.copy();
    if (!copy) return store.indexed.get(id);
    const mine = own();
    return (mine?.has(id) ? mine.get(id) : copy.get(id)) ?? undefined;
  };
  /** A step of this transaction wrote a record (null: deleted it): its reads see it, the copies once it ends. */
  const wrote = (id: string, row: Row | null): void => {
    let mine = own();
    if (!mine) transaction!.written.set(store, (mine = new Map()));
    mine.set(id, row);
  };
  /** Whether a write is a step of a transaction (journaled); noted as written when it is. */
  const isStep = (): boolean => {
    if (!transaction) return false;
    transaction.wrote = true;
    return true;
  };
  /** A new record's row: its keys in the SQL drivers' column order. */
  const rowOfNew = (given: Row): Row => {
    const row = { id: given.id } as Row;
    for (const field of fields) row[field] = given[field] ?? null;
    return Object.assign(row, { createdAt: given.createdAt, updatedAt: given.updatedAt });
  };
  const patched = (existing: Row, patch: Record<string, unknown>): Row => {
    const row: Row = { ...existing };
    for (const field of [...fields, 'updatedAt']) if (field in patch) row[field] = patch[field] ?? null;
    return row;
  };
  const changeOf = (action: ChangeEntry['action'], row: Row, meta: WriteMeta): ChangeEntry => ({
    collection: collection.name,
    id: row.id,
    action,
    record: collection.present({ ...row } as never),
    ...meta,
  });
  /** No record to write: so it is, unless a transaction that never ended took it (then it is done again, once it is back). */
  const notFound = async (): Promise<undefined> => {
    if (!transaction) await store.noStepsLeft();
    return undefined;
  };
  /**
   * The three writes, each under the lock, each answering the record as
   * stored (before a delete). With `meta` the write appends its change in
   * the same IndexedDB transaction (both or neither, also when the page is
   * closed in the middle) and answers its seq. Inside a transaction of
   * Berth's, it journals how to take both back, in that same one too.
   */
  const insertOne = (given: Row, meta?: WriteMeta) =>
    guard(() =>
      lock(async () => {
        const row = rowOfNew(given);
        const step = isStep();
        const seq = await store.write({ add: row }, meta && changeOf('created', row, meta), step);
        if (step) wrote(row.id, row);
        return { record: { ...row }, seq: seq! };
      }),
    );
  const updateOne = (id: string, patch: Record<string, unknown>, meta?: WriteMeta) =>
    guard(() =>
      lock(async () => {
        const existing = await current(id);
        if (!existing) return notFound();
        const row = patched(existing, patch);
        const step = isStep();
        const seq = await store.write({ put: row }, meta && changeOf('updated', row, meta), step);
        if (step) wrote(id, row);
        return { record: { ...row }, seq: seq! };
      }),
    );
  const deleteOne = (id: string, meta?: WriteMeta) =>
    guard(() =>
      lock(async () => {
        const existing = await current(id);
        if (!existing) return notFound();
        const step = isStep();
        const seq = await store.write({ removed: id }, meta && changeOf('deleted', existing, meta), step);
        if (step) wrote(id, null);
        return { record: { ...existing }, seq: seq! };
      }),
    );
  const logged: LoggedWrites = { insert: insertOne, update: updateOne, delete: deleteOne };
  return {
    logged,
    list: (query) =>
      read(
        (rows, mine) => {
          // Orders kept for the copy are not this transaction's: over its writes, the rows are sorted again.
          const found = mine
            ? listRows(collection, withMine(rows, mine).values(), query)
            : listRows(collection, rows.values(), query, store.inOrder());
          return { ...found, items: found.items.map((row) => ({ ...row })) };
        },
        (indexed) => indexed.list(query),
      ),
    get: (id) =>
      read(
        (rows, mine) => {
          const row = mine?.has(id) ? mine.get(id) : rows.get(id);
          return row ? { ...row } : undefined;
        },
        (indexed) => indexed.get(id),
      ),
    // Inside a transaction, its reads are its own: none is kept.
    readsVersion: () => (transaction ? undefined : store.version()),
    count: (field, value) =>
      guard(async () =>
        read(
          (rows, mine) => {
            let count = 0;
            for (const row of (mine ? withMine(rows, mine) : rows).values())
              if (row[field] === value) count++;
            return count;
          },
          (indexed) => indexed.count(field, value),
        ),
      ),
    insert: async (given) => (await insertOne(given)).record,
    update: async (id, patch) => (await updateOne(id, patch))?.record,
    delete: async (id) => (await deleteOne(id)) !== undefined,
  };
}
