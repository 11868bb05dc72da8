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
 * lock, so such a transaction's changes are never delivered.
 */
import type { Dexie } from 'dexie';

/** The journal's store, as Dexie declares it: its entries in the order the steps were written. */
export const journalStores = { berth_undo: '++n' } as const;
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

/** Writes a step's entry; inside the step's own IndexedDB transaction (which lists `journalStoreNames`). */
export function journal(db: Dexie, entry: JournalEntry): Promise<unknown> {
  return db.table(journalStore).add(entry);
}

/** The transaction ended: its journal goes (the moment it is whole). */
export function clearJournal(db: Dexie): Promise<void> {
  return db.table(journalStore).clear();
}

/** Whether the journal holds steps: a transaction that failed, or never ended. */
export async function journalLeft(db: Dexie): Promise<boolean> {
  return (await db.table(journalStore).count()) > 0;
}

/** What `noStepsLeft` (or a check of one's own) throws: the journal held steps, so the IndexedDB transaction it ran in is given up. */
export const stepsLeft = new Error('the journal holds steps of a transaction that did not end');

/**
 * The check the busiest reads and writes make inside their own IndexedDB
 * transaction (which lists `journalStoreNames`), instead of one of their
 * own: throws, giving that transaction up, when the journal holds steps.
 */
export async function noStepsLeft(db: Dexie): Promise<void> {
  if ((await db.table(journalStore).count()) > 0) throw stepsLeft;
}

/**
 * Runs `attempt` (an IndexedDB transaction that calls `noStepsLeft` first),
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

/**
 * Takes back every step the journal holds, newest first, and clears it, in
 * one IndexedDB transaction (all or nothing: a page closed in the middle
 * leaves the journal for the next one); under the write lock. Answers the
 * collections whose records it put back (their in-memory copies are stale).
 * `changeStore` is the change log's store.
 */
export async function rollBack(db: Dexie, changeStore: string): Promise<string[]> {
  const entries = (await db.table(journalStore).toArray()) as JournalEntry[];
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
    for (const entry of entries.reverse()) {
      if ('change' in entry) {
        await db.table(changeStore).delete(entry.change);
        continue;
      }
      const { collection, id, before, search } = entry;
      await (before ? db.table(collection).put(before) : db.table(collection).delete(id));
      if (search)
        await (search.before ? db.table(search.store).put(search.before) : db.table(search.store).delete(id));
    }
    await db.table(journalStore).clear();
  });
  return [...collections];
}
