/**
 * A transaction's undo journal in IndexedDB. IndexedDB ends its own
 * transactions at the first await of anything else, so a transaction of
 * Berth's (a write with hooks, `storage.transaction`) is written step by
 * step. Each step writes, in the same IndexedDB transaction, what takes it
 * back: the record as it was (none for a create), or the seq of the change
 * it appended. The transaction ends by clearing the journal; a failure takes
 * the steps back from it, newest first.
 *
 * The write lock is held from a transaction's first step to its last, and a
 * context's locks are released when it ends: whoever takes the lock and
 * finds the journal not empty holds the steps of a transaction that will
 * never end (its page was closed or killed in the middle), and takes them
 * back before anything else. A change in the log is read only under the
 * lock, so such a transaction's changes are never delivered; a read of
 * records outside a transaction answers them as they were before its steps
 * (`Journal.committedReader`).
 */
import type { Collection, Dexie } from 'dexie';
import { readerOf, type Reader } from './indexeddb-requests.js';

/** The journal's store, as Dexie declares it: its entries in the order the steps were written, by context, by record. */
export const journalStores = { berth_undo: '++n, owner, [collection+id]' } as const;
/** The journal's index of the entries of records (a change's entries have no collection). */
const byRecord = '[collection+id]';
const journalStore = 'berth_undo' satisfies keyof typeof journalStores;

/** How one step is taken back: a record put back as it was (deleted when it was not there), or a change dropped. */
export type JournalEntry =
  | {
      collection: string;
      id: string;
      /** The record as stored before the step; null when the step created it. */
      before: Record<string, unknown> | null;
      /** Its entry in the collection's text index, when the collection has one. */
      search?: { store: string; before: Record<string, unknown> | null };
    }
  | { change: number };

/** The stores a step writes its entry to, besides its own: added to its IndexedDB transaction. */
export const journalStoreNames = [journalStore];

/** What a check inside an IndexedDB transaction throws: the journal held steps, so that transaction is given up. */
export const stepsLeft = new Error('the journal holds steps of a transaction that did not end');

/** One context's view of the journal (see `createJournal`). */
export interface Journal {
  /**
   * Whether steps another context left are taken back: only where the write
   * lock is every context's (the Web Locks API). Without it (an insecure
   * origin), another context's steps may be those of a transaction still
   * running, and only this context's own are taken back.
   */
  readonly shared: boolean;
  /** Writes a step's entry, inside the step's own IndexedDB transaction (which lists `journalStoreNames`). */
  note(db: Dexie, entry: JournalEntry): Promise<unknown>;
  /** The transaction ended: its steps go (the moment it is whole). */
  clear(db: Dexie): Promise<unknown>;
  /** Whether steps are left to take back: a transaction that failed, or never ended. */
  left(db: Dexie): Promise<boolean>;
  /**
   * The check the busiest reads and writes make inside their own IndexedDB
   * transaction (which lists `journalStoreNames`), instead of one of their
   * own: throws `stepsLeft`, giving that transaction up, when steps are left.
   */
  noStepsLeft(db: Dexie): Promise<void>;
  /**
   * The same check asked in IndexedDB's own transaction (which lists
   * `journalStoreNames`), beside the caller's requests: answers, once that
   * transaction completes, whether steps are left.
   */
  askIn(transaction: IDBTransaction): () => boolean;
  /**
   * A reader (`readerOf`) on `stores` (of `collection`) that also asks, in
   * each IndexedDB transaction it opens, what the journal holds of
   * `collection` (of its record `id` only, given one), so that a read
   * outside a transaction of Berth's answers what is committed, never a
   * running or dead one's steps. `pending()`, once the reads are done,
   * answers those records (`Pending`; a later IndexedDB transaction's
   * answer wins). Empty but while a transaction is running or was left in
   * the middle: each step and its entry are one IndexedDB transaction, so a
   * read that sees a step sees its entry. Where the journal is not shared
   * (no Web Locks API), only this context's own entries count: another's
   * may be those of a dead transaction, which no one takes back there.
   */
  committedReader(
    database: IDBDatabase,
    stores: readonly string[],
    collection: string,
    id?: string,
  ): { read: Reader; pending(): Promise<Pending> };
  /**
   * Takes back the steps left, newest first, and drops them, in one
   * IndexedDB transaction (all or nothing: a page closed in the middle
   * leaves them for the next one); under the write lock. Answers the
   * collections whose records it put back (their in-memory copies are stale).
   */
  rollBack(db: Dexie): Promise<string[]>;
}

/**
 * The journal as `owner` (this context) uses it; `changeStore` is the
 * change log's store, `shared` whether the write lock is every context's.
 */
export function createJournal(owner: string, changeStore: string, shared: boolean): Journal {
  /** The entries this context takes back: every one where the journal is shared, else its own. */
  const mine = (db: Dexie): Collection =>
    shared ? db.table(journalStore).toCollection() : db.table(journalStore).where('owner').equals(owner);
  const left = async (db: Dexie): Promise<boolean> => (await mine(db).count()) > 0;
  const applies = (entry: { owner?: string }): boolean => shared || entry.owner === owner;
  return {
    shared,
    committedReader(database, stores, collection, id) {
      const range =
        id === undefined
          ? IDBKeyRange.bound([collection], [collection, []])
          : IDBKeyRange.only([collection, id]);
      const asked: Array<Promise<Pending>> = [];
      const read = readerOf(database, [...stores, journalStore], (transaction) =>
        asked.push(pendingIn(transaction, collection, range, applies)),
      );
      const pending = async (): Promise<Pending> => {
        const all: Pending = new Map();
        for (const seen of await Promise.all(asked)) for (const [key, each] of seen) all.set(key, each);
        return all;
      };
      return { read, pending };
    },
    note: (db, entry) => db.table(journalStore).add({ ...entry, owner }),
    clear: (db) => (shared ? db.table(journalStore).clear() : mine(db).delete()),
    left,
    async noStepsLeft(db) {
      if (shared && (await left(db))) throw stepsLeft;
    },
    askIn(transaction) {
      if (!shared) return () => false;
      const counted = transaction.objectStore(journalStore).count();
      return () => counted.result > 0;
    },
    async rollBack(dexie) {
      // Closed when another context opened a new version of the database: Dexie opens it again.
      if (!dexie.isOpen()) await dexie.open();
      // Stores another context created since this one opened are not declared here: a Dexie of whatever exists.
      const declared = new Set(dexie.tables.map((table) => table.name));
      const missing = [...dexie.backendDB().objectStoreNames].some((store) => !declared.has(store));
      const db = missing ? new (dexie.constructor as typeof Dexie)(dexie.name) : dexie;
      try {
        if (missing) await db.open();
        return await rollBackIn(db);
      } finally {
        if (missing) db.close();
      }
    },
  };

  async function rollBackIn(db: Dexie): Promise<string[]> {
    const entries = (await mine(db).toArray()) as Array<JournalEntry & { n: number }>;
    if (!entries.length) return [];
    const collections = new Set<string>();
    const stores = new Set<string>([journalStore]);
    for (const entry of entries) {
      if ('change' in entry) stores.add(changeStore);
      else {
        collections.add(entry.collection);
        stores.add(entry.collection);
        if (entry.search) stores.add(entry.search.store);
      }
    }
    await db.transaction('rw', [...stores], async () => {
      for (const entry of entries.sort((a, b) => b.n - a.n)) {
        if ('change' in entry) await db.table(changeStore).delete(entry.change);
        else {
          const { collection, id, before, search } = entry;
          await (before ? db.table(collection).put(before) : db.table(collection).delete(id));
          if (search)
            await (search.before
              ? db.table(search.store).put(search.before)
              : db.table(search.store).delete(id));
        }
      }
      await db.table(journalStore).bulkDelete(entries.map(({ n }) => n));
    });
    return [...collections];
  }
}

/**
 * What a read outside a transaction learns of the records of one collection
 * that steps of a transaction not yet ended wrote: by id, each as stored
 * before the first of them (`was`; null: none), and as it is in the same
 * IndexedDB transaction (`now`; undefined: none).
 */
export type Pending = Map<
  string,
  { was: Record<string, unknown> | null; now: Record<string, unknown> | undefined }
>;

/** Asks, in `transaction`, which records of `collection` in `range` entries `applies` keeps hold, and each as it is there. */
function pendingIn(
  transaction: IDBTransaction,
  collection: string,
  range: IDBKeyRange,
  applies: (entry: { owner?: string }) => boolean,
): Promise<Pending> {
  return new Promise((resolve, reject) => {
    const journal = transaction.objectStore(journalStore);
    /** The entries of those records, read only when the journal holds some. */
    const readEntries = (): void => {
      const request = journal.index(byRecord).getAll(range);
      request.onerror = () => reject(request.error);
      request.onsuccess = () => {
        const pending: Pending = new Map();
        // By record, in the order the steps were written: a record's first entry holds it as it was before them.
        for (const entry of request.result as Array<
          Extract<JournalEntry, { id: string }> & { owner?: string }
        >)
          if (applies(entry) && !pending.has(entry.id))
            pending.set(entry.id, { was: entry.before, now: undefined });
        if (!pending.size) return resolve(pending);
        // Each as it is, asked in the same IndexedDB transaction (still active here): what the read's own counted.
        const records = transaction.objectStore(collection);
        let left = pending.size;
        for (const [id, each] of pending) {
          const got = records.get(id);
          got.onerror = () => reject(got.error);
          got.onsuccess = () => {
            each.now = got.result as Record<string, unknown> | undefined;
            if (--left === 0) resolve(pending);
          };
        }
      };
    };
    // Counted first (the cheaper request, and almost always 0); its entries read only when there are some.
    const counted = journal.count();
    counted.onerror = () => reject(counted.error);
    counted.onsuccess = () => (counted.result === 0 ? resolve(new Map()) : readEntries());
  });
}

/**
 * Runs `attempt` (an IndexedDB transaction that calls `noStepsLeft`),
 * under the write lock; when it found steps left, takes them back and runs
 * it again.
 */
export async function withNoStepsLeft<R>(
  attempt: () => Promise<R>,
  takeBack: () => Promise<void>,
): Promise<R> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (error !== stepsLeft && (error as { inner?: unknown })?.inner !== stepsLeft) throw error;
      await takeBack();
    }
  }
}
