/** The change log in IndexedDB: a store of changes keyed by an auto-incremented seq, and its floor. */
import type { Dexie } from 'dexie';
import type { ChangeEntry, ChangeLogDriver, LoggedChange } from '../core/internal.js';

/**
 * The stores of the log, as Dexie declares them. The floor's store keeps
 * the log's floor (id 1), where the collections' floors are kept from
 * (id 2: the log's floor then), the log's floor as the last trim that kept
 * them left it (id 3: where it is not id 1's, a tab of an older Berth
 * trimmed without them, and every collection's floor is the log's until the
 * next trim starts them again), and each collection's (id `collection:`
 * and its name): its last change that went.
 */
export const changeLogStores = { berth_changes: '++seq, at', berth_change_floor: 'id' } as const;

interface FloorRow {
  id: number | string;
  floor: number;
}
const collectionsFrom = 2;
const keptAt = 3;
const floorId = (collection: string): string => `collection:${collection}`;

type Lock = <R>(work: () => Promise<R>) => Promise<R>;

/**
 * Appends a change inside a transaction (which holds the write lock), and
 * says how to undo it if the transaction fails. Writers take the lock one
 * at a time, across the page and its Service Worker, so seqs are drawn in
 * the order transactions end; an undone change leaves a gap, never a step
 * back (IndexedDB's key generator never goes down).
 */
export async function appendChange(
  database: () => Dexie,
  entry: ChangeEntry,
  undo: Array<() => Promise<unknown>>,
): Promise<number> {
  const table = database().table('berth_changes');
  const seq = (await table.add({ ...entry, at: new Date().toISOString() })) as number;
  undo.push(() => table.delete(seq));
  return seq;
}

/** Reads, bounds and trims the log; each under the write lock, so no transaction's change is seen before it ends. */
export function indexedDbChangeLog(database: () => Dexie, lock: Lock): ChangeLogDriver {
  const changes = () => database().table<LoggedChange, number>('berth_changes');
  const floors = () => database().table<FloorRow, number | string>('berth_change_floor');
  const floorOf = async (id: number | string = 1): Promise<number | undefined> =>
    (await floors().get(id))?.floor;
  const headOf = async (): Promise<number> =>
    Math.max((await changes().orderBy('seq').last())?.seq ?? 0, (await floorOf()) ?? 0);
  /**
   * Drops the changes up to `upTo` and raises the floor to it, and each
   * collection's to its last change that goes, in one transaction; under
   * the lock.
   */
  const trimTo = (upTo: number): Promise<number> =>
    database().transaction('rw', ['berth_changes', 'berth_change_floor'], async () => {
      const floor = (await floorOf()) ?? 0;
      const cut = Math.min(upTo, await headOf());
      if (cut <= floor) return 0;
      const going = () => changes().where('seq').belowOrEqual(cut);
      const lastOf = new Map<string, number>();
      await going().each((change) => lastOf.set(change.collection, change.seq));
      // The collections' floors are kept from here when no trim kept them up to the floor: what went before is the log's.
      if ((await floorOf(keptAt)) !== floor) await floors().put({ id: collectionsFrom, floor });
      await floors().bulkPut(
        [...lastOf].map(([collection, seq]) => ({ id: floorId(collection), floor: seq })),
      );
      const dropped = await going().delete();
      await floors().bulkPut([
        { id: 1, floor: cut },
        { id: keptAt, floor: cut },
      ]);
      return dropped;
    });
  return {
    collectionFloors: true,
    read: (after, limit) => lock(() => changes().where('seq').above(after).limit(limit).toArray()),
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
        const floor = (await floorOf()) ?? 0;
        const head = await headOf();
        const since = collection === undefined ? undefined : await floorOf(collectionsFrom);
        if (since === undefined || (await floorOf(keptAt)) !== floor) return { head, floor };
        // A collection's floor: its last change gone, or where its floors are kept from (the log's before).
        return { head, floor: Math.min(floor, Math.max(since, (await floorOf(floorId(collection!))) ?? 0)) };
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
