/** The change log in IndexedDB: a store of changes keyed by an auto-incremented seq, and its floor. */
import type { Dexie } from 'dexie';
import {
  collectionFloor,
  collectionFloorsStale,
  floorRows,
  type ChangeEntry,
  type ChangeLogDriver,
  type FloorMarks,
  type LoggedChange,
} from '../core/internal.js';
import { journalStoreNames, stepsLeft, type Journal } from './indexeddb-journal.js';

/**
 * The stores of the log, as Dexie declares them. The floor's store keeps
 * the floor's rows (`floorRows`, by their ids) and each collection's floor
 * (id `collection:` and its name): its last change that went.
 */
export const changeLogStores = { berth_changes: '++seq, at', berth_change_floor: 'id' } as const;
/** The store of the changes themselves. */
export const changeLogStore = 'berth_changes' satisfies keyof typeof changeLogStores;

interface FloorRow {
  id: number | string;
  floor: number;
}
const floorId = (collection: string): string => `collection:${collection}`;

type Lock = <R>(work: () => Promise<R>) => Promise<R>;

/**
 * Appends a change inside a transaction (which holds the write lock), and
 * journals how to take it back, in one IndexedDB transaction. Writers take
 * the lock one at a time, across the page and its Service Worker, so seqs
 * are drawn in the order transactions end; a change taken back leaves a
 * gap, never a step back (IndexedDB's key generator never goes down).
 */
export function appendChange(database: () => Dexie, entry: ChangeEntry, journal: Journal): Promise<number> {
  const db = database();
  return db.transaction('rw', [changeLogStore, ...journalStoreNames], () => addChange(db, entry, journal));
}

/**
 * Adds a change to the log inside an IndexedDB transaction that lists its
 * store, and answers its seq; with `journal` (a step of a transaction of
 * Berth's, whose store the transaction lists too), notes how to take it back.
 */
export async function addChange(db: Dexie, entry: ChangeEntry, journal?: Journal): Promise<number> {
  const seq = (await db.table(changeLogStore).add({ ...entry, at: new Date().toISOString() })) as number;
  if (journal) await journal.note(db, { change: seq });
  return seq;
}

/**
 * Reads, bounds and trims the log; each under the write lock, so no
 * transaction's change is seen before it ends. `readLock` is the lock for
 * `read` (the busiest): it runs the read again once the steps of a
 * transaction that never ended are taken back, which the read looks for in
 * its own IndexedDB transaction (`Journal.askIn`).
 */
export function indexedDbChangeLog(
  database: () => Dexie,
  lock: Lock,
  readLock: Lock,
  journal: Journal,
): ChangeLogDriver {
  const changes = () => database().table<LoggedChange, number>('berth_changes');
  const floors = () => database().table<FloorRow, number | string>('berth_change_floor');
  const floorOf = async (id: number | string = floorRows.log): Promise<number | undefined> =>
    (await floors().get(id))?.floor;
  const marksOf = async (collection?: string): Promise<FloorMarks> => {
    const [floor, collectionsFrom, keptAt, own] = await Promise.all([
      floorOf(),
      floorOf(floorRows.collectionsFrom),
      floorOf(floorRows.keptAt),
      collection === undefined ? undefined : floorOf(floorId(collection)),
    ]);
    return { floor: floor ?? 0, collectionsFrom, keptAt, own };
  };
  const headOf = async (): Promise<number> =>
    Math.max((await changes().orderBy('seq').last())?.seq ?? 0, (await floorOf()) ?? 0);
  /**
   * Drops the changes up to `upTo` and raises the floor to it, and each
   * collection's to its last change that goes, in one transaction; under
   * the lock.
   */
  const trimTo = (upTo: number): Promise<number> =>
    database().transaction('rw', ['berth_changes', 'berth_change_floor'], async () => {
      const marks = await marksOf();
      const { floor } = marks;
      const cut = Math.min(upTo, await headOf());
      if (cut <= floor) return 0;
      const going = () => changes().where('seq').belowOrEqual(cut);
      const lastOf = new Map<string, number>();
      await going().each((change) => lastOf.set(change.collection, change.seq));
      // What went before is the log's: the collections' floors are kept from here.
      if (collectionFloorsStale(marks)) await floors().put({ id: floorRows.collectionsFrom, floor });
      await floors().bulkPut(
        [...lastOf].map(([collection, seq]) => ({ id: floorId(collection), floor: seq })),
      );
      const dropped = await going().delete();
      await floors().bulkPut([
        { id: floorRows.log, floor: cut },
        { id: floorRows.keptAt, floor: cut },
      ]);
      return dropped;
    });
  return {
    collectionFloors: true,
    read: (after, limit) =>
      readLock(async () => {
        const db = database();
        // Closed when another context opened a new version of the database: Dexie opens it again.
        if (!db.isOpen()) await db.open();
        // IndexedDB's own transaction, the check and the read asked together: one round trip, as a plain read.
        return new Promise<LoggedChange[]>((resolve, reject) => {
          const transaction = db.backendDB().transaction([changeLogStore, ...journalStoreNames], 'readonly');
          const left = journal.askIn(transaction);
          const found = transaction
            .objectStore(changeLogStore)
            .getAll(IDBKeyRange.lowerBound(after, true), limit);
          transaction.oncomplete = () =>
            left() ? reject(stepsLeft) : resolve(found.result as LoggedChange[]);
          transaction.onerror = () => reject(transaction.error);
          transaction.onabort = () => reject(transaction.error);
        });
      }),
    readBefore: (before, limit, collection) =>
      lock(() => {
        const newest = changes().where('seq').below(before).reverse();
        return (
          collection === undefined ? newest : newest.filter((change) => change.collection === collection)
        )
          .limit(limit)
          .toArray();
      }),
    bounds: (collection) =>
      lock(async () => {
        const marks = await marksOf(collection);
        const head = await headOf();
        return { head, floor: collection === undefined ? marks.floor : collectionFloor(marks) };
      }),
    trim: (upTo) => lock(() => trimTo(upTo)),
    cut: (collection) =>
      lock(() =>
        // One IndexedDB transaction: the cut is there whole, or not at all.
        database().transaction('rw', ['berth_changes', 'berth_change_floor'], async () => {
          // It only draws the seq the cut stands on (the key generator never goes down), then goes with the rest.
          const seq = (await changes().add({
            collection,
            id: '',
            action: 'loaded',
            record: {},
            actor: null,
            mutationId: null,
            at: new Date().toISOString(),
          } as unknown as LoggedChange)) as number;
          await trimTo(seq);
          return seq;
        }),
      ),
    seqAt: (time) => lock(async () => (await changes().where('at').belowOrEqual(time).last())?.seq ?? 0),
  };
}
